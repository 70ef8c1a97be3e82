//! `dtsim validate`: fit on part of the measurements, predict the rest with
//! the simulator, print the error of every point.

use crate::CliError;
use crate::cmd_calibrate::read_logs;
use calibration::profile::Profile;
use calibration::validate::{LARGE_BYTES, Validation, validate_from_pingpong, validate_log};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `dtsim validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// nccl-tests logs.
    #[arg(long = "nccl-tests", num_args = 1..)]
    nccl_tests: Vec<PathBuf>,
    /// OSU micro-benchmark logs.
    #[arg(long, num_args = 1..)]
    osu: Vec<PathBuf>,
    /// A profile written by `dtsim calibrate collectives`: its ping-pong
    /// fit predicts its measured collectives.
    #[arg(long)]
    measurements: Option<PathBuf>,
    /// Ranks of collective logs that do not say (OSU collectives), 2 to
    /// 1048576.
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=sim::limits::MAX_GPUS as i64))]
    ranks: Option<u32>,
    /// One JSON object per collective on stdout.
    #[arg(long)]
    json: bool,
    /// Fail (exit 1) if any collective's median |error| over its held-out
    /// points exceeds this fraction (0.05 = 5%).
    #[arg(long)]
    max_median_error: Option<f64>,
    /// Fail (exit 1) if any collective's median |log2(predicted/measured)|
    /// exceeds this (1 = a factor of 2 either way).
    #[arg(long)]
    max_median_log2_ratio: Option<f64>,
}

fn input(m: impl Into<String>) -> CliError {
    CliError::Input(m.into())
}

pub fn run(a: ValidateArgs) -> Result<(), CliError> {
    if a.nccl_tests.is_empty() && a.osu.is_empty() && a.measurements.is_none() {
        return Err(input(
            "give --nccl-tests LOG, --osu LOG or --measurements PROFILE",
        ));
    }
    let mut results: Vec<Validation> = Vec::new();
    let mut logs = read_logs(&a.nccl_tests)?;
    logs.extend(read_logs(&a.osu)?);
    for (src, log) in &logs {
        results.push(validate_log(log, src, a.ranks).map_err(|e| input(format!("{src}: {e}")))?);
    }
    if let Some(p) = &a.measurements {
        let src = p.display().to_string();
        let text =
            std::fs::read_to_string(p).map_err(|e| input(format!("{src}: cannot read: {e}")))?;
        let prof = Profile::from_toml(&text).map_err(|e| input(format!("{src}: {e}")))?;
        let series = |op: &str| -> Vec<(u64, f64)> {
            prof.measurements
                .iter()
                .filter(|m| m.op == op)
                .map(|m| (m.size_bytes, m.time_s))
                .collect()
        };
        let ping = series("pingpong");
        if ping.len() < 2 {
            return Err(input(format!(
                "{src}: needs at least 2 pingpong measurements"
            )));
        }
        let mut ops: Vec<&str> = prof.measurements.iter().map(|m| m.op.as_str()).collect();
        ops.sort();
        ops.dedup();
        for op in ops.into_iter().filter(|o| *o != "pingpong") {
            let ranks = prof
                .measurements
                .iter()
                .find(|m| m.op == op)
                .map(|m| m.ranks)
                .unwrap_or(2);
            results.push(
                validate_from_pingpong(&ping, op, ranks, &series(op), &src)
                    .map_err(|e| input(format!("{src}: {e}")))?,
            );
        }
    }
    for (flag, v) in [
        ("--max-median-error", a.max_median_error),
        ("--max-median-log2-ratio", a.max_median_log2_ratio),
    ] {
        if let Some(m) = v
            && !(m.is_finite() && m >= 0.0)
        {
            return Err(input(format!("{flag} must be a non-negative number")));
        }
    }
    for v in &results {
        if a.json {
            println!(
                "{}",
                serde_json::to_string(v).map_err(|e| CliError::Other(e.to_string()))?
            );
        } else {
            print_table(v);
        }
    }
    if let Some(limit) = a.max_median_error {
        for v in &results {
            if v.median_abs_error.is_nan() || v.median_abs_error > limit {
                return Err(CliError::Other(format!(
                    "{} {}: median |error| {} exceeds --max-median-error {}",
                    v.source,
                    v.op,
                    pct(v.median_abs_error),
                    pct(limit)
                )));
            }
        }
        eprintln!("every median |error| is within {}", pct(limit));
    }
    if let Some(limit) = a.max_median_log2_ratio {
        for v in &results {
            if v.median_abs_log2_ratio.is_nan() || v.median_abs_log2_ratio > limit {
                return Err(CliError::Other(format!(
                    "{} {}: median |log2(predicted/measured)| {:.2} exceeds --max-median-log2-ratio {limit}",
                    v.source, v.op, v.median_abs_log2_ratio
                )));
            }
        }
        eprintln!("every median |log2(predicted/measured)| is within {limit}");
    }
    Ok(())
}

fn pct(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{:.1}%", x * 100.0)
    }
}

fn print_table(v: &Validation) {
    println!(
        "{} · {} {} on {} ranks · fitted on {} ({} regime{})",
        v.source,
        v.tool,
        v.op,
        v.ranks,
        v.fitted_on,
        v.regimes.len(),
        if v.regimes.len() == 1 { "" } else { "s" }
    );
    for r in &v.regimes {
        // R² is undefined below 3 points or when the times do not vary
        let r2 = if r.r2.is_finite() {
            format!("{:.4}", r.r2)
        } else {
            format!("n/a ({} points)", r.points)
        };
        let bw = match r.bandwidth() {
            Some(b) => format!("bandwidth {:.2} GB/s", b / 1e9),
            None => "latency only (time flat in size)".into(),
        };
        println!(
            "  regime {}..{} B: alpha {:.2} us, {bw}, R² {r2}",
            r.min_bytes,
            r.max_bytes,
            r.alpha_s * 1e6,
        );
    }
    println!(
        "  {:>14} {:>14} {:>14} {:>8}",
        "size (B)", "measured (us)", "predicted (us)", "error"
    );
    for p in &v.points {
        println!(
            "  {:>14} {:>14.2} {:>14.2} {:>8}",
            p.size_bytes,
            p.measured_s * 1e6,
            p.predicted_s * 1e6,
            pct(p.error)
        );
    }
    println!(
        "  held out: median |error| {} (max {}); at ≥ {} KiB: median {} (max {}); median |log2(pred/meas)| {:.2}\n",
        pct(v.median_abs_error),
        pct(v.max_abs_error),
        LARGE_BYTES / 1024,
        pct(v.median_abs_error_large),
        pct(v.max_abs_error_large),
        v.median_abs_log2_ratio
    );
}
