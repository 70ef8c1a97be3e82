//! Plots of result tables and of timelines, as PNG or SVG (plotters).
//!
//! A sweep's table answers "which method scales best?" only once it is
//! drawn the way the papers draw it. This module owns that drawing: it
//! chooses units and scales from the column names, lays out the axes, the
//! legend and the ticks, and carries its own font so that plotting never
//! depends on what is installed.
//!
//! Three kinds of chart ([`Kind`]) cover the figures of the issue, and
//! [`plot_timeline`] draws a trace as a Gantt picture:
//!
//! ```text
//!  Kind::Line                         Kind::Bar
//!  throughput (samples/s)             speedup (×)
//!   |          o-- ring                |      #
//!   |      o--'                        |    # #    #      # ring
//!   |  o--'  x---x ps                  |  # # #  # #      # embrace
//!   +----------------- gpus            +------------- model
//!
//!  Kind::Stacked                      timeline (plot_timeline)
//!  time (ms)                          GPU 0 compute  |[fwd][ bwd ]|[fwd]
//!   |  =         = exposed_comm_s     GPU 0 comm     |   [m] [m]  |
//!   |  +  =      + compression_s      GPU 1 compute  |[fwd][ bwd ]|[fwd]
//!   |  #  #  #   # compute_s          GPU 1 comm     |   [m] [m]  |
//!   +---------- method                               +------------- ms
//! ```
//!
//! * Axis titles carry units derived from the column name: `*_s` is a time
//!   (seconds, or ms / µs when the values are small), `throughput` takes the
//!   table's `throughput_unit`, `scaling_efficiency` is shown in %,
//!   `bytes_*` / `*_bytes` in bytes with binary prefixes, `speedup*` as ×.
//! * An axis turns logarithmic when its values are all positive and span
//!   more than two decades (max / min > 100); a line chart's logarithmic x
//!   axis is ticked at the data's own values when there are few of them
//!   (4, 8, 16, … GPUs).
//! * The output format follows the file's extension (`.png`, `.svg`). The
//!   same input always gives the same bytes.
//! * Text uses DejaVu Sans, embedded from `reports/assets/` (license in
//!   `assets/LICENSE-DejaVu.txt`) and registered with plotters as
//!   `sans-serif`. An SVG names the family `sans-serif`, so a viewer draws
//!   it with its own sans-serif font.
//!
//! The pieces, by what they draw: `chart` (the backend-independent
//! picture every kind builds), `axes` (ranges, ticks, number labels),
//! `units` (units from column names), `legend`, `rows` (a table's rows as
//! points and categories), one module per kind (`line`, `bars`,
//! `stacked`, `timeline`: [`Gantt`]), and `draw` (plotters: PNG, SVG).
//!
//! ```no_run
//! use polars::prelude::*;
//! use reports::plot::{plot_table, Kind, PlotSpec};
//!
//! let df = df!(
//!     "gpus" => [4i64, 8, 16, 4, 8, 16],
//!     "method" => ["ring", "ring", "ring", "ps", "ps", "ps"],
//!     "throughput" => [1200.0, 2300.0, 4400.0, 1100.0, 1900.0, 2800.0],
//! )?;
//! let mut spec = PlotSpec::new("gpus", ["throughput"], Kind::Line);
//! spec.series = Some("method".into());
//! plot_table(&df, &spec, std::path::Path::new("scaling.svg"))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod axes;
mod bars;
mod chart;
mod draw;
mod legend;
mod line;
mod rows;
mod stacked;
mod timeline;
mod units;

pub use timeline::{DEFAULT_TIMELINE_ITERATIONS, Gantt, MAX_TIMELINE_GPUS};

use crate::columns::{ColumnError, column, numbers};
use chart::Chart;
use draw::{Format, render};
use polars::prelude::DataFrame;
use serde_json::Value;
use std::path::Path;

/// Default picture width in pixels.
pub const DEFAULT_WIDTH: u32 = 1200;
/// Default picture height in pixels.
pub const DEFAULT_HEIGHT: u32 = 800;
/// Smallest and largest accepted picture side, in pixels.
pub const SIZE_LIMITS: (u32, u32) = (200, 10_000);

/// The kind of chart [`plot_table`] draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    /// Lines through points (numeric x), one line per series value: e.g.
    /// throughput against GPUs per method (Parallax Fig. 8, gTop-k Fig. 10).
    #[default]
    Line,
    /// Grouped bars: one group per x category, one bar per series value
    /// (EmbRace Fig. 7).
    Bar,
    /// Stacked bars: one bar per x category, the y columns stacked in it
    /// (a time breakdown, gTop-k Fig. 11).
    Stacked,
}

