//! `dtsim sweep FILE --out RESULTS.(csv|parquet) [--jobs N] [--shard I/N]`.

use crate::error::CliError;
use clap::Args;
use reports::sweep::{self, Options, Shard, SweepError};
use sim::units::Count;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `dtsim sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The scenario file; its `[sweep]` grid is evaluated.
    file: PathBuf,
    /// The table to write: .csv or .parquet.
    #[arg(long)]
    out: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0, value_parser = jobs_in_range)]
    jobs: usize,
    /// Evaluate only shard I of N (points whose index is I−1 modulo N), for
    /// cluster job arrays; join the shards with `dtsim report merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Run each point N times over its seeds (2 to 10000; 100 if N is left
    /// out) and add the 5th, 50th and 95th percentiles of its iteration
    /// time and throughput as columns (`iteration_time_s_p5`, …,
    /// `throughput_p95`), which `dtsim plot` draws as error bars.
    #[arg(
        long,
        value_name = "N",
        num_args = 0..=1,
        default_missing_value = "100",
        value_parser = crate::uncertainty_runs
    )]
    uncertainty: Option<u32>,
}

/// Most worker threads `--jobs` takes: more than this only costs memory
/// and start-up time (each thread has its own stack).
const MAX_JOBS: usize = 1024;

/// Parses `--jobs`: 0 (all cores) to [`MAX_JOBS`].
pub(crate) fn jobs_in_range(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n <= MAX_JOBS => Ok(n),
        _ => Err(format!("expected 0 (all cores) to {MAX_JOBS} threads")),
    }
}

/// A sweep error by its kind (src/error.rs).
pub(crate) fn map(e: SweepError) -> CliError {
    e.into()
}

/// [`map`], naming the scenario file of a point that failed (a point the
/// simulator refuses, its simulated time out of range say, is a bad
/// scenario).
pub(crate) fn map_in(file: &std::path::Path) -> impl Fn(SweepError) -> CliError + '_ {
    move |e| match e {
        SweepError::Point { .. } => CliError::Input(format!("{}: {e}", file.display())),
        other => other.into(),
    }
}

/// Checks `--uncertainty N` as `dtsim run` does: bad input if refused.
pub(crate) fn check_uncertainty(n: Option<u32>) -> Result<(), CliError> {
    reports::run::check_uncertainty(n).map_err(CliError::Input)
}

pub fn sweep(a: SweepArgs) -> Result<(), CliError> {
    check_uncertainty(a.uncertainty)?;
    crate::error::output_file("--out", &a.out)?;
    let grid = sim::scenario::open_file(&a.file)?;
    let shard = a
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(map)?;
    let opts = Options {
        jobs: a.jobs,
        shard,
        progress: std::io::stderr().is_terminal(),
        // a test hook: small blocks exercise block boundaries on small grids
        block_points: std::env::var("DTSIM_SWEEP_TEST_BLOCK")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        uncertainty: a.uncertainty,
    };
    let t0 = std::time::Instant::now();
    let s = sweep::run(&grid, &a.out, &opts).map_err(map_in(&a.file))?;
    let secs = t0.elapsed().as_secs_f64();
    for w in &s.warnings {
        note!("warning: {w}");
    }
    if s.points == 0 {
        note!(
            "warning: shard {} of a grid of {} has no points; its table is empty",
            a.shard.as_deref().unwrap_or("1/1"),
            Count(grid.len() as u64, "point")
        );
    }
    if s.resumed > 0 {
        note!(
            "resumed {} from an interrupted run",
            Count(s.resumed as u64, "finished point")
        );
    }
    note!(
        "wrote {} ({}; {} computed in {:.2} s{})",
        a.out.display(),
        Count(s.points as u64, "point"),
        s.computed,
        secs,
        rate(s.computed, secs)
    );
    Ok(())
}

/// ", R points/s" to three significant digits (a slow sweep's 0.115, not
/// 0), or nothing where no point was computed.
fn rate(computed: usize, secs: f64) -> String {
    if computed == 0 {
        return String::new();
    }
    let r = computed as f64 / secs.max(1e-9);
    let decimals = if r >= 100.0 {
        0
    } else {
        (2 - r.log10().floor() as i32).clamp(0, 9) as usize
    };
    format!(", {r:.decimals$} points/s")
}

#[cfg(test)]
mod tests {
    #[test]
    fn rates_keep_three_digits() {
        assert_eq!(super::rate(3, 26.0), ", 0.115 points/s");
        assert_eq!(super::rate(1000, 1.0), ", 1000 points/s");
        assert_eq!(super::rate(50, 2.0), ", 25.0 points/s");
        assert_eq!(super::rate(0, 2.0), "");
    }
}
