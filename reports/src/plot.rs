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

use crate::derive::{column, numbers};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use polars::prelude::DataFrame;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

/// DejaVu Sans 2.37 (Bitstream Vera license, `assets/LICENSE-DejaVu.txt`).
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// The family name the font is registered under and every text asks for.
const FAMILY: &str = "sans-serif";

/// Default picture width in pixels.
pub const DEFAULT_WIDTH: u32 = 1200;
/// Default picture height in pixels.
pub const DEFAULT_HEIGHT: u32 = 800;
/// Smallest and largest accepted picture side, in pixels.
pub const SIZE_LIMITS: (u32, u32) = (200, 10_000);
/// Iterations a timeline shows when not told otherwise.
pub const DEFAULT_TIMELINE_ITERATIONS: u32 = 2;
/// GPUs a timeline shows at most: dtsim's data-parallel GPUs run in
/// lockstep, so more rows repeat the same picture.
pub const MAX_TIMELINE_GPUS: usize = 4;
/// Largest trace time (`ts`, `dur`) a timeline accepts, µs (~31 years):
/// beyond it the picture's arithmetic would overflow.
const MAX_TRACE_US: f64 = 1e15;

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
    /// The names [`Kind`]'s `FromStr` accepts, in declaration order.
    pub const NAMES: [&'static str; 3] = ["line", "bar", "stacked"];

    /// The kind's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Line => "line",
            Kind::Bar => "bar",
            Kind::Stacked => "stacked",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Kind {
    type Err = PlotError;

    /// Parses `line`, `bar` or `stacked`.
    fn from_str(s: &str) -> Result<Kind, PlotError> {
        match s {
            "line" => Ok(Kind::Line),
            "bar" => Ok(Kind::Bar),
            "stacked" => Ok(Kind::Stacked),
            _ => Err(PlotError::BadSpec(format!(
                "unknown plot kind `{s}`: use one of {}",
                Kind::NAMES.join(", ")
            ))),
        }
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
    /// Title above the chart. Default: one made from the column names.
    pub title: Option<String>,
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
            width: DEFAULT_WIDTH,
            height: DEFAULT_HEIGHT,
        }
    }
}

/// Why a plot could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlotError {
    /// The spec names a column the table does not have.
    #[error("no column `{column}` in the table; it has: {}", available.join(", "))]
    UnknownColumn {
        /// The column asked for.
        column: String,
        /// The table's columns, in order.
        available: Vec<String>,
    },
    /// Nothing to draw: the table has no rows, or none with values in every
    /// plotted column; or no trace event falls in the chosen iterations.
    #[error(
        "nothing to plot: no row has values in every plotted column (or, for a timeline, no event falls in the chosen iterations)"
    )]
    Empty,
    /// A column that must hold numbers (the x of a line chart, every y)
    /// holds something else.
    #[error(
        "column `{column}` is not numeric: every y column, and a line chart's x, must hold numbers"
    )]
    NotNumeric {
        /// The column.
        column: String,
    },
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

/// Draws `df` as `spec` says into `out`, a `.png` or `.svg` file.
///
/// Rows with a missing (null) or non-finite value in a plotted column are
/// left out. Two rows with the same x (and series) are refused with
/// [`PlotError::BadSpec`] naming the columns in which they differ: filter
/// the table, or choose a series that tells them apart.
pub fn plot_table(df: &DataFrame, spec: &PlotSpec, out: &Path) -> Result<(), PlotError> {
    let format = Format::of(out)?;
    check_size(spec.width, spec.height)?;
    let chart = table_chart(df, spec)?;
    render(&chart, out, format, spec.width, spec.height)
}

/// Draws a Chrome trace from `dtsim run --trace` as a Gantt picture into
/// `out` (`.png` or `.svg`).
///
/// Rows are GPU × track (compute, communication), for the first
/// [`MAX_TIMELINE_GPUS`] GPUs; colours are the event kinds (forward and
/// backward passes, waits for parameters, communication). The window is
/// `iterations` iterations (default [`DEFAULT_TIMELINE_ITERATIONS`]) from
/// the start of iteration 1, skipping the warm-up iteration 0; iteration
/// starts come from `otherData.iteration_starts_us` and are marked by
/// vertical lines. Without them the whole trace is shown.
pub fn plot_timeline(
    trace: &Value,
    out: &Path,
    iterations: Option<u32>,
    width: u32,
    height: u32,
) -> Result<(), PlotError> {
    let format = Format::of(out)?;
    check_size(width, height)?;
    let chart = timeline_chart(trace, iterations)?;
    render(&chart, out, format, width, height)
}

// ---------------------------------------------------------------------------
// Output

/// Picture formats, chosen by the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Png,
    Svg,
}

impl Format {
    fn of(path: &Path) -> Result<Format, PlotError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("png") => Ok(Format::Png),
            Some("svg") => Ok(Format::Svg),
            _ => Err(output_error(path, "the file name must end in .png or .svg")),
        }
    }
}

fn output_error(path: &Path, message: impl std::fmt::Display) -> PlotError {
    PlotError::Output {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

fn check_size(width: u32, height: u32) -> Result<(), PlotError> {
    let (lo, hi) = SIZE_LIMITS;
    if !(lo..=hi).contains(&width) || !(lo..=hi).contains(&height) {
        return Err(PlotError::BadSpec(format!(
            "a picture of {width}×{height} pixels: each side must be between {lo} and {hi}"
        )));
    }
    Ok(())
}

/// Registers the bundled font with plotters, once per process.
fn register_fonts() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let ok = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok();
        assert!(ok, "the bundled DejaVu Sans font does not parse");
    });
}

/// [`crate::write_via_temp`], its error an output error of `out`.
fn write_via_temp(
    out: &Path,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), PlotError> {
    crate::write_via_temp(out, write).map_err(|e| output_error(out, e))
}

/// Draws `chart` and writes it. A PNG is drawn into memory first, so a
/// failed drawing leaves no partial file.
fn render(chart: &Chart, out: &Path, format: Format, w: u32, h: u32) -> Result<(), PlotError> {
    register_fonts();
    let drawing = |e: String| output_error(out, format!("drawing failed: {e}"));
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
                draw(&root, chart).map_err(drawing)?;
                root.present().map_err(|e| drawing(e.to_string()))?;
            }
            write_via_temp(out, |tmp| {
                std::fs::write(tmp, svg).map_err(|e| e.to_string())
            })
        }
        Format::Png => {
            let mut rgb = vec![0u8; w as usize * h as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                draw(&root, chart).map_err(drawing)?;
                root.present().map_err(|e| drawing(e.to_string()))?;
            }
            write_via_temp(out, |tmp| {
                let mut file = BitMapBackend::new(tmp, (w, h));
                file.blit_bitmap((0, 0), (w, h), &rgb)
                    .map_err(|e| e.to_string())?;
                file.present()
                    .map_err(|e| format!("cannot write the PNG: {e}"))
            })
        }
    }
}

// ---------------------------------------------------------------------------
// What gets drawn

/// A chart, independent of the backend: axes, marks and legend, in the
/// axes' (already scaled) units.
#[derive(Debug, Clone)]
struct Chart {
    title: String,
    x: Axis,
    y: Axis,
    x_title: String,
    y_title: String,
    /// Grid lines across the x axis's ticks (off for categories).
    x_grid: bool,
    /// Grid lines across the y axis's ticks.
    y_grid: bool,
    lines: Vec<Series>,
    rects: Vec<Bar>,
    /// Vertical lines with a label at the top (a timeline's iterations).
    marks: Vec<(f64, String)>,
    legend_title: Option<String>,
    legend: Vec<LegendEntry>,
}