impl Kind {
    /// Every kind, in the order help texts list them.
    pub const ALL: [Kind; 3] = [Kind::Line, Kind::Bar, Kind::Stacked];

    /// The kind's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Line => "line",
            Kind::Bar => "bar",
            Kind::Stacked => "stacked",
        }
    }
}

/// The one table of the kinds' names (`sim::names`): parsing and the
/// "unknown plot kind" message come from it.
impl sim::names::Named for Kind {
    const ALL: &'static [Kind] = &Kind::ALL;
    const WHAT: &'static str = "plot kind";
    fn name(self) -> &'static str {
        Kind::name(self)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Kind {
    type Err = PlotError;

    /// Parses `line`, `bar` or `stacked`; another name is refused with the
    /// nearest one and the list.
    fn from_str(s: &str) -> Result<Kind, PlotError> {
        <Kind as sim::names::Named>::parse(s).map_err(PlotError::BadSpec)
    }
}

/// What [`plot_table`] draws: which columns go where, and the picture's size.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSpec {
    /// Column of the x axis: numeric for [`Kind::Line`]; any type for
    /// [`Kind::Bar`] and [`Kind::Stacked`], whose x values are categories
    /// (numbers sorted ascending, text in order of first appearance).
    pub x: String,
    /// Numeric y columns. Line and Bar: exactly one. Stacked: the columns
    /// stacked in each bar, bottom first (e.g. `compute_s`,
    /// `compression_s`, `exposed_comm_s`); they must share a unit.
    pub y: Vec<String>,
    /// One line or one bar per value of this column (Line, Bar; not
    /// Stacked, whose colours are the y columns). Default: none, a single
    /// line or bar per x.
    pub series: Option<String>,
    /// Kind of chart. Default: [`Kind::Line`].
    pub kind: Kind,
    /// Title above the chart. Default: one made from the columns' human
    /// names ([`crate::labels`]).
    pub title: Option<String>,
    /// The x axis's title. Default: the column's name and unit.
    pub x_label: Option<String>,
    /// The y axis's title. Default: the column's name and unit.
    pub y_label: Option<String>,
    /// The legend's title. Default: the series column's name.
    pub legend_title: Option<String>,
    /// What the picture holds fixed or leaves out (filters, held values),
    /// stated after the title in parentheses, e.g. `Inter-node network =
    /// eth-10g`.
    pub notes: Vec<String>,
    /// Width in pixels (also of an SVG's canvas). Default: 1200.
    pub width: u32,
    /// Height in pixels. Default: 800.
    pub height: u32,
}

impl PlotSpec {
    /// A spec with no series, the default title and the default size.
    pub fn new<S: Into<String>>(
        x: impl Into<String>,
        y: impl IntoIterator<Item = S>,
        kind: Kind,
    ) -> PlotSpec {
        PlotSpec {
            x: x.into(),
            y: y.into_iter().map(Into::into).collect(),
            series: None,
            kind,
            title: None,
            x_label: None,
            y_label: None,
            legend_title: None,
            notes: Vec::new(),
            width: DEFAULT_WIDTH,
            height: DEFAULT_HEIGHT,
        }
    }
}

/// Why a plot could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlotError {
    /// A column the spec names is missing, or does not hold what the
    /// chart needs (numbers).
    #[error(transparent)]
    Column(#[from] ColumnError),
    /// Nothing to draw: the table has no rows, or none with values in every
    /// plotted column; or no trace event falls in the chosen iterations.
    #[error(
        "nothing to plot: no row has values in every plotted column (or, for a timeline, no event falls in the chosen iterations)"
    )]
    Empty,
    /// The spec asks for something that cannot be drawn; the message says
    /// what and how to fix it.
    #[error("{0}")]
    BadSpec(String),
    /// The timeline input is not a Chrome trace-event file as dtsim writes
    /// it; the message says which part.
    #[error("not a dtsim trace: {0}")]
    BadTrace(String),
    /// The picture could not be drawn or written to `path`.
    #[error("{path}: {message}")]
    Output {
        /// The output file.
        path: String,
        /// What failed.
        message: String,
    },
}

impl PlotError {
    /// Whether the error is the input's (exit code 2: a table, a trace,
    /// a column or a spec) rather than the picture's file, which could
    /// not be drawn or written (exit code 1).
    pub fn is_input(&self) -> bool {
        match self {
            PlotError::Column(e) => e.is_input(),
            PlotError::Empty | PlotError::BadSpec(_) | PlotError::BadTrace(_) => true,
            PlotError::Output { .. } => false,
        }
    }
}

