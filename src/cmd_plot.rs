//! `dtsim plot RESULTS --x COL --y COL [--series COL [--baseline V]] [--kind line|bar|stacked] -o PLOT.(png|svg)`
//! and `dtsim plot --timeline TRACE.json -o T.(png|svg)`.

use crate::CliError;
use clap::Args;
use reports::plot::{Kind, PlotSpec, Source};
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
    #[arg(
        long,
        required_unless_present = "timeline",
        conflicts_with = "timeline"
    )]
    x: Option<String>,
    /// Column(s) for the y axis (several, comma-separated, for --kind stacked).
    #[arg(
        long,
        value_delimiter = ',',
        required_unless_present = "timeline",
        conflicts_with = "timeline"
    )]
    y: Vec<String>,
    /// One line or bar per value of this column.
    #[arg(long, conflicts_with = "timeline")]
    series: Option<String>,
    /// line, bar (grouped) or stacked.
    #[arg(long, default_value = "line", value_parser = parse_kind, conflicts_with = "timeline")]
    kind: Kind,
    /// Plot the speedup of y over this value of the series column (y
    /// divided by the baseline's y at the same x), e.g. `--y throughput
    /// --series strategy.dense --baseline ps --kind bar`.
    #[arg(
        long,
        requires = "series",
        value_name = "SERIES_VALUE",
        conflicts_with = "timeline"
    )]
    baseline: Option<String>,
    /// Keep only the rows whose COL reads VALUE (repeatable), e.g.
    /// `--where cluster.network=eth-10g`: for a table that sweeps more keys
    /// than the chart shows.
    #[arg(long = "where", value_name = "COL=VALUE", conflicts_with = "timeline")]
    filters: Vec<String>,
    /// Title (default: derived from the columns' names).
    #[arg(long, conflicts_with = "timeline")]
    title: Option<String>,
    /// The x axis's title (default: the column's name and unit).
    #[arg(long, conflicts_with = "timeline")]
    xlabel: Option<String>,
    /// The y axis's title (default: the column's name and unit).
    #[arg(long, conflicts_with = "timeline")]
    ylabel: Option<String>,
    /// The legend's title (default: the series column's name).
    #[arg(long, conflicts_with = "timeline")]
    legend_title: Option<String>,
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

pub fn run(a: PlotArgs) -> Result<(), CliError> {
    crate::error::output_file("-o", &a.output)?;
    // (a table's plot has no iterations: the flag was ignored, a review)
    if a.iterations.is_some() && a.timeline.is_none() {
        return Err(CliError::Input(
            "--iterations: the iterations of a timeline (--timeline TRACE.json) to draw; a results table's plot has none"
                .into(),
        ));
    }
    let source = match &a.timeline {
        Some(t) => Source::Timeline {
            path: t.clone(),
            iterations: a.iterations,
            size: (a.width, a.height),
        },
        None => Source::Table {
            path: a.results.clone().expect("clap requires it"),
            spec: Box::new(PlotSpec {
                series: a.series.clone(),
                title: a.title.clone(),
                x_label: a.xlabel.clone(),
                y_label: a.ylabel.clone(),
                legend_title: a.legend_title.clone(),
                width: a.width,
                height: a.height,
                ..PlotSpec::new(a.x.clone().expect("clap requires it"), a.y.clone(), a.kind)
            }),
            filters: a.filters.clone(),
            baseline: a.baseline.clone(),
        },
    };
    reports::plot::draw(&source, &a.output)?;
    note!("wrote {}", a.output.display());
    Ok(())
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    s.parse()
        .map_err(|e: reports::plot::PlotError| e.to_string())
}