/// A line through points, with a marker at each.
#[derive(Debug, Clone)]
struct Series {
    color: RGBColor,
    marker: usize,
    points: Vec<(f64, f64)>,
}

/// A filled rectangle in axis coordinates.
#[derive(Debug, Clone)]
struct Bar {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    color: RGBColor,
}

#[derive(Debug, Clone)]
struct LegendEntry {
    label: String,
    color: RGBColor,
    /// `Some(marker)`: a line with that marker; `None`: a filled box.
    marker: Option<usize>,
}

/// Tableau 10: distinct hues that stay apart for most colour-blind readers.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xBA, 0xB0, 0xAC),
];

/// Markers cycle separately from colours, so lines stay apart in grey too.
const MARKERS: usize = 4;

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

// ---------------------------------------------------------------------------
// Axes

/// A numeric axis (linear or logarithmic) or a categorical one (category
/// `i` spans `[i, i + 1)`), with its ticks and their labels fixed up front
/// so the layout can measure them.
#[derive(Debug, Clone, PartialEq)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
    labels: Vec<String>,
    /// Positions of the light grid lines.
    minor: Vec<f64>,
    /// Categories: [`draw`] places the labels itself, staggered when
    /// they are too wide for their slots.
    categorical: bool,
}

/// About how many labelled ticks a linear axis gets.
const TARGET_TICKS: f64 = 6.0;
/// A logarithmic x axis is ticked at its data values when it has at most
/// this many distinct ones.
const MAX_DATA_TICKS: usize = 12;

impl Axis {
    /// An axis for `values` (finite, at least one): logarithmic when all
    /// are positive and max / min > 100, else linear. `zero`: a linear axis
    /// starts at zero (bars); `data_ticks`: a logarithmic axis may be
    /// ticked at the values themselves.
    fn numeric(values: &[f64], zero: bool, data_ticks: bool) -> Axis {
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if min > 0.0 && max / min > 100.0 {
            let mut distinct: Vec<f64> = values.to_vec();
            distinct.sort_by(f64::total_cmp);
            distinct.dedup();
            let at_values = data_ticks && distinct.len() <= MAX_DATA_TICKS;
            Axis::log(min, max, at_values.then_some(distinct))
        } else {
            Axis::linear(min, max, zero)
        }
    }

    /// A linear axis over `[min, max]` with 4% headroom on each side that
    /// is not pinned at zero; `zero` includes zero in the range.
    fn linear(min: f64, max: f64, zero: bool) -> Axis {
        let (mut a, mut b) = (min, max);
        if zero {
            a = a.min(0.0);
            b = b.max(0.0);
        }
        // values equal to within rounding get the range of equal values,
        // not an axis of indistinguishable tick labels
        if b - a <= 1e-9 * a.abs().max(b.abs()) {
            let d = if a == 0.0 && b == 0.0 {
                1.0
            } else {
                a.abs().max(b.abs()) * 0.1
            };
            a -= d;
            b += d;
            if zero && min >= 0.0 {
                a = a.max(0.0);
            }
            if zero && max <= 0.0 {
                b = b.min(0.0);
            }
        }
        let span = b - a;
        if !(zero && a == 0.0) {
            a -= 0.04 * span;
        }
        if !(zero && b == 0.0) {
            b += 0.04 * span;
        }
        let step = nice_step((b - a) / TARGET_TICKS);
        let first = (a / step).ceil() as i64;
        let last = (b / step).floor() as i64;
        let ticks: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
        let decimals = decimals(step);
        let big = a.abs().max(b.abs());
        let labels = ticks
            .iter()
            .map(|&v| {
                if v != 0.0 && !(1e-3..1e6).contains(&big) {
                    short(v)
                } else {
                    format!("{v:.decimals$}")
                }
            })
            .collect();
        let minor_step = step / 2.0;
        let minor = ((a / minor_step).ceil() as i64..=(b / minor_step).floor() as i64)
            .map(|k| k as f64 * minor_step)
            .collect();
        Axis {
            lo: a,
            hi: b,
            log: false,
            ticks,
            labels,
            minor,
            categorical: false,
        }
    }

    /// A logarithmic axis over `[min, max]` (both positive), padded by a
    /// factor 1.25 at each end so no point sits on the frame. With `at`, it
    /// is ticked at those values; otherwise at the powers of ten inside
    /// (and at 2× and 5× when it spans at most three decades).
    fn log(min: f64, max: f64, at: Option<Vec<f64>>) -> Axis {
        let (lo, hi) = (min / 1.25, max * 1.25);
        let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        let ticks = match at {
            Some(values) => values,
            None => {
                let mantissas: &[f64] = if hi / lo <= 1000.0 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                // at most about a dozen labelled decades
                let every = ((k1 - k0) / 12).max(1);
                (k0..=k1)
                    .filter(|k| (k - k0) % every == 0)
                    .flat_map(|k| mantissas.iter().map(move |m| m * pow10(k)))
                    .filter(|v| (lo..=hi).contains(v))
                    .collect()
            }
        };
        let labels = ticks.iter().map(|&v| value_label(v)).collect();
        // minor ticks at 2..9 × 10^k only while they can be told apart
        let minor = if k1 - k0 <= 24 {
            (k0..=k1)
                .flat_map(|k| (1..10).map(move |m| f64::from(m) * pow10(k)))
                .filter(|v| (lo..=hi).contains(v))
                .collect()
        } else {
            Vec::new()
        };
        Axis {
            lo,
            hi,
            log: true,
            ticks,
            labels,
            minor,
            categorical: false,
        }
    }

    /// A categorical axis: `labels[i]` at the middle of `[i, i + 1)`.
    fn categories(labels: Vec<String>) -> Axis {
        Axis {
            lo: 0.0,
            hi: labels.len().max(1) as f64,
            log: false,
            ticks: (0..labels.len()).map(|i| i as f64 + 0.5).collect(),
            labels,
            minor: Vec::new(),
            categorical: true,
        }
    }

    /// The label of tick `v`.
    fn label(&self, v: f64) -> String {
        match self.ticks.iter().position(|&t| t == v) {
            Some(i) => self.labels[i].clone(),
            None => short(v),
        }
    }