/// What `dtsim plot` draws from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A results table (`.csv`, `.parquet`) and the chart of it.
    Table {
        /// The table.
        path: std::path::PathBuf,
        /// The chart (boxed: a spec is large beside a timeline's fields).
        spec: Box<PlotSpec>,
        /// `COL=VALUE` filters, applied first and stated on the picture.
        filters: Vec<String>,
        /// Plot the speedup of the one y column over this value of the
        /// series column (at the same x, every other column equal).
        baseline: Option<String>,
    },
    /// A trace from `dtsim run --trace`, drawn as a Gantt picture.
    Timeline {
        /// The trace file.
        path: std::path::PathBuf,
        /// Iterations to draw.
        iterations: Option<u32>,
        /// Width and height in pixels.
        size: (u32, u32),
    },
}

/// An error about the input, named by its file (an output error names the
/// picture already).
fn in_file(path: &Path, e: PlotError) -> PlotError {
    match e {
        PlotError::Output { .. } => e,
        e => PlotError::BadSpec(format!("{}: {e}", path.display())),
    }
}

/// A `--where COL=VALUE` filter as a picture states it: "Inter-node
/// network = eth-10g".
pub fn filter_note(filter: &str) -> String {
    match filter.split_once('=') {
        Some((k, v)) => crate::labels::setting(k, v),
        None => filter.to_string(),
    }
}

/// `dtsim plot`: reads the table (filtering it, taking the speedup) or
/// the trace, and draws it into `out`. Errors about the input name its
/// file.
pub fn draw(source: &Source, out: &Path) -> Result<(), PlotError> {
    match source {
        Source::Timeline {
            path,
            iterations,
            size: (w, h),
        } => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| PlotError::BadSpec(format!("{}: cannot read: {e}", path.display())))?;
            let trace: Value = serde_json::from_str(&text)
                .map_err(|e| PlotError::BadSpec(format!("{}: not JSON: {e}", path.display())))?;
            plot_timeline(&trace, out, *iterations, *w, *h).map_err(|e| in_file(path, e))
        }
        Source::Table {
            path,
            spec,
            filters,
            baseline,
        } => {
            if spec.series.as_ref() == Some(&spec.x) {
                return Err(PlotError::BadSpec(format!(
                    "--series {} is also the x axis's column: a series is one line or bar per value of another column (drop --series, or name a column the table sweeps beside it)",
                    spec.x
                )));
            }
            // (reading a table fails only on the input: its name or content)
            let mut df = crate::table::read(path).map_err(|e| PlotError::BadSpec(e.to_string()))?;
            let mut spec = PlotSpec::clone(spec);
            for f in filters {
                df = crate::columns::keep_where(&df, f).map_err(|e| in_file(path, e.into()))?;
                spec.notes.push(filter_note(f));
            }
            if let Some(base) = baseline {
                let series = spec
                    .series
                    .clone()
                    .ok_or_else(|| PlotError::BadSpec("--baseline needs --series".into()))?;
                if spec.y.len() != 1 {
                    return Err(PlotError::BadSpec(format!(
                        "--baseline takes exactly one --y column, got {}",
                        spec.y.join(", ")
                    )));
                }
                df = crate::columns::speedup(&df, &spec.x, &spec.y[0], &series, base)
                    .map_err(|e| in_file(path, e.into()))?;
                spec.title = spec.title.or_else(|| {
                    Some(format!(
                        "Speedup in {} over {}",
                        crate::labels::in_sentence(&crate::labels::label(&spec.y[0])),
                        crate::labels::setting(&series, base)
                    ))
                });
                spec.y = vec![crate::columns::SPEEDUP.to_string()];
            }
            plot_table(&df, &spec, out).map_err(|e| in_file(path, e))
        }
    }
}

/// Draws `df` as `spec` says into `out`, a `.png` or `.svg` file.
///
/// Rows with a missing (null) or non-finite value in a plotted column are
/// left out. Two rows with the same x (and series) are refused with
/// [`PlotError::BadSpec`] naming the columns in which they differ: filter
/// the table, or choose a series that tells them apart.
pub fn plot_table(df: &DataFrame, spec: &PlotSpec, out: &Path) -> Result<(), PlotError> {
    picture(out, spec.width, spec.height, || table_chart(df, spec))
}

/// Draws a Chrome trace from `dtsim run --trace` as a Gantt picture into
/// `out` (`.png` or `.svg`): [`Gantt::from_trace`], then [`plot_gantt`].
/// Iteration starts come from `otherData.iteration_starts_us`; without
/// them the whole trace is shown.
pub fn plot_timeline(
    trace: &Value,
    out: &Path,
    iterations: Option<u32>,
    width: u32,
    height: u32,
) -> Result<(), PlotError> {
    plot_gantt(&Gantt::from_trace(trace)?, out, iterations, width, height)
}

