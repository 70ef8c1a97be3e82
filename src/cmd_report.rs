//! `dtsim report FILE|RESULTS -o DIR` (a Markdown report of a sweep) and
//! `dtsim report merge A B ... --out ALL.(csv|parquet)`.

use crate::CliError;
use crate::cmd_sweep::{jobs_in_range, map, map_in};
use clap::{Args, Subcommand};
use reports::report::{Source, write_report};
use reports::sweep::{self, Options};
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
        let s = sweep::merge(&inputs, &out).map_err(map)?;
        eprintln!("wrote {} ({} points)", out.display(), s.points);
        return Ok(());
    }
    let input = a.input.expect("clap requires it");
    let dir = a.output.expect("clap requires it");
    let is_scenario = input
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::Input(format!(
            "{}: exists and is not a directory",
            dir.display()
        )));
    }
    if !is_scenario && reports::table::Format::of(&input).is_err() {
        return Err(CliError::Input(format!(
            "{}: give a scenario (.toml) or a results table (.csv, .parquet)",
            input.display()
        )));
    }
    let (table_path, grid, text) = if is_scenario {
        let grid = sim::scenario::open_file(&input).map_err(|e| CliError::Input(e.to_string()))?;
        let text = std::fs::read_to_string(&input)
            .map_err(|e| CliError::Input(format!("{}: {e}", input.display())))?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| CliError::Input(format!("{}: {e}", dir.display())))?;
        let out = dir.join("results.parquet");
        let opts = Options {
            jobs: a.jobs,
            shard: None,
            progress: std::io::stderr().is_terminal(),
            block_points: 0,
        };
        let s = sweep::run(&grid, &out, &opts).map_err(map_in(&input))?;
        for w in &s.warnings {
            eprintln!("warning: {w}");
        }
        eprintln!("swept {} points into {}", s.points, out.display());
        (out, Some(grid), Some(text))
    } else {
        (input.clone(), None, None)
    };
    let df = reports::table::read(&table_path).map_err(|e| CliError::Input(e.to_string()))?;
    let mut words: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    words.insert(0, "dtsim".into());
    let source = Source {
        input: input.display().to_string(),
        command: words.join(" "),
        version: env!("CARGO_PKG_VERSION").into(),
        scenario_text: text,
    };
    let w = write_report(&df, &source, grid.as_ref(), &dir)
        .map_err(|e| CliError::Input(e.to_string()))?;
    eprintln!(
        "wrote {} ({} files in {})",
        w.files[0].display(),
        w.files.len(),
        dir.display()
    );
    Ok(())
}
