//! `dtsim run FILE [--json]`.

use crate::error::{CliError, print_line};
use clap::Args;
use sim::scenario;
use sim::train::{RunResult, simulate};
use sim::units::{Count, HumanBytes};
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
    let grid = scenario::open_file(&a.file)?;
    grid.check()?;
    let point = |i: usize| grid.point(i).map_err(CliError::from);
    // a traced run's result is printed as is, not simulated a second time
    let mut traced: Option<RunResult> = None;
    if let Some(out) = &a.trace {
        if grid.len() != 1 {
            return Err(CliError::Input(format!(
                "{}: --trace needs a single-point scenario; this one's sweep has {}",
                a.file.display(),
                Count(grid.len() as u64, "point")
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
        .map_err(|e| CliError::Other(format!("{}: cannot write the trace: {e}", out.display())))?;
        eprintln!("wrote {}", out.display());
        traced = Some(result);
    }
    // the header goes out with the first row, so that an error before it
    // prints no table at all
    let mut header = !a.json;
    // the label column is as wide as the widest label any point can have
    let width = grid
        .keys()
        .iter()
        .map(|k| {
            let values = grid.values(k).unwrap_or_default();
            values.iter().map(|v| part(k, v).len()).max().unwrap_or(0) + 1
        })
        .sum::<usize>()
        .max(28);
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
            print_line(line)?;
            continue;
        }
        if std::mem::take(&mut header) {
            print_line(format_args!(
                "{:<width$} {:>5} {:<14} {:<10} {:<9} {:>10} {:>12} {:>6} {:>9} {:>9} {:>9} {:>11}",
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
            ))?;
        }
        let label = if p.sweep.is_empty() {
            r.scenario.clone()
        } else {
            label(&p.sweep)
        };
        let dense = if r.dense == "allreduce" {
            format!("ar-{}", r.algo)
        } else {
            r.dense.to_string()
        };
        // + 0.0: a zero that came out negative (-0.0) prints as 0
        let ms = |s: f64| s * 1e3 + 0.0;
        print_line(format_args!(
            "{:<width$} {:>5} {:<14} {:<10} {:<9} {:>10.2} {:>12.1} {:>5.1}% {:>7.2}ms {:>7.2}ms {:>7.2}ms {:>11}",
            label,
            r.gpus,
            r.network,
            dense,
            r.schedule,
            ms(r.iteration_time_s),
            r.throughput,
            r.scaling_efficiency * 100.0,
            ms(r.compute_s),
            ms(r.comm_s),
            ms(r.exposed_comm_s),
            HumanBytes(r.bytes_sent_per_gpu).to_string()
        ))?;
    }
    Ok(())
}

/// One swept key's part of a point's label: the key's last component and
/// the value, strings without quotes (`network=eth-10g`).
fn part(key: &str, v: &toml::Value) -> String {
    let short = key.rsplit('.').next().unwrap_or(key);
    match v {
        toml::Value::String(s) => format!("{short}={s}"),
        v => format!("{short}={v}"),
    }
}

/// A point's label: its swept values, in key order.
fn label(sweep: &std::collections::BTreeMap<String, toml::Value>) -> String {
    sweep
        .iter()
        .map(|(k, v)| part(k, v))
        .collect::<Vec<_>>()
        .join(",")
}
