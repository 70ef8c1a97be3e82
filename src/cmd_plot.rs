//! `dtsim plot RESULTS --x COL --y COL [--series COL [--baseline V]] [--kind line|bar|stacked] -o PLOT.(png|svg)`
//! and `dtsim plot --timeline TRACE.json -o T.(png|svg)`.

use crate::CliError;
use clap::Args;
use reports::plot::{Kind, PlotError, PlotSpec, plot_table, plot_timeline};
use std::path::PathBuf;

/// Arguments of `dtsim plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A results table from `dtsim sweep` (.csv or .parquet).
    #[arg(required_unless_present = "timeline", conflicts_with = "timeline")]
    results: Option<PathBuf>,
    /// Draw a Gantt picture of a trace from `dtsim run --trace` instead.
    #[arg(long, value_name = "TRACE.json")]
    timeline: Option<PathBuf>,
    /// Column for the x axis.
    #[arg(long, required_unless_present = "timeline")]
    x: Option<String>,
    /// Column(s) for the y axis (several, comma-separated, for --kind stacked).
    #[arg(long, value_delimiter = ',', required_unless_present = "timeline")]
    y: Vec<String>,
    /// One line or bar per value of this column.
    #[arg(long)]
    series: Option<String>,
    /// line, bar (grouped) or stacked.
    #[arg(long, default_value = "line")]
    kind: String,
    /// Plot the speedup of y over this value of the series column (y
    /// divided by the baseline's y at the same x), e.g. `--y throughput
    /// --series strategy.dense --baseline ps --kind bar`.
    #[arg(long, requires = "series", value_name = "SERIES_VALUE")]
    baseline: Option<String>,
    /// Keep only the rows whose COL reads VALUE (repeatable), e.g.
    /// `--where cluster.network=eth-10g`: for a table that sweeps more keys
    /// than the chart shows.
    #[arg(long = "where", value_name = "COL=VALUE")]
    filters: Vec<String>,
    /// Title (default: derived from the columns).
    #[arg(long)]
    title: Option<String>,
    /// Iterations of the timeline to draw.
    #[arg(long)]
    iterations: Option<u32>,
    /// Width in pixels.
    #[arg(long, default_value_t = reports::plot::DEFAULT_WIDTH)]
    width: u32,
    /// Height in pixels.
    #[arg(long, default_value_t = reports::plot::DEFAULT_HEIGHT)]
    height: u32,
    /// The picture to write: .png or .svg.
    #[arg(short, long)]
    output: PathBuf,
}

/// A plot error, named by the input it is about; an output error already
/// names the picture.
fn in_file(input: &std::path::Path, e: PlotError) -> CliError {
    match e {
        PlotError::Output { .. } => CliError::Input(e.to_string()),
        e => CliError::Input(format!("{}: {e}", input.display())),
    }
}

fn map(e: PlotError) -> CliError {
    CliError::Input(e.to_string())
}

pub fn run(a: PlotArgs) -> Result<(), CliError> {
    if let Some(t) = &a.timeline {
        let text = std::fs::read_to_string(t)
            .map_err(|e| CliError::Input(format!("{}: cannot read: {e}", t.display())))?;
        let trace: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CliError::Input(format!("{}: not JSON: {e}", t.display())))?;
        plot_timeline(&trace, &a.output, a.iterations, a.width, a.height)
            .map_err(|e| in_file(t, e))?;
    } else {
        let path = a.results.as_ref().expect("clap requires it");
        let mut df = reports::table::read(path).map_err(|e| CliError::Input(e.to_string()))?;
        for f in &a.filters {
            df = reports::columns::keep_where(&df, f)
                .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
        }
        let kind: Kind = a.kind.parse().map_err(map)?;
        let x = a.x.clone().expect("clap requires it");
        let mut y = a.y.clone();
        let mut title = a.title.clone();
        if let (Some(base), Some(series)) = (&a.baseline, &a.series) {
            if y.len() != 1 {
                return Err(CliError::Input(format!(
                    "--baseline takes exactly one --y column, got {}",
                    y.join(", ")
                )));
            }
            df = reports::columns::speedup(&df, std::slice::from_ref(&x), &y[0], series, base)
                .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
            title = title.or_else(|| Some(format!("Speedup in {} over {base}", y[0])));
            y = vec![reports::columns::SPEEDUP.to_string()];
        }
        let spec = PlotSpec {
            series: a.series.clone(),
            title,
            width: a.width,
            height: a.height,
            ..PlotSpec::new(x, y, kind)
        };
        plot_table(&df, &spec, &a.output).map_err(|e| in_file(path, e))?;
    }
    eprintln!("wrote {}", a.output.display());
    Ok(())
}