    /// Where `v` falls along the axis, 0 at `lo` and 1 at `hi` (clamped to
    /// [-1, 2] so that far-off values stay drawable).
    fn fraction(&self, v: f64) -> f64 {
        let t = if self.log {
            if v <= 0.0 {
                -1.0
            } else {
                (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
            }
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        if t.is_nan() { 0.0 } else { t.clamp(-1.0, 2.0) }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = self.fraction(*value);
        (f64::from(limit.0) + t * f64::from(limit.1 - limit.0)).round() as i32
    }

    /// The labelled ticks for bold grid lines, the minor positions for light
    /// ones; the hint's count is ignored since the ticks were chosen with
    /// the picture's size in mind.
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// `10^k`, exactly the double nearest to it (`powi` may differ between
/// optimisation levels, which would break byte-identical output).
fn pow10(k: i32) -> f64 {
    format!("1e{k}").parse().unwrap_or(f64::NAN)
}

/// Largest magnitude a chart axis takes: beyond it the axis arithmetic
/// (spans, padding, ticks) would overflow an f64.
const MAX_PLOTTED: f64 = 1e300;

/// Refuses values whose axis could not be computed.
fn plottable(values: &[f64], what: &str) -> Result<(), PlotError> {
    match values
        .iter()
        .find(|v| v.abs() > MAX_PLOTTED || !v.is_finite())
    {
        Some(v) => Err(PlotError::BadSpec(format!(
            "{what} holds {v}: values beyond ±1e300 cannot be plotted"
        ))),
        None => Ok(()),
    }
}

/// The one of 1, 2, 2.5, 5, 10 × 10^k nearest to `raw` by ratio.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let k = raw.log10().floor() as i32;
    let base = pow10(k);
    let m = raw / base;
    let off = |c: f64| (c / m).ln().abs();
    let nice = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .min_by(|a, b| off(*a).total_cmp(&off(*b)))
        .unwrap_or(1.0);
    nice * base
}

/// Decimal places that show every multiple of `step` exactly.
fn decimals(step: f64) -> usize {
    (0..12)
        .find(|&d| {
            let scaled = step * pow10(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(12)
}

/// `v` rounded to 6 significant digits, shortest form; scientific
/// notation (`1.5e6`, `2e-4`) outside [0.001, 10^6).
fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{}", if v == 0.0 { 0.0 } else { v });
    }
    let k = v.abs().log10().floor() as i32;
    let f = pow10(5 - k);
    let r = (v * f).round() / f;
    if !(1e-3..1e6).contains(&r.abs()) {
        format!("{r:e}")
    } else {
        format!("{r}")
    }
}

/// A data value as a label: integers without a decimal point.
fn value_label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e6 {
        format!("{}", v as i64)
    } else {
        short(v)
    }
}

// ---------------------------------------------------------------------------
// Units

/// What a column measures, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    /// `*_s`: seconds.
    Time,
    /// `throughput`: in the table's `throughput_unit`.
    Throughput,
    /// `scaling_efficiency`: a fraction, shown in %.
    Fraction,
    /// `bytes_*`, `*_bytes`: bytes.
    Bytes,
    /// `speedup*`: a ratio, ×.
    Ratio,
    /// Anything else: no unit.
    Plain,
}

impl Quantity {
    fn of(column: &str) -> Quantity {
        if column.ends_with("_s") {
            Quantity::Time
        } else if column == "throughput" {
            Quantity::Throughput
        } else if column == "scaling_efficiency" {
            Quantity::Fraction
        } else if column == "bytes" || column.starts_with("bytes_") || column.ends_with("_bytes") {
            Quantity::Bytes
        } else if column.starts_with("speedup") {
            Quantity::Ratio
        } else {
            Quantity::Plain
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Quantity::Time => "a time",
            Quantity::Throughput => "a throughput",
            Quantity::Fraction => "a fraction",
            Quantity::Bytes => "a size in bytes",
            Quantity::Ratio => "a ratio",
            Quantity::Plain => "without unit",
        }
    }
}

/// A display unit: values are multiplied by `factor` and the axis title
/// ends in `(name)`.
#[derive(Debug, Clone, PartialEq)]
struct Unit {
    name: Option<String>,
    factor: f64,
}

/// The unit to show `quantity` in, for values whose largest magnitude is
/// `max_abs`.
fn unit(quantity: Quantity, max_abs: f64, df: &DataFrame) -> Unit {
    let named = |name: &str, factor: f64| Unit {
        name: Some(name.to_string()),
        factor,
    };
    match quantity {
        Quantity::Time if max_abs >= 1.0 || max_abs == 0.0 => named("seconds", 1.0),
        Quantity::Time if max_abs >= 1e-3 => named("ms", 1e3),
        Quantity::Time => named("µs", 1e6),
        Quantity::Throughput => {
            let mut units: Vec<String> = Vec::new();
            if let Ok(Keys::Texts(values)) = texts(df, "throughput_unit") {
                for v in values.into_iter().flatten() {
                    if !units.contains(&v) {
                        units.push(v);
                    }
                }
            }
            if units.is_empty() {
                named("samples/s", 1.0)
            } else {
                named(&units.join(" or "), 1.0)
            }
        }
        Quantity::Fraction => named("%", 100.0),
        Quantity::Bytes => {
            const NAMES: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
            let mut k = 0;
            while k + 1 < NAMES.len() && max_abs >= 1024f64.powi(k as i32 + 1) {
                k += 1;
            }
            named(NAMES[k], 1.0 / 1024f64.powi(k as i32))
        }
        Quantity::Ratio => named("×", 1.0),
        Quantity::Plain => Unit {
            name: None,
            factor: 1.0,
        },
    }
}

fn titled(column: &str, unit: &Unit) -> String {
    match &unit.name {
        Some(u) => format!("{column} ({u})"),
        None => column.to_string(),
    }
}

fn max_abs(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(0.0, |m, v| m.max(v.abs()))
}

// ---------------------------------------------------------------------------
// Reading the table

/// A column's values as category keys.
enum Keys {
    Numbers(Vec<Option<f64>>),
    Texts(Vec<Option<String>>),
}

fn texts(df: &DataFrame, name: &str) -> Result<Keys, PlotError> {
    let col = column(df, name)?;
    if col.dtype().is_primitive_numeric() {
        return numbers(df, name).map(Keys::Numbers);
    }
    crate::derive::texts(df, name).map(Keys::Texts)
}

impl Keys {
    fn is_valid(&self, row: usize) -> bool {
        match self {
            Keys::Numbers(v) => v[row].is_some(),
            Keys::Texts(v) => v[row].is_some(),
        }
    }
}

/// The categories of `keys` over `rows`: labels (numbers ascending, texts
/// in order of first appearance) and each row's category index.
fn categories(keys: &Keys, rows: &[usize]) -> (Vec<String>, BTreeMap<usize, usize>) {
    let mut index = BTreeMap::new();
    let labels = match keys {
        Keys::Numbers(values) => {
            let mut distinct: Vec<f64> = rows.iter().filter_map(|&r| values[r]).collect();
            distinct.sort_by(f64::total_cmp);
            distinct.dedup();
            for &r in rows {
                if let Some(v) = values[r] {
                    let i = distinct.partition_point(|d| d.total_cmp(&v).is_lt());
                    index.insert(r, i);
                }
            }
            distinct.into_iter().map(value_label).collect()
        }
        Keys::Texts(values) => {
            let mut labels: Vec<String> = Vec::new();
            let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
            for &r in rows {
                if let Some(v) = &values[r] {
                    let next = labels.len();
                    let i = *seen.entry(v.as_str()).or_insert(next);
                    if i == next {
                        labels.push(v.clone());
                    }
                    index.insert(r, i);
                }
            }
            labels
        }
    };
    (labels, index)
}

/// The error for rows `a` and `b`, which would be drawn at the same place
/// since they agree on `key` (the x and series columns and values). It
/// names the other columns in which they differ, the plotted ones aside.
fn duplicate(
    df: &DataFrame,
    spec: &PlotSpec,
    a: usize,
    b: usize,
    key: &[(&str, String)],
) -> PlotError {
    let same = key
        .iter()
        .map(|(c, v)| format!("{c} = {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let differ: Vec<String> = df
        .columns()
        .iter()
        .filter(|c| !spec.y.iter().any(|y| y == c.name().as_str()))
        .filter(|c| c.get(a).ok() != c.get(b).ok())
        .map(|c| c.name().to_string())
        .collect();
    let how = match differ.len() {
        0 => String::new(),
        n if n <= 4 => format!(" but differ in {}", differ.join(", ")),
        _ => format!(" but differ in {}, …", differ[..4].join(", ")),
    };
    let keys = key
        .iter()
        .map(|(c, _)| *c)
        .collect::<Vec<_>>()
        .join(" and ");
    let series = match (&spec.series, differ.first()) {
        (None, Some(c)) if spec.kind != Kind::Stacked => {
            format!(", or make {c} the series")
        }
        _ => String::new(),
    };
    PlotError::BadSpec(format!(
        "rows {} and {} both have {same}{how}: filter the table to one row per {keys}{series} (dtsim plot --where COL=VALUE)",
        a + 1,
        b + 1,
    ))
}

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
    match spec.kind {
        Kind::Line => line_chart(df, spec, &ys[0]),
        Kind::Bar => bar_chart(df, spec, &ys[0]),
        Kind::Stacked => stacked_chart(df, spec, &ys),
    }
}

/// The series of the rows: labels and each valid row's index. Without a
/// series column, every row is in one series named after `y`.
fn series_of(
    df: &DataFrame,
    spec: &PlotSpec,
    rows: &[usize],
) -> Result<(Vec<String>, BTreeMap<usize, usize>), PlotError> {
    match &spec.series {
        Some(name) => Ok(categories(&texts(df, name)?, rows)),
        None => Ok((
            vec![spec.y[0].clone()],
            rows.iter().map(|&r| (r, 0)).collect(),
        )),
    }
}

fn valid_rows(
    df: &DataFrame,
    spec: &PlotSpec,
    checks: &[&dyn Fn(usize) -> bool],
) -> Result<Vec<usize>, PlotError> {
    let series = match &spec.series {
        Some(name) => Some(texts(df, name)?),
        None => None,
    };
    let rows: Vec<usize> = (0..df.height())
        .filter(|&r| checks.iter().all(|c| c(r)))
        .filter(|&r| series.as_ref().is_none_or(|s| s.is_valid(r)))
        .collect();
    if rows.is_empty() {
        return Err(PlotError::Empty);
    }
    Ok(rows)
}

fn default_title(spec: &PlotSpec) -> String {
    let y = match spec.kind {
        Kind::Stacked => spec.y.join(" + "),
        _ => spec.y.join(", "),
    };
    let base = match spec.kind {
        Kind::Line => format!("{y} against {}", spec.x),
        Kind::Bar | Kind::Stacked => format!("{y} per {}", spec.x),
    };
    match (&spec.series, spec.kind) {
        (Some(s), Kind::Line) => format!("{base}, one line per {s}"),
        (Some(s), _) => format!("{base}, one bar per {s}"),
        (None, _) => base,
    }
}

fn line_chart(df: &DataFrame, spec: &PlotSpec, y: &[Option<f64>]) -> Result<Chart, PlotError> {
    let x = numbers(df, &spec.x)?;
    let rows = valid_rows(df, spec, &[&|r| x[r].is_some(), &|r| y[r].is_some()])?;
    let (names, series) = series_of(df, spec, &rows)?;
    let xu = unit(
        Quantity::of(&spec.x),
        max_abs(rows.iter().filter_map(|&r| x[r])),
        df,
    );
    let yu = unit(
        Quantity::of(&spec.y[0]),
        max_abs(rows.iter().filter_map(|&r| y[r])),
        df,
    );

    let mut points: Vec<Vec<(f64, f64, usize)>> = vec![Vec::new(); names.len()];
    for &r in &rows {
        if let (Some(xv), Some(yv)) = (x[r], y[r]) {
            points[series[&r]].push((xv * xu.factor, yv * yu.factor, r));
        }
    }
    for (s, pts) in points.iter_mut().enumerate() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        if let Some(w) = pts.windows(2).find(|w| w[0].0 == w[1].0) {
            let (a, b) = (w[0].2, w[1].2);
            let mut key = vec![(spec.x.as_str(), value_label(x[a].unwrap_or(f64::NAN)))];
            if let Some(name) = &spec.series {
                key.push((name.as_str(), names[s].clone()));
            }
            return Err(duplicate(df, spec, a, b, &key));
        }
    }
    let xs: Vec<f64> = points.iter().flatten().map(|p| p.0).collect();
    let ys: Vec<f64> = points.iter().flatten().map(|p| p.1).collect();
    plottable(&xs, &spec.x)?;
    plottable(&ys, &spec.y.join(", "))?;
    let (ymin, ymax) = (
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    // start at zero when the data are not far from it: honest comparisons,
    // without flattening a narrow band of values
    let zero = (ymin >= 0.0 && ymin <= 0.5 * ymax) || (ymax <= 0.0 && ymax >= 0.5 * ymin);
    let lines: Vec<Series> = points
        .iter()
        .enumerate()
        .map(|(i, pts)| Series {
            color: color(i),
            marker: i % MARKERS,
            points: pts.iter().map(|p| (p.0, p.1)).collect(),
        })
        .collect();
    let legend = if spec.series.is_some() {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| LegendEntry {
                label: n.clone(),
                color: color(i),
                marker: Some(i % MARKERS),
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(Chart {
        title: spec.title.clone().unwrap_or_else(|| default_title(spec)),
        x: Axis::numeric(&xs, false, true),
        y: Axis::numeric(&ys, zero, false),
        x_title: titled(&spec.x, &xu),
        y_title: titled(&spec.y[0], &yu),
        x_grid: true,
        y_grid: true,
        lines,
        rects: Vec::new(),
        marks: Vec::new(),
        legend_title: spec.series.clone(),
        legend,
    })
}

/// Width of a group of bars within its category's unit slot.
const GROUP_WIDTH: f64 = 0.8;

fn bar_chart(df: &DataFrame, spec: &PlotSpec, y: &[Option<f64>]) -> Result<Chart, PlotError> {
    let xkeys = texts(df, &spec.x)?;
    let rows = valid_rows(df, spec, &[&|r| xkeys.is_valid(r), &|r| y[r].is_some()])?;
    let (cats, cat) = categories(&xkeys, &rows);
    let (names, series) = series_of(df, spec, &rows)?;
    let yu = unit(
        Quantity::of(&spec.y[0]),
        max_abs(rows.iter().filter_map(|&r| y[r])),
        df,
    );

    let mut cells: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for &r in &rows {
        if let Some(&other) = cells.get(&(cat[&r], series[&r])) {
            let mut key = vec![(spec.x.as_str(), cats[cat[&r]].clone())];
            if let Some(name) = &spec.series {
                key.push((name.as_str(), names[series[&r]].clone()));
            }
            return Err(duplicate(df, spec, other, r, &key));
        }
        cells.insert((cat[&r], series[&r]), r);
    }
    let values: Vec<f64> = rows
        .iter()
        .filter_map(|&r| y[r])
        .map(|v| v * yu.factor)
        .collect();
    plottable(&values, &spec.y[0])?;
    let yaxis = Axis::numeric(&values, true, false);
    let base = if yaxis.log { yaxis.lo } else { 0.0 };
    let width = GROUP_WIDTH / names.len() as f64;
    let rects = cells
        .iter()
        .filter_map(|(&(c, s), &r)| {
            let x0 = c as f64 + (1.0 - GROUP_WIDTH) / 2.0 + s as f64 * width;
            y[r].map(|v| Bar {
                x0,
                x1: x0 + width,
                y0: base,
                y1: v * yu.factor,
                color: color(s),
            })
        })
        .collect();
    let legend = if spec.series.is_some() {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| LegendEntry {
                label: n.clone(),
                color: color(i),
                marker: None,
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(Chart {
        title: spec.title.clone().unwrap_or_else(|| default_title(spec)),
        x: Axis::categories(cats),
        y: yaxis,
        x_title: spec.x.clone(),
        y_title: titled(&spec.y[0], &yu),
        x_grid: false,
        y_grid: true,
        lines: Vec::new(),
        rects,
        marks: Vec::new(),
        legend_title: spec.series.clone(),
        legend,
    })
}

fn stacked_chart(
    df: &DataFrame,
    spec: &PlotSpec,
    ys: &[Vec<Option<f64>>],
) -> Result<Chart, PlotError> {
    let quantity = Quantity::of(&spec.y[0]);
    if let Some(other) = spec.y.iter().find(|c| Quantity::of(c) != quantity) {
        return Err(PlotError::BadSpec(format!(
            "stacked columns must share a unit: `{}` is {} but `{other}` is {}",
            spec.y[0],
            quantity.describe(),
            Quantity::of(other).describe()
        )));
    }
    let xkeys = texts(df, &spec.x)?;
    let rows = valid_rows(
        df,
        spec,
        &[&|r| xkeys.is_valid(r), &|r| {
            ys.iter().all(|y| y[r].is_some())
        }],
    )?;
    let (cats, cat) = categories(&xkeys, &rows);
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    for &r in &rows {
        if let Some(&other) = seen.get(&cat[&r]) {
            return Err(duplicate(
                df,
                spec,
                other,
                r,
                &[(spec.x.as_str(), cats[cat[&r]].clone())],
            ));
        }
        seen.insert(cat[&r], r);
        for (name, y) in spec.y.iter().zip(ys) {
            if let Some(v) = y[r].filter(|v| *v < 0.0) {
                return Err(PlotError::BadSpec(format!(
                    "row {} has {name} = {v}: stacked bars need values ≥ 0",
                    r + 1
                )));
            }
        }
    }
    let totals: Vec<f64> = seen
        .values()
        .map(|&r| ys.iter().filter_map(|y| y[r]).sum())
        .collect();
    plottable(&totals, &format!("the sum of {}", spec.y.join(", ")))?;
    let u = unit(quantity, max_abs(totals.iter().copied()), df);
    let mut rects = Vec::new();
    for (&c, &r) in &seen {
        let mut bottom = 0.0;
        for (j, y) in ys.iter().enumerate() {
            let v = y[r].unwrap_or(0.0) * u.factor;
            rects.push(Bar {
                x0: c as f64 + (1.0 - GROUP_WIDTH) / 2.0,
                x1: c as f64 + (1.0 + GROUP_WIDTH) / 2.0,
                y0: bottom,
                y1: bottom + v,
                color: color(j),
            });
            bottom += v;
        }
    }
    let scaled: Vec<f64> = totals.iter().map(|t| t * u.factor).collect();
    let max = scaled.iter().copied().fold(0.0, f64::max);
    let y_title = match (quantity, &u.name) {
        (Quantity::Time, Some(name)) => format!("time ({name})"),
        (_, Some(name)) => format!("{} ({name})", spec.y.join(" + ")),
        (_, None) => spec.y.join(" + "),
    };
    // the legend lists the top of the stack first, as the eye meets it
    let legend = spec
        .y
        .iter()
        .enumerate()
        .rev()
        .map(|(j, n)| LegendEntry {
            label: n.clone(),
            color: color(j),
            marker: None,
        })
        .collect();
    Ok(Chart {
        title: spec.title.clone().unwrap_or_else(|| default_title(spec)),
        x: Axis::categories(cats),
        y: Axis::linear(0.0, max, true),
        x_title: spec.x.clone(),
        y_title,
        x_grid: false,
        y_grid: true,
        lines: Vec::new(),
        rects,
        marks: Vec::new(),
        legend_title: None,
        legend,
    })
}

// ---------------------------------------------------------------------------
// Timelines

/// One "X" (complete) event of a trace.
#[derive(Debug, Clone)]
struct Span {
    pid: u64,
    tid: u64,
    style: SpanStyle,
    start: f64,
    end: f64,
}

/// How an event is coloured, in legend order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SpanStyle {
    Forward,
    Backward,
    Compute,
    Stall,
    Communication,
    Other,
}

impl SpanStyle {
    fn of(cat: &str, pass: Option<&str>) -> SpanStyle {
        match (cat, pass) {
            ("compute", Some("fwd")) => SpanStyle::Forward,
            ("compute", Some("bwd")) => SpanStyle::Backward,
            ("compute", _) => SpanStyle::Compute,
            ("stall", _) => SpanStyle::Stall,
            ("communication", _) => SpanStyle::Communication,
            _ => SpanStyle::Other,
        }
    }

    fn label(self) -> &'static str {
        match self {
            SpanStyle::Forward => "forward pass",
            SpanStyle::Backward => "backward pass",
            SpanStyle::Compute => "compute",
            SpanStyle::Stall => "waiting for parameters",
            SpanStyle::Communication => "communication",
            SpanStyle::Other => "other",
        }
    }

    fn color(self) -> RGBColor {
        match self {
            SpanStyle::Forward => PALETTE[0],
            SpanStyle::Backward => PALETTE[1],
            SpanStyle::Compute => PALETTE[3],
            SpanStyle::Stall => PALETTE[2],
            SpanStyle::Communication => PALETTE[4],
            SpanStyle::Other => PALETTE[6],
        }
    }
}

fn bad_trace(message: impl Into<String>) -> PlotError {
    PlotError::BadTrace(message.into())
}

/// What a timeline needs from a trace.
struct TraceData {
    spans: Vec<Span>,
    /// `process_name` metadata by pid.
    processes: BTreeMap<u64, String>,
    /// `thread_name` metadata by (pid, tid).
    threads: BTreeMap<(u64, u64), String>,
    /// `otherData.iteration_starts_us`, ascending.
    starts: Vec<f64>,
}

/// Reads the events, names and iteration starts of a trace.
fn read_trace(trace: &Value) -> Result<TraceData, PlotError> {
    let events = trace
        .get("traceEvents")
        .and_then(Value::as_array)
        .ok_or_else(|| bad_trace("no `traceEvents` array"))?;
    let mut spans = Vec::new();
    let mut processes = BTreeMap::new();
    let mut threads = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let int = |key: &str| {
            e.get(key).and_then(Value::as_u64).ok_or_else(|| {
                bad_trace(format!(
                    "traceEvents[{i}]: `{key}` is not a non-negative integer"
                ))
            })
        };
        let num = |key: &str| {
            e.get(key)
                .and_then(Value::as_f64)
                .filter(|v| v.abs() <= MAX_TRACE_US)
                .ok_or_else(|| {
                    bad_trace(format!(
                        "traceEvents[{i}]: `{key}` is not a number of microseconds within ±1e15"
                    ))
                })
        };
        let name = e.pointer("/args/name").and_then(Value::as_str);
        match e.get("ph").and_then(Value::as_str) {
            Some("M") => match (e.get("name").and_then(Value::as_str), name) {
                (Some("process_name"), Some(n)) => {
                    processes.insert(int("pid")?, n.to_string());
                }
                (Some("thread_name"), Some(n)) => {
                    threads.insert((int("pid")?, int("tid")?), n.to_string());
                }
                _ => {}
            },
            Some("X") => {
                let start = num("ts")?;
                let dur = num("dur")?;
                if dur < 0.0 {
                    return Err(bad_trace(format!("traceEvents[{i}]: negative `dur`")));
                }
                let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
                let pass = e.pointer("/args/pass").and_then(Value::as_str);
                spans.push(Span {
                    pid: int("pid")?,
                    tid: int("tid")?,
                    style: SpanStyle::of(cat, pass),
                    start,
                    end: start + dur,
                });
            }
            Some(_) => {}
            None => return Err(bad_trace(format!("traceEvents[{i}]: no `ph` string"))),
        }
    }
    let starts = match trace.pointer("/otherData/iteration_starts_us") {
        None => Vec::new(),
        Some(v) => {
            let list = v
                .as_array()
                .ok_or_else(|| bad_trace("`otherData.iteration_starts_us` is not an array"))?;
            let mut starts = list
                .iter()
                .map(|s| s.as_f64().filter(|s| s.abs() <= MAX_TRACE_US))
                .collect::<Option<Vec<f64>>>()
                .ok_or_else(|| {
                    bad_trace(
                        "`otherData.iteration_starts_us` holds a non-number or one beyond ±1e15",
                    )
                })?;
            starts.sort_by(f64::total_cmp);
            starts
        }
    };
    Ok(TraceData {
        spans,
        processes,
        threads,
        starts,
    })
}

fn timeline_chart(trace: &Value, iterations: Option<u32>) -> Result<Chart, PlotError> {
    let n = iterations.unwrap_or(DEFAULT_TIMELINE_ITERATIONS);
    if n == 0 {
        return Err(PlotError::BadSpec(
            "a timeline shows at least one iteration".into(),
        ));
    }
    let TraceData {
        spans,
        processes,
        threads,
        starts,
    } = read_trace(trace)?;
    if spans.is_empty() {
        return Err(PlotError::Empty);
    }
    let begin = spans.iter().map(|s| s.start).fold(f64::INFINITY, f64::min);
    let end = spans
        .iter()
        .map(|s| s.end)
        .fold(f64::NEG_INFINITY, f64::max);
    // iteration 0 warms up (its forward pass has no parameters to wait
    // for); the picture starts at iteration 1 when there is one
    let first = usize::from(starts.len() >= 2);
    let (w0, w1) = match starts.get(first) {
        Some(&s) => (s, starts.get(first + n as usize).copied().unwrap_or(end)),
        None => (begin, end),
    };
    if w1 <= w0 {
        return Err(PlotError::Empty);
    }

    let pids: BTreeSet<u64> = spans.iter().map(|s| s.pid).collect();
    let shown: BTreeSet<u64> = pids.iter().copied().take(MAX_TIMELINE_GPUS).collect();
    let rows: Vec<(u64, u64)> = spans
        .iter()
        .filter(|s| shown.contains(&s.pid))
        .map(|s| (s.pid, s.tid))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let row_of: BTreeMap<(u64, u64), usize> =
        rows.iter().enumerate().map(|(i, &k)| (k, i)).collect();

    let span_us = w1 - w0;
    let (unit, factor) = if span_us >= 1e6 {
        ("seconds", 1e-6)
    } else if span_us >= 1e3 {
        ("ms", 1e-3)
    } else {
        ("µs", 1.0)
    };
    // rows run top to bottom; the y axis runs bottom to top
    let y_of = |row: usize| (rows.len() - 1 - row) as f64;
    let mut styles = BTreeSet::new();
    let mut rects = Vec::new();
    for s in &spans {
        let Some(&row) = row_of.get(&(s.pid, s.tid)) else {
            continue;
        };
        let (a, b) = (s.start.max(w0), s.end.min(w1));
        if b <= a {
            continue;
        }
        styles.insert(s.style);
        rects.push(Bar {
            x0: (a - w0) * factor,
            x1: (b - w0) * factor,
            y0: y_of(row) + 0.15,
            y1: y_of(row) + 0.85,
            color: s.style.color(),
        });
    }
    if rects.is_empty() {
        return Err(PlotError::Empty);
    }
    // the iterations' starts, labelled above the plotting area
    let marks: Vec<(f64, String)> = starts
        .iter()
        .enumerate()
        .filter(|&(_, &s)| s >= w0 && s < w1)
        .map(|(k, &s)| ((s - w0) * factor, format!("iteration {k}")))
        .collect();

    let row_label = |&(pid, tid): &(u64, u64)| {
        let process = processes
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| format!("pid {pid}"));
        let thread = threads
            .get(&(pid, tid))
            .cloned()
            .unwrap_or_else(|| format!("thread {tid}"));
        format!("{process} {thread}")
    };
    let labels: Vec<String> = rows.iter().rev().map(row_label).collect();

    let scenario = trace
        .pointer("/otherData/scenario")
        .and_then(Value::as_str)
        .map(|s| format!(" of {s}"))
        .unwrap_or_default();
    let iterations = match marks.len() {
        0 => String::new(),
        1 => format!(": {}", marks[0].1),
        k => format!(": iterations {first}–{}", first + k - 1),
    };
    let total = trace
        .pointer("/otherData/gpus")
        .and_then(Value::as_u64)
        .unwrap_or(pids.len() as u64);
    let gpus = if (shown.len() as u64) < total {
        format!(" ({} of {total} GPUs)", shown.len())
    } else {
        String::new()
    };
    let since = if marks.is_empty() {
        "time since the first event".to_string()
    } else {
        format!("time since the start of iteration {first}")
    };
    Ok(Chart {
        title: format!("Timeline{scenario}{iterations}{gpus}"),
        x: Axis::linear(0.0, span_us * factor, true),
        y: Axis::categories(labels),
        x_title: format!("{since} ({unit})"),
        y_title: String::new(),
        x_grid: true,
        y_grid: false,
        lines: Vec::new(),
        rects,
        marks,
        legend_title: None,
        legend: styles
            .iter()
            .map(|s| LegendEntry {
                label: s.label().to_string(),
                color: s.color(),
                marker: None,
            })
            .collect(),
    })
}

// ---------------------------------------------------------------------------
// Drawing

fn text<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Draws a marker of kind `marker` centred on pixel `at`.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    marker: usize,
    r: i32,
    color: RGBColor,
) -> Result<(), String> {
    let fill = color.filled();
    match marker % MARKERS {
        0 => area.draw(&Circle::new((x, y), r, fill)),
        1 => area.draw(&Rectangle::new([(x - r, y - r), (x + r, y + r)], fill)),
        2 => area.draw(&TriangleMarker::new((x, y), r + r / 3, fill)),
        _ => area.draw(&Polygon::new(
            vec![
                (x, y - r - r / 3),
                (x + r + r / 3, y),
                (x, y + r + r / 3),
                (x - r - r / 3, y),
            ],
            fill,
        )),
    }
    .map_err(text)
}

/// Draws `chart` on `root`: title, legend column on the right, axes with
/// their titles, then the marks. Sizes scale with the picture, from the
/// 1200×800 the font sizes were chosen for.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &Chart) -> Result<(), String> {
    let (w, h) = root.dim_in_pixel();
    let s = (f64::from(w) / f64::from(DEFAULT_WIDTH))
        .min(f64::from(h) / f64::from(DEFAULT_HEIGHT))
        .clamp(0.4, 4.0);
    let px = |v: f64| (v * s).round() as i32;
    let font = |size: f64| TextStyle::from((FAMILY, size * s).into_font()).color(&BLACK);
    let title_font = font(32.0);
    let desc_font = font(26.0);
    let tick_font = font(22.0);
    let legend_font = font(22.0);
    let size = |t: &str, f: &TextStyle| root.estimate_text_size(t, f).map_err(text);

