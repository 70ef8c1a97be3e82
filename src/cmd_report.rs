//! `dtsim report FILE|RESULTS -o DIR` (a Markdown report of a sweep) and
//! `dtsim report merge A B ... --out ALL.(csv|parquet)`.

use crate::CliError;
use crate::cmd_sweep::jobs_in_range;
use clap::{Args, Subcommand};
use reports::report::{Picture, ReportRequest, Steer, make};
use reports::sweep::{self, Options};
use sim::units::Count;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `dtsim report`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReportArgs {
    #[command(subcommand)]
    what: Option<ReportCommand>,
    /// A scenario file (.toml: its sweep is run first, into DIR/results.parquet)
    /// or a results table from `dtsim sweep` (.csv or .parquet).
    #[arg(required = true, value_name = "FILE|RESULTS")]
    input: Option<PathBuf>,
    /// The directory to write report.md, its plots and results.csv into.
    #[arg(short, long, required = true, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Worker threads for a scenario's sweep (default: all cores).
    #[arg(long, default_value_t = 0, value_parser = jobs_in_range)]
    jobs: usize,
    /// Column for the plots' x axis (default: GPUs when the node count is
    /// swept, else the most varied swept key).
    #[arg(long)]
    x: Option<String>,
    /// Swept keys whose combinations make the plots' series, comma-separated
    /// (default: the keys with the fewest values, up to 8 series); every
    /// other varying key is held at its first value, as each picture says.
    #[arg(long, value_delimiter = ',')]
    series: Vec<String>,
    /// Keep only the rows whose COL reads VALUE (repeatable), as `dtsim
    /// plot --where` does; stated on every picture.
    #[arg(long = "where", value_name = "COL=VALUE")]
    filters: Vec<String>,
    /// The pictures' format: png, or svg (vector, for a paper).
    #[arg(long, default_value = "png", value_name = "png|svg")]
    format: Picture,
    /// For a scenario: run each point N times over its seeds (100 if N is
    /// left out), as `dtsim sweep --uncertainty` does; the throughput plots
    /// get error bars (5th to 95th percentile).
    #[arg(
        long,
        value_name = "N",
        num_args = 0..=1,
        default_missing_value = "100",
        value_parser = crate::uncertainty_runs
    )]
    uncertainty: Option<u32>,
}

#[derive(Debug, Subcommand)]
enum ReportCommand {
    /// Join shard tables of one sweep, refusing overlapping or missing points.
    Merge {
        /// Shard tables (.csv or .parquet).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The merged table.
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn run(a: ReportArgs) -> Result<(), CliError> {
    if let Some(ReportCommand::Merge { inputs, out }) = a.what {
        crate::error::output_file("--out", &out)?;
        crate::error::not_an_input("--out", &out, &inputs, "the merged table")?;
        let s = sweep::merge(&inputs, &out)?;
        note!(
            "wrote {} ({})",
            out.display(),
            Count(s.points as u64, "point")
        );
        return Ok(());
    }
    crate::cmd_sweep::check_uncertainty(a.uncertainty)?;
    let input = a.input.as_ref().expect("clap requires it");
    // the report's own tables in its folder must not replace its input
    // (a review: `report DIR/results.csv -o DIR --where …` replaced the
    // 45-row table by the 15 rows it kept)
    if let Some(dir) = &a.output {
        for name in ["results.csv", "results.parquet"] {
            crate::error::not_an_input("-o", &dir.join(name), &[input], "the report's table")?;
        }
    }
    if a.uncertainty.is_some() && input.extension().is_none_or(|e| e != "toml") {
        return Err(CliError::Input(format!(
            "--uncertainty runs a scenario's points, and {} is a results table: make it with `dtsim sweep --uncertainty N`, whose percentiles the report draws",
            input.display()
        )));
    }
    let mut words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    words.insert(0, "dtsim".into());
    let req = ReportRequest {
        input: a.input.expect("clap requires it"),
        dir: a.output.expect("clap requires it"),
        sweep: Options {
            jobs: a.jobs,
            shard: None,
            progress: std::io::stderr().is_terminal(),
            block_points: 0,
            uncertainty: a.uncertainty,
        },
        steer: Steer {
            x: a.x,
            series: a.series,
            filters: a.filters,
            format: a.format,
        },
        command: words.join(" "),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    let made = make(&req)?;
    if let Some((s, table)) = &made.swept {
        for w in &s.warnings {
            note!("warning: {w}");
        }
        note!(
            "swept {} into {}",
            Count(s.points as u64, "point"),
            table.display()
        );
    }
    let files = &made.written.files;
    note!(
        "wrote {} ({} in {})",
        files[0].display(),
        Count(files.len() as u64, "file"),
        req.dir.display()
    );
    Ok(())
}
