//! `dtsim`: the command line. It parses arguments, calls the crates and
//! prints; everything it prints comes from the `sim` crate's models.
//!
//! Exit codes ([`error`]): 0 success, 2 bad input (a message says what and
//! where), 1 anything else; a closed standard output ends quietly with 0.
//! `--json` output goes to stdout alone; human messages go to stderr.
//! A closed standard error loses the messages, and the command goes on
//! (its files are written, its exit code is its own).

/// `eprintln!` that does not panic where standard error is closed (a
/// pipe whose reader has left: a review found `calibrate training 2>&1 |
/// head -1` exit 101, sometimes before its profile was written).
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` as [`note!`] is `eprintln!`.
macro_rules! note_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod cmd_advise;
mod cmd_calibrate;
mod cmd_collective;
mod cmd_plot;
mod cmd_report;
mod cmd_run;
mod cmd_sweep;
mod cmd_validate;
mod error;

pub use error::CliError;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use sim::names::Named;
use std::process::ExitCode;

/// Predicts how fast a distributed deep-learning training job runs on a
/// GPU cluster, and why.
#[derive(Debug, Parser)]
#[command(name = "dtsim", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate one scenario file (or every point of its sweep).
    Run(cmd_run::RunArgs),
    /// Evaluate a scenario's sweep grid in parallel into a table (CSV or Parquet).
    Sweep(cmd_sweep::SweepArgs),
    /// Write a Markdown report of a sweep (with its plots), or merge shard tables.
    Report(cmd_report::ReportArgs),
    /// Plot a results table (line, grouped bars, stacked breakdown) or a timeline.
    Plot(cmd_plot::PlotArgs),
    /// Time one collective operation on a cluster.
    Collective(cmd_collective::CollectiveArgs),
    /// Rank every way to synchronise a scenario's model on its cluster.
    Advise(cmd_advise::AdviseArgs),
    /// Fit cost models from logs or fresh measurements; write a profile.
    Calibrate(cmd_calibrate::CalibrateArgs),
    /// Fit on part of the measurements, predict the rest, report the error.
    Validate(cmd_validate::ValidateArgs),
}

/// A flag that takes one of a [`Named`] enum's names: its help lists them,
/// and clap refuses any other (exit code 2), so the names are spelled once,
/// in the library.
pub(crate) fn named<T: Named + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::names()).map(|s| T::from_name(&s).expect("a possible value"))
}

/// `--uncertainty [N]`'s value: a whole number of runs (the library checks
/// its range). Its N is optional, so a file written after the flag is
/// taken for N; the message then says where the file goes.
pub(crate) fn uncertainty_runs(s: &str) -> Result<u32, String> {
    s.parse::<u32>().map_err(|_| {
        if s.ends_with(".toml") || std::path::Path::new(s).exists() {
            format!(
                "`{s}` is a file, not a number of runs: --uncertainty's N is optional, so \
                 put the file before the flag (`FILE --uncertainty`) or give N with an \
                 equals sign (`--uncertainty=N`)"
            )
        } else {
            format!("`{s}` is not a whole number of runs (2 to 10000)")
        }
    })
}

/// `--eager-limit SIZE`'s value: bytes, with a unit if the user likes
/// ("64KiB"), at least 1 (leave the flag out where the limit is not known).
pub(crate) fn eager_limit(s: &str) -> Result<u64, String> {
    match sim::units::parse_bytes(s) {
        Ok(0) => Err(
            "an eager limit is at least 1 byte (leave --eager-limit out where it is not \
                      known)"
                .to_string(),
        ),
        Ok(b) => Ok(b),
        Err(e) => Err(e.to_string()),
    }
}

/// The help of `--eager-limit`, one text for the commands that fit.
pub(crate) const EAGER_LIMIT_HELP: &str = "The MPI transport's eager limit (\"64KiB\", Open MPI's \
    btl_tcp_eager_limit by default; btl_vader_eager_limit 4KiB on shared memory; UCX_RNDV_THRESH): \
    messages of at least this size go by rendezvous, and the size regimes of the fit are fitted \
    apart there, sizes whose messages go eagerly and those that go by rendezvous (a protocol with \
    a single fitted size takes the other's bandwidth and fits its latency); needs the regimes fit, \
    MPI's default [default: not known: the regimes break where the times say]";

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => cmd_run::run(a),
        Command::Sweep(a) => cmd_sweep::sweep(a),
        Command::Report(a) => cmd_report::run(a),
        Command::Plot(a) => cmd_plot::run(a),
        Command::Collective(a) => cmd_collective::run(a),
        Command::Advise(a) => cmd_advise::run(a),
        Command::Calibrate(a) => cmd_calibrate::run(a),
        Command::Validate(a) => cmd_validate::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}