    root.fill(&WHITE).map_err(text)?;
    let area = root.margin(px(14.0), px(10.0), px(14.0), px(24.0));
    let area = if c.title.is_empty() {
        area
    } else {
        area.titled(&c.title, title_font.clone()).map_err(text)?
    };

    // legend column on the right
    let swatch = px(44.0);
    let gap = px(10.0);
    let row_h = px(34.0);
    let mut legend_w = 0;
    for e in &c.legend {
        legend_w = legend_w.max(size(&e.label, &legend_font)?.0 as i32 + swatch + gap);
    }
    // a long legend title (several keys) wraps at its commas, so it never
    // widens the legend more than its longest part
    if let Some(t) = &c.legend_title {
        for part in t.split(", ") {
            legend_w = legend_w.max(size(part, &legend_font)?.0 as i32);
        }
    }
    let (area_w, _) = area.dim_in_pixel();
    let legend_w = if c.legend.is_empty() {
        0
    } else {
        (legend_w + px(30.0)).min(area_w as i32 * 2 / 5)
    };
    let (plot, legend) = area.split_horizontally(area_w as i32 - legend_w);

    // label areas sized from the labels they hold
    let tick = px(6.0);
    let (_, tick_h) = size("0123456789", &tick_font)?;
    let (_, desc_h) = size("Ag", &desc_font)?;
    let mut y_label_w = 0;
    for l in &c.y.labels {
        y_label_w = y_label_w.max(size(l, &tick_font)?.0 as i32);
    }
    let desc_room = |t: &str| {
        if t.is_empty() {
            0
        } else {
            desc_h as i32 + px(14.0)
        }
    };