/// Draws `gantt` (a run's timeline, [`Gantt::from_timeline`], or a
/// trace's) as a Gantt picture into `out` (`.png` or `.svg`).
///
/// Rows are GPU × track (compute, communication), for the first
/// [`MAX_TIMELINE_GPUS`] GPUs; colours are the span kinds (forward and
/// backward passes, waits for parameters, communication). The window is
/// `iterations` iterations (default [`DEFAULT_TIMELINE_ITERATIONS`]) from
/// the start of iteration 1, skipping the warm-up iteration 0; iteration
/// starts are marked by vertical lines.
pub fn plot_gantt(
    gantt: &Gantt,
    out: &Path,
    iterations: Option<u32>,
    width: u32,
    height: u32,
) -> Result<(), PlotError> {
    picture(out, width, height, || {
        gantt.chart(timeline::iterations_shown(iterations)?)
    })
}

/// Draws the chart `chart` makes into `out`, once the file's format and
/// the picture's size are known to be good.
fn picture(
    out: &Path,
    width: u32,
    height: u32,
    chart: impl FnOnce() -> Result<Chart, PlotError>,
) -> Result<(), PlotError> {
    let format = Format::of(out)?;
    check_size(width, height)?;
    render(&chart()?, out, format, width, height)
}

/// Refuses a picture side outside [`SIZE_LIMITS`].
fn check_size(width: u32, height: u32) -> Result<(), PlotError> {
    let (lo, hi) = SIZE_LIMITS;
    if !(lo..=hi).contains(&width) || !(lo..=hi).contains(&height) {
        return Err(PlotError::BadSpec(format!(
            "a picture of {width}×{height} pixels: each side must be between {lo} and {hi}"
        )));
    }
    Ok(())
}

/// The chart of `df` that `spec` asks for, once the spec is checked
/// against the table: one module per kind builds it.
fn table_chart(df: &DataFrame, spec: &PlotSpec) -> Result<Chart, PlotError> {
    for name in std::iter::once(&spec.x)
        .chain(&spec.y)
        .chain(spec.series.iter())
    {
        column(df, name)?;
    }
    match spec.kind {
        Kind::Line | Kind::Bar if spec.y.len() != 1 => {
            return Err(PlotError::BadSpec(format!(
                "a {} chart takes exactly one y column, got {} ({})",
                spec.kind,
                spec.y.len(),
                spec.y.join(", ")
            )));
        }
        Kind::Stacked if spec.y.is_empty() => {
            return Err(PlotError::BadSpec(
                "a stacked chart needs at least one y column".into(),
            ));
        }
        Kind::Stacked if spec.series.is_some() => {
            return Err(PlotError::BadSpec(
                "a stacked chart takes no series: its colours are the stacked y columns; \
                 put the series in x or filter the table"
                    .into(),
            ));
        }
        _ => {}
    }
    if df.height() == 0 {
        return Err(PlotError::Empty);
    }
    let ys = spec
        .y
        .iter()
        .map(|c| numbers(df, c))
        .collect::<Result<Vec<_>, _>>()?;
    let mut chart = match spec.kind {
        Kind::Line => line::chart(df, spec, &ys[0])?,
        Kind::Bar => bars::chart(df, spec, &ys[0])?,
        Kind::Stacked => {
            // a component that is zero in every bar (compression, for a
            // method that compresses nothing) is left out of the breakdown
            let nonzero: Vec<usize> = (0..ys.len())
                .filter(|&j| ys[j].iter().any(|v| v.is_some_and(|v| v != 0.0)))
                .collect();
            if nonzero.is_empty() || nonzero.len() == ys.len() {
                stacked::chart(df, spec, &ys)?
            } else {
                let kept = PlotSpec {
                    y: nonzero.iter().map(|&j| spec.y[j].clone()).collect(),
                    ..spec.clone()
                };
                let ys: Vec<_> = nonzero.iter().map(|&j| ys[j].clone()).collect();
                stacked::chart(df, &kept, &ys)?
            }
        }
    };
    if let Some(t) = &spec.x_label {
        chart.x_title = t.clone();
    }
    if let Some(t) = &spec.y_label {
        chart.y_title = t.clone();
    }
    if let Some(t) = &spec.legend_title {
        chart.legend_title = Some(t.clone());
    }
    if !spec.notes.is_empty() {
        chart.title = format!("{} ({})", chart.title, spec.notes.join("; "));
    }
    Ok(chart)
}
