//! `dtsim run FILE [--json]`.

use crate::CliError;
use clap::Args;
use sim::scenario;
use sim::train::{RunResult, simulate};
use sim::units::HumanBytes;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `dtsim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file (TOML).
    file: PathBuf,
    /// Print one JSON object per point on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Write the run's timeline as a Chrome trace-event file (Perfetto,
    /// chrome://tracing); the scenario must have a single point.
    #[arg(long, value_name = "OUT.json")]
    trace: Option<PathBuf>,
    /// GPUs to show in the trace (all GPUs run in lockstep; their tracks
    /// are identical).
    #[arg(long, default_value_t = 8)]
    trace_gpus: u32,
}

/// A result with the sweep values of its point, for JSON output.
#[derive(serde::Serialize)]
struct PointResult<'a> {
    #[serde(flatten)]
    result: &'a RunResult,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    sweep: &'a std::collections::BTreeMap<String, toml::Value>,
}

pub fn run(a: RunArgs) -> Result<(), CliError> {
    // every point is validated before any runs; then they are built and
    // printed one at a time, so a long sweep does not sit in memory
    let grid = scenario::open_file(&a.file).map_err(|e| CliError::Input(e.to_string()))?;
    grid.check().map_err(|e| CliError::Input(e.to_string()))?;
    let point = |i: usize| grid.point(i).map_err(|e| CliError::Input(e.to_string()));
    // a traced run's result is printed as is, not simulated a second time
    let mut traced: Option<RunResult> = None;
    if let Some(out) = &a.trace {
        if grid.len() != 1 {
            return Err(CliError::Input(format!(
                "{}: --trace needs a single-point scenario; this one's sweep has {} points",
                a.file.display(),
                grid.len()
            )));
        }
        if a.trace_gpus == 0 {
            return Err(CliError::Input("--trace-gpus must be at least 1".into()));
        }
        let p = point(0)?;
        let (result, timeline) = sim::train::simulate_traced(&p.config)
            .map_err(|e| CliError::Input(format!("{}: {e}", a.file.display())))?;
        // all or nothing: a truncated trace would only fail later, in the
        // viewer
        reports::write_via_temp(out, |tmp| {
            let file = std::fs::File::create(tmp).map_err(|e| e.to_string())?;
            reports::trace::write_chrome_trace(&p.config, &timeline, a.trace_gpus, file)
                .map_err(|e| e.to_string())
        })
        .map_err(|e| CliError::Input(format!("{}: cannot write the trace: {e}", out.display())))?;
        eprintln!("wrote {}", out.display());
        traced = Some(result);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let io = |e: std::io::Error| CliError::Other(format!("writing output: {e}"));
    if !a.json {
        writeln!(
            out,
            "{:<28} {:>5} {:<14} {:<10} {:<9} {:>10} {:>12} {:>6} {:>9} {:>9} {:>9} {:>11}",
            "scenario",
            "gpus",
            "network",
            "dense",
            "schedule",
            "iter (ms)",
            "samples/s",
            "eff",
            "compute",
            "comm",
            "exposed",
            "sent/GPU"
        )
        .map_err(io)?;
    }
    for i in 0..grid.len() {
        let p = point(i)?;
        let r = match traced.take() {
            Some(r) => r,
            None => simulate(&p.config)
                .map_err(|e| CliError::Input(format!("{}: {e}", a.file.display())))?,
        };
        if a.json {
            let line = serde_json::to_string(&PointResult {
                result: &r,
                sweep: &p.sweep,
            })
            .map_err(|e| CliError::Other(e.to_string()))?;
            writeln!(out, "{line}").map_err(io)?;
        } else {
            let label = if p.sweep.is_empty() {
                r.scenario.clone()
            } else {
                p.sweep
                    .iter()
                    .map(|(k, v)| format!("{}={}", k.rsplit('.').next().unwrap_or(k), v))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let dense = if r.dense == "allreduce" {
                format!("ar-{}", r.algo)
            } else {
                r.dense.to_string()
            };
            writeln!(
                out,
                "{:<28} {:>5} {:<14} {:<10} {:<9} {:>10.2} {:>12.1} {:>5.1}% {:>7.2}ms {:>7.2}ms {:>7.2}ms {:>11}",
                label,
                r.gpus,
                r.network,
                dense,
                r.schedule,
                r.iteration_time_s * 1e3,
                r.throughput,
                r.scaling_efficiency * 100.0,
                r.compute_s * 1e3,
                r.comm_s * 1e3,
                r.exposed_comm_s * 1e3,
                HumanBytes(r.bytes_sent_per_gpu).to_string()
            )
            .map_err(io)?;
        }
    }
    Ok(())
}