    let y_area = 2 * tick + y_label_w + px(8.0) + desc_room(&c.y_title);
    // category labels too wide for their slots alternate between up to
    // three rows, and are cut short ("…") if that is not enough
    let mut x_labels = c.x.labels.clone();
    let mut x_rows = 1;
    let mut right = px(16.0);
    if c.x.categorical && !x_labels.is_empty() {
        let (plot_w, _) = plot.dim_in_pixel();
        let slot = (plot_w as i32 - y_area - px(16.0)) / x_labels.len() as i32;
        let mut widest = 0;
        for l in &x_labels {
            widest = widest.max(size(l, &tick_font)?.0 as i32);
        }
        let gap = px(12.0);
        x_rows = ((widest + gap) as f64 / slot.max(1) as f64)
            .ceil()
            .clamp(1.0, 3.0) as i32;
        let limit = slot * x_rows - gap;
        for l in &mut x_labels {
            // cut from the middle, keeping both ends ("network-pre…-ib-7"):
            // labels of a sweep tend to differ at the end; one character
            // fewer a round, so this ends by "…" at worst
            let chars: Vec<char> = l.chars().collect();
            let mut keep = chars.len();
            while size(l, &tick_font)?.0 as i32 > limit && keep > 0 {
                keep -= 1;
                let head: String = chars[..keep.div_ceil(2)].iter().collect();
                let tail: String = chars[chars.len() - keep / 2..].iter().collect();
                *l = format!("{head}…{tail}");
            }
        }
        // the last label may stick out past its slot on the right
        if let Some(last) = x_labels.last() {
            let half = size(last, &tick_font)?.0 as i32 / 2;
            right = right.max(half - slot / 2 + px(6.0));
        }
    }
    let row_step = tick_h as i32 + px(6.0);
    let x_area = 2 * tick + x_rows * row_step + px(2.0) + desc_room(&c.x_title);

    // room above the plotting area for the marks' labels
    let mark_font = font(20.0).pos(Pos::new(HPos::Left, VPos::Bottom));
    let marks_h = if c.marks.is_empty() {
        0
    } else {
        size("iteration", &mark_font)?.1 as i32 + px(8.0)
    };
    let mut chart = ChartBuilder::on(&plot)
        .margin_top(px(12.0) + marks_h)
        .margin_right(right)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(c.x.clone(), c.y.clone())
        .map_err(text)?;
    let x_label = |v: &f64| {
        if c.x.categorical {
            String::new()
        } else {
            c.x.label(*v)
        }
    };
    let y_label = |v: &f64| c.y.label(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .label_style(tick_font.clone())
        .axis_desc_style(desc_font.clone())
        .bold_line_style(BLACK.mix(0.18))
        .light_line_style(BLACK.mix(0.06))
        .axis_style(BLACK.stroke_width(px(1.5).max(1) as u32))
        .set_all_tick_mark_size(tick);
    if !c.x_title.is_empty() {
        mesh.x_desc(c.x_title.as_str());
    }
    if !c.y_title.is_empty() {
        mesh.y_desc(c.y_title.as_str());
    }
    if !c.x_grid {
        mesh.disable_x_mesh();
    }
    if !c.y_grid {
        mesh.disable_y_mesh();
    }
    mesh.draw().map_err(text)?;
    if c.x.categorical {
        let centred = tick_font.pos(Pos::new(HPos::Center, VPos::Top));
        for (i, (t, l)) in c.x.ticks.iter().zip(&x_labels).enumerate() {
            let (x, y) = chart.backend_coord(&(*t, c.y.lo));
            let row = i as i32 % x_rows;
            root.draw_text(l, &centred, (x, y + 2 * tick + row * row_step))
                .map_err(text)?;
        }
    }

    chart
        .draw_series(
            c.rects
                .iter()
                .map(|b| Rectangle::new([(b.x0, b.y0), (b.x1, b.y1)], b.color.filled())),
        )
        .map_err(text)?;
    for l in &c.lines {
        chart
            .draw_series(LineSeries::new(
                l.points.iter().copied(),
                l.color.stroke_width(px(3.0).max(1) as u32),
            ))
            .map_err(text)?;
        for p in &l.points {
            draw_marker(root, chart.backend_coord(p), l.marker, px(7.0), l.color)?;
        }
    }
    for (x, label) in &c.marks {
        let top = chart.backend_coord(&(*x, c.y.hi));
        let bottom = chart.backend_coord(&(*x, c.y.lo));
        root.draw(&PathElement::new(
            vec![(top.0, top.1 - marks_h + px(4.0)), bottom],
            BLACK.mix(0.7).stroke_width(px(2.0).max(1) as u32),
        ))
        .map_err(text)?;
        root.draw_text(label, &mark_font, (top.0 + px(4.0), top.1 - px(4.0)))
            .map_err(text)?;
    }

    // the legend, aligned with the top of the plotting area
    if !c.legend.is_empty() {
        let (x0, _) = legend.get_base_pixel();
        let (_, ys) = chart.plotting_area().get_pixel_range();
        let mut y = ys.start + px(6.0);
        let left = x0 + px(14.0);
        let entry_font = legend_font.pos(Pos::new(HPos::Left, VPos::Center));
        if let Some(t) = &c.legend_title {
            let room = legend_w - px(30.0);
            let mut lines: Vec<String> = Vec::new();
            for part in t.split(", ") {
                match lines.last_mut() {
                    Some(l) if size(&format!("{l}, {part}"), &legend_font)?.0 as i32 <= room => {
                        l.push_str(", ");
                        l.push_str(part);
                    }
                    Some(l) => {
                        l.push(',');
                        lines.push(part.to_string());
                    }
                    None => lines.push(part.to_string()),
                }
            }
            for l in &lines {
                root.draw_text(l, &entry_font, (left, y + row_h / 2))
                    .map_err(text)?;
                y += row_h;
            }
        }
        for e in &c.legend {
            let mid = y + row_h / 2;
            match e.marker {
                Some(m) => {
                    root.draw(&PathElement::new(
                        vec![(left, mid), (left + swatch - gap, mid)],
                        e.color.stroke_width(px(3.0).max(1) as u32),
                    ))
                    .map_err(text)?;
                    draw_marker(root, (left + (swatch - gap) / 2, mid), m, px(7.0), e.color)?;
                }
                None => {
                    root.draw(&Rectangle::new(
                        [
                            (left, mid - px(10.0)),
                            (left + swatch - gap, mid + px(10.0)),
                        ],
                        e.color.filled(),
                    ))
                    .map_err(text)?;
                }
            }
            root.draw_text(&e.label, &entry_font, (left + swatch, mid))
                .map_err(text)?;
            y += row_h;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::df;

    #[test]
    fn units_follow_column_names() {
        let df = df!("throughput_unit" => ["tokens/s"]).unwrap();
        let name = |c: &str, max: f64| unit(Quantity::of(c), max, &df).name;
        assert_eq!(name("iteration_time_s", 2.5).as_deref(), Some("seconds"));
        assert_eq!(name("compute_s", 0.25).as_deref(), Some("ms"));
        assert_eq!(name("compute_s", 0.0002).as_deref(), Some("µs"));
        assert_eq!(name("throughput", 1e4).as_deref(), Some("tokens/s"));
        assert_eq!(name("scaling_efficiency", 0.9).as_deref(), Some("%"));
        assert_eq!(
            name("bytes_sent_per_gpu", 3.0 * 1024.0 * 1024.0).as_deref(),
            Some("MiB")
        );
        assert_eq!(name("bytes_sent_per_gpu", 100.0).as_deref(), Some("bytes"));
        assert_eq!(name("speedup", 3.0).as_deref(), Some("×"));
        assert_eq!(name("gpus", 64.0), None);
        let empty = df!("x" => [1]).unwrap();
        assert_eq!(
            unit(Quantity::Throughput, 1.0, &empty).name.as_deref(),
            Some("samples/s")
        );
        assert_eq!(unit(Quantity::Fraction, 1.0, &empty).factor, 100.0);
    }

    #[test]
    fn linear_ticks_are_round_and_cover_the_data() {
        let a = Axis::linear(0.0, 0.93, true);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 0.93);
        assert_eq!(a.labels, ["0.0", "0.2", "0.4", "0.6", "0.8"]);
        let b = Axis::linear(4.0, 64.0, false);
        assert!(b.lo < 4.0 && b.hi > 64.0);
        assert_eq!(b.labels, ["10", "20", "30", "40", "50", "60"]);
        let c = Axis::linear(0.0, 3.0e7, true);
        assert_eq!(c.labels[1], "5e6");
    }

    #[test]
    fn axes_turn_logarithmic_beyond_two_decades() {
        let a = Axis::numeric(&[1.0, 50.0, 100.0], false, false);
        assert!(!a.log);
        let b = Axis::numeric(&[1.0, 50.0, 101.0], false, false);
        assert!(b.log);
        assert_eq!((b.lo, b.hi), (0.8, 126.25));
        assert_eq!(b.labels, ["1", "2", "5", "10", "20", "50", "100"]);
        let wide = Axis::numeric(&[1.0, 1e6], false, false);
        assert_eq!(
            wide.labels,
            ["1", "10", "100", "1000", "10000", "100000", "1e6"]
        );
        let c = Axis::numeric(&[3.0, 40.0], false, false);
        assert!(!c.log);
        let d = Axis::numeric(&[0.5, 80.0], false, false);
        assert!(d.log);
        assert_eq!(d.labels, ["0.5", "1", "2", "5", "10", "20", "50", "100"]);
        // few GPU counts: ticks at the data
        let gpus = [1.0, 4.0, 16.0, 64.0, 256.0, 4.0];
        let e = Axis::numeric(&gpus, false, true);
        assert!(e.log);
        assert_eq!(e.labels, ["1", "4", "16", "64", "256"]);
        // a negative value keeps the axis linear
        assert!(!Axis::numeric(&[-1.0, 1000.0], false, false).log);
    }

    #[test]
    fn axis_maps_ends_to_limits() {
        let a = Axis::log(1.25, 800.0, None);
        assert_eq!(a.map(&1.0, (100, 700)), 100);
        assert_eq!(a.map(&1000.0, (100, 700)), 700);
        assert_eq!(a.map(&10.0, (100, 700)), 300);
        let c = Axis::categories(vec!["a".into(), "b".into()]);
        assert_eq!(c.map(&1.0, (0, 100)), 50);
        assert_eq!(c.label(1.5), "b");
    }

    #[test]
    fn numbers_print_short() {
        assert_eq!(short(0.30000000000000004), "0.3");
        assert_eq!(short(1234567.0), "1.23457e6");
        assert_eq!(short(0.00025), "2.5e-4");
        assert_eq!(value_label(16.0), "16");
        assert_eq!(value_label(2.5), "2.5");
        assert_eq!(nice_step(10.8), 10.0);
        assert_eq!(nice_step(0.21), 0.2);
        assert_eq!(nice_step(0.16), 0.2);
        assert_eq!(nice_step(0.24), 0.25);
        assert_eq!(decimals(0.25), 2);
        assert_eq!(decimals(20.0), 0);
    }

    fn trace() -> Value {
        // 2 GPUs, iterations at 0, 100, 200, 300 µs; one event per iteration
        // per track, plus one in iteration 0 only
        let mut events = vec![
            serde_json::json!({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}),
        ];
        for g in 0..2 {
            for (k, start) in [0.0, 100.0, 200.0, 300.0].iter().enumerate() {
                let pass = if k % 2 == 0 { "fwd" } else { "bwd" };
                events.push(serde_json::json!({"ph": "X", "pid": g, "tid": 0, "cat": "compute", "ts": start + 10.0, "dur": 50.0, "args": {"pass": pass}}));
                events.push(serde_json::json!({"ph": "X", "pid": g, "tid": 1, "cat": "communication", "ts": start + 60.0, "dur": 30.0}));
            }
        }
        serde_json::json!({"traceEvents": events, "otherData": {"scenario": "tiny", "gpus": 2, "iteration_starts_us": [0.0, 100.0, 200.0, 300.0]}})
    }

    #[test]
    fn timeline_shows_iterations_after_the_first() {
        let c = timeline_chart(&trace(), None).unwrap();
        // iterations 1 and 2: 2 GPUs × 2 tracks × 2 iterations
        assert_eq!(c.rects.len(), 8);
        assert_eq!(
            c.marks.iter().map(|m| m.1.as_str()).collect::<Vec<_>>(),
            ["iteration 1", "iteration 2"]
        );
        assert_eq!(c.x_title, "time since the start of iteration 1 (µs)");
        assert_eq!(c.title, "Timeline of tiny: iterations 1–2");
        // rows top to bottom: GPU 0 compute, GPU 0 comm, pid 1 compute, pid 1 comm
        assert_eq!(
            c.y.labels.last().map(String::as_str),
            Some("GPU 0 thread 0")
        );
        assert_eq!(c.legend.len(), 3);
        let one = timeline_chart(&trace(), Some(1)).unwrap();
        assert_eq!(one.rects.len(), 4);
        assert!(matches!(
            timeline_chart(&trace(), Some(0)),
            Err(PlotError::BadSpec(_))
        ));
        assert!(matches!(
            timeline_chart(&serde_json::json!({"events": []}), None),
            Err(PlotError::BadTrace(_))
        ));
    }

    /// Renders into memory and counts distinct colours: the picture is not
    /// blank. (The integration tests cannot decode a PNG without an image
    /// crate; this checks the same drawing code pixel by pixel.)
    #[test]
    fn pictures_have_many_colours() {
        register_fonts();
        let df = df!(
            "gpus" => [4i64, 8, 16, 4, 8, 16],
            "method" => ["ring", "ring", "ring", "ps", "ps", "ps"],
            "throughput" => [1200.0, 2300.0, 4400.0, 1100.0, 1900.0, 2800.0],
        )
        .unwrap();
        let mut spec = PlotSpec::new("gpus", ["throughput"], Kind::Line);
        spec.series = Some("method".into());
        for chart in [
            table_chart(&df, &spec).unwrap(),
            timeline_chart(&trace(), None).unwrap(),
        ] {
            let (w, h) = (600u32, 400u32);
            let mut rgb = vec![0u8; (w * h * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                draw(&root, &chart).unwrap();
                root.present().unwrap();
            }
            let colours: BTreeSet<&[u8]> = rgb.chunks(3).collect();
            assert!(colours.len() > 50, "{} colours", colours.len());
            let white = rgb.chunks(3).filter(|p| *p == [255, 255, 255]).count();
            let share = white as f64 / f64::from(w * h);
            assert!(share > 0.3 && share < 0.99, "white share {share}");
        }
    }
}
