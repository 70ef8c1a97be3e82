//! A sweep's report: one Markdown file with the setup, the table of
//! results and the standard plots, for a design review.
//!
//! [`write_report`] writes into a directory:
//!
//! * `report.md`: what was simulated (the settings every point shares, the
//!   swept keys and their values, the scenario file when there is one),
//!   the fastest and slowest points, the table of results (up to
//!   [`MAX_TABLE_ROWS`] rows) and the plots below, embedded;
//! * `results.csv`: the whole table;
//! * `throughput.png`, `scaling_efficiency.png` (SVG instead with
//!   [`Steer::format`]): against the x axis chosen
//!   below, one line (or bar) per series;
//! * `speedup.png`: throughput over the first series (the baseline), as
//!   grouped bars (EmbRace Fig. 7's form), when there are several series;
//! * `breakdown.png`: compute, compression and exposed communication per
//!   iteration, stacked (gTop-k Fig. 11's form), at the largest x;
//! * `timeline-fastest.png`, `timeline-slowest.png`: Gantt pictures of the
//!   fastest and slowest point of the breakdown, when the scenario is at
//!   hand to re-run them (their traces are the `.json` files beside them).
//!
//! **How the plots are laid out.** Swept keys are the scenario's `[sweep]`
//! keys, or, from a table alone, the columns `dtsim sweep` puts between
//! `grid_points` and `scenario`. The x axis is the GPU
//! count when `cluster.nodes` is swept, else the numeric swept key with
//! the most values, else the swept key with the most values (then bars).
//! The other swept keys make the series, fewest values first, as long as
//! there are at most [`MAX_SERIES`] series; any key left over is held at
//! its first value in the plots (the report says so), while the table keeps
//! every point. The same input gives the same bytes.

use crate::columns::{self, ColumnError, SPEEDUP};
use crate::labels;
use crate::plot::{Gantt, Kind, PlotError, PlotSpec, plot_gantt, plot_table};
use crate::table::{self, TableError};
use polars::prelude::*;
use sim::scenario::Grid;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Most rows shown in `report.md`'s table (all are in `results.csv`).
pub const MAX_TABLE_ROWS: usize = 200;
/// Most models (or batches) whose fastest and slowest points the
/// report's headline names.
pub const MAX_HEADLINE_GROUPS: usize = 20;
/// GPUs in a report's timelines.
pub const TIMELINE_GPUS: u32 = 2;
/// Most series (lines, bars per group) in a plot.
pub const MAX_SERIES: usize = 8;

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The table is not a dtsim results table, or has no rows.
    #[error("{0}")]
    Input(String),
    /// A column the report reads is missing or unreadable, or a derived
    /// one (the speedup) cannot be taken.
    #[error(transparent)]
    Column(#[from] ColumnError),
    /// A plot failed.
    #[error("{0}")]
    Plot(#[from] PlotError),
    /// The table could not be written.
    #[error(transparent)]
    Table(#[from] TableError),
    /// A file of the report could not be written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The scenario's sweep failed.
    #[error(transparent)]
    Sweep(#[from] crate::sweep::SweepError),
    /// The scenario could not be read.
    #[error(transparent)]
    Scenario(#[from] sim::scenario::ScenarioError),
}

impl ReportError {
    /// Whether the error is the input's (exit code 2) rather than a file
    /// of the report that could not be written (exit code 1).
    pub fn is_input(&self) -> bool {
        match self {
            ReportError::Input(_) | ReportError::Scenario(_) => true,
            ReportError::Column(c) => c.is_input(),
            ReportError::Plot(p) => p.is_input(),
            ReportError::Table(t) => t.is_input(),
            ReportError::Sweep(s) => s.is_input(),
            ReportError::Io { .. } => false,
        }
    }
}

/// How the user steers the report's plots, as `dtsim plot` is steered;
/// what is left unset the report chooses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Steer {
    /// The x axis's column.
    pub x: Option<String>,
    /// The swept keys whose combinations make the series (empty: the
    /// report's choice).
    pub series: Vec<String>,
    /// `COL=VALUE` filters applied to the table first; each is stated on
    /// every picture.
    pub filters: Vec<String>,
    /// The pictures' format: PNG (the default) or SVG (vector, for a
    /// paper).
    pub format: Picture,
}

/// The format of a report's pictures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Picture {
    /// PNG, 1200×800.
    #[default]
    Png,
    /// SVG, text and shapes.
    Svg,
}

impl Picture {
    /// The files' extension, as the command line spells the format.
    pub fn ext(self) -> &'static str {
        match self {
            Picture::Png => "png",
            Picture::Svg => "svg",
        }
    }
}

/// The one table of the formats' names (`sim::names`): parsing and the
/// "unknown picture format" message come from it.
impl sim::names::Named for Picture {
    const ALL: &'static [Picture] = &[Picture::Png, Picture::Svg];
    const WHAT: &'static str = "picture format";
    fn name(self) -> &'static str {
        self.ext()
    }
}

impl std::str::FromStr for Picture {
    type Err = String;

    /// Parses `png` or `svg`.
    fn from_str(s: &str) -> Result<Picture, String> {
        <Picture as sim::names::Named>::parse(s)
    }
}

/// What `dtsim report FILE -o DIR` was asked.
#[derive(Debug, Clone)]
pub struct ReportRequest {
    /// A scenario (`.toml`: its sweep is run first, into
    /// `DIR/results.parquet`) or a results table (`.csv`, `.parquet`).
    pub input: PathBuf,
    /// The report's directory (created if missing).
    pub dir: PathBuf,
    /// The sweep's options (a scenario's).
    pub sweep: crate::sweep::Options,
    /// The user's steering.
    pub steer: Steer,
    /// The command as typed and dtsim's version, for the header.
    pub command: String,
    /// dtsim's version.
    pub version: String,
}

/// What [`make`] did.
#[derive(Debug, Clone)]
pub struct Made {
    /// The files written, `report.md` first.
    pub written: Written,
    /// The sweep's summary and its table, when the input was a scenario.
    pub swept: Option<(crate::sweep::Summary, PathBuf)>,
}

/// `dtsim report`: runs a scenario's sweep (or reads a table), applies the
/// filters, and writes the report.
pub fn make(req: &ReportRequest) -> Result<Made, ReportError> {
    let input = &req.input;
    let is_scenario = input
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if req.dir.exists() && !req.dir.is_dir() {
        return Err(ReportError::Input(format!(
            "{}: exists and is not a directory",
            req.dir.display()
        )));
    }
    if !is_scenario && table::Format::of(input).is_err() {
        return Err(ReportError::Input(format!(
            "{}: give a scenario (.toml) or a results table (.csv, .parquet)",
            input.display()
        )));
    }
    let (table_path, grid, text, swept) = if is_scenario {
        let grid = sim::scenario::open_file(input)?;
        let text = std::fs::read_to_string(input)
            .map_err(|e| ReportError::Input(format!("{}: {e}", input.display())))?;
        std::fs::create_dir_all(&req.dir).map_err(|e| io(&req.dir, e))?;
        let out = req.dir.join("results.parquet");
        let summary = crate::sweep::run(&grid, &out, &req.sweep).map_err(|e| match e {
            crate::sweep::SweepError::Point { .. } => {
                ReportError::Input(format!("{}: {e}", input.display()))
            }
            e => e.into(),
        })?;
        (out.clone(), Some(grid), Some(text), Some((summary, out)))
    } else {
        (input.clone(), None, None, None)
    };
    let mut df = table::read(&table_path)?;
    for f in &req.steer.filters {
        df = columns::keep_where(&df, f)?;
    }
    let source = Source {
        input: input.display().to_string(),
        command: req.command.clone(),
        version: req.version.clone(),
        scenario_text: text,
    };
    let written = write_steered(&df, &source, grid.as_ref(), &req.dir, &req.steer)?;
    Ok(Made { written, swept })
}

/// Where the results come from, for the report's header.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// The input as the user named it (scenario or table path).
    pub input: String,
    /// The command that made the report, as typed.
    pub command: String,
    /// dtsim's version.
    pub version: String,
    /// The scenario text, when the report was made from a scenario.
    pub scenario_text: Option<String>,
}

/// What [`write_report`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// Every file, `report.md` first.
    pub files: Vec<PathBuf>,
}

fn io(path: &Path, e: impl std::fmt::Display) -> ReportError {
    ReportError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The result columns the report reads.
const NEEDED: [&str; 9] = [
    "gpus",
    "iteration_time_s",
    "throughput",
    "throughput_unit",
    "scaling_efficiency",
    "compute_s",
    "compression_s",
    "exposed_comm_s",
    "bytes_sent_per_gpu",
];

/// Result columns shown in the setup when every row shares them (named
/// by [`crate::labels`]).
const SETTINGS: [&str; 15] = [
    "scenario",
    "nodes",
    "gpus",
    "network",
    "net_model",
    "model",
    "gpu",
    "batch_per_gpu",
    "dense",
    "algo",
    "sparse",
    "schedule",
    "compute_jitter",
    "message_overhead_s",
    "nic_efficiency",
];

/// Distinct values of a column in order of first appearance (numbers
/// sorted ascending).
fn distinct(df: &DataFrame, name: &str) -> Result<Vec<String>, ColumnError> {
    let texts = columns::texts(df, name)?;
    if columns::column(df, name)?.dtype().is_primitive_numeric() {
        let mut v: Vec<(f64, String)> = columns::numbers(df, name)?
            .into_iter()
            .zip(texts)
            .filter_map(|(n, t)| Some((n?, t?)))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v.dedup_by(|a, b| a.0 == b.0);
        return Ok(v.into_iter().map(|(_, t)| t).collect());
    }
    let mut out: Vec<String> = Vec::new();
    for v in texts.into_iter().flatten() {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// A column's values as text, nulls as empty strings.
fn texts_or_empty(df: &DataFrame, name: &str) -> Result<Vec<String>, ColumnError> {
    Ok(columns::texts(df, name)?
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect())
}

/// Significant-figure formatting for the Markdown table.
fn sig(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    let dec = (digits - 1 - mag).max(0) as usize;
    format!("{v:.dec$}")
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The layout of the standard plots.
#[derive(Debug, Clone)]
struct Layout {
    /// The x column, and whether it is numeric (lines) or categories (bars).
    x: Option<(String, bool)>,
    /// Swept keys whose combinations make the series.
    series: Vec<String>,
    /// Swept keys held at one value in the plots: (key, value).
    held: Vec<(String, String)>,
    /// Whether the user chose the x axis or the series (else the keys are
    /// held to keep at most [`MAX_SERIES`] series).
    chosen: bool,
}

fn layout(df: &DataFrame, swept: &[String]) -> Result<Layout, ColumnError> {
    let counts: Vec<(String, usize, bool)> = swept
        .iter()
        .map(|k| {
            let numeric = df
                .column(k)
                .map(|c| c.dtype().is_primitive_numeric())
                .unwrap_or(false);
            Ok((k.clone(), distinct(df, k)?.len(), numeric))
        })
        .collect::<Result<_, ColumnError>>()?;
    let nodes_swept = counts
        .iter()
        .any(|(k, n, _)| k == "cluster.nodes" && *n > 1);
    let (x, consumed): (Option<(String, bool)>, Option<String>) = if nodes_swept {
        (Some(("gpus".into(), true)), Some("cluster.nodes".into()))
    } else if let Some((k, _, _)) = counts
        .iter()
        .filter(|(_, n, num)| *num && *n > 1)
        .max_by_key(|(_, n, _)| *n)
    {
        (Some((k.clone(), true)), Some(k.clone()))
    } else if let Some((k, _, _)) = counts
        .iter()
        .filter(|(_, n, _)| *n > 1)
        .max_by_key(|(_, n, _)| *n)
    {
        (Some((k.clone(), false)), Some(k.clone()))
    } else {
        (None, None)
    };
    let mut rest: Vec<&(String, usize, bool)> = counts
        .iter()
        .filter(|(k, n, _)| Some(k) != consumed.as_ref() && *n > 1)
        .collect();
    rest.sort_by_key(|(_, n, _)| *n);
    let mut series = Vec::new();
    let mut held = Vec::new();
    let mut product = 1;
    for (k, n, _) in rest {
        if product * n <= MAX_SERIES {
            product *= n;
            series.push(k.clone());
        } else {
            let first = columns::texts(df, k)?.into_iter().flatten().next();
            held.push((k.clone(), first.unwrap_or_default()));
        }
    }
    // keep the series in the table's column order
    series.sort_by_key(|k| swept.iter().position(|s| s == k));
    Ok(Layout {
        x,
        series,
        held,
        chosen: false,
    })
}

/// The report's own layout with the user's choices put in: a chosen x
/// (numeric: lines; else bars) frees the key it replaces; chosen series
/// are the series, and every other key that still varies is held at its
/// first value (and said so on the pictures).
fn steered(
    df: &DataFrame,
    swept: &[String],
    mut lay: Layout,
    steer: &Steer,
) -> Result<Layout, ColumnError> {
    if steer.x.is_none() && steer.series.is_empty() {
        return Ok(lay);
    }
    // a chosen x or series is a setting the sweep varies: a result
    // column on the x axis drew "Throughput against throughput", and a
    // series on the x axis was dropped without a word (a review)
    let setting = |k: &str| k == "gpus" || swept.iter().any(|s| s == k);
    let settings = || {
        std::iter::once("gpus")
            .chain(swept.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(x) = &steer.x {
        let numeric = columns::column(df, x)?.dtype().is_primitive_numeric();
        if !setting(x) {
            return Err(ColumnError::Table(format!(
                "--x {x}: the x axis is a setting the sweep varies ({}), not a result",
                settings()
            )));
        }
        lay.x = Some((x.clone(), numeric));
    }
    let x = lay.x.as_ref().map(|(x, _)| x.as_str());
    // gpus on the x axis stands for the node count
    let consumed = |k: &str| Some(k) == x || (x == Some("gpus") && k == "cluster.nodes");
    if !steer.series.is_empty() {
        for s in &steer.series {
            columns::column(df, s)?;
            if !setting(s) {
                return Err(ColumnError::Table(format!(
                    "--series {s}: a series is a setting the sweep varies ({}), not a result",
                    settings()
                )));
            }
            if consumed(s) {
                return Err(ColumnError::Table(format!(
                    "--series {s}: that is the x axis; choose another setting, or another --x"
                )));
            }
        }
        lay.series = steer.series.clone();
    }
    lay.chosen = true;
    lay.series.retain(|k| !consumed(k));
    lay.held.clear();
    for k in swept {
        if consumed(k) || lay.series.contains(k) {
            continue;
        }
        if distinct(df, k)?.len() > 1 {
            let first = columns::texts(df, k)?.into_iter().flatten().next();
            lay.held.push((k.clone(), first.unwrap_or_default()));
        }
    }
    Ok(lay)
}

/// The table's swept-key columns: the grid's keys when the scenario is at
/// hand; otherwise the table's settings ([`columns::settings`]: for a
/// table from `dtsim sweep`, the columns between `grid_points` and the
/// first result column).
fn swept_columns(df: &DataFrame, grid: Option<&Grid>) -> Vec<String> {
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    if let Some(g) = grid {
        return g
            .keys()
            .iter()
            .map(|k| crate::sweep::swept_column(k))
            .filter(|c| names.contains(c))
            .collect();
    }
    columns::settings(df)
}

/// Writes the report of `df` (a table from `dtsim sweep`) into `dir`.
///
/// `grid`, when given, is the scenario the table was swept from: the
/// report then also draws the timelines of the fastest and slowest points.
pub fn write_report(
    df: &DataFrame,
    source: &Source,
    grid: Option<&Grid>,
    dir: &Path,
) -> Result<Written, ReportError> {
    write_steered(df, source, grid, dir, &Steer::default())
}

/// [`write_report`], steered by the user ([`Steer`]; its filters are
/// already applied to `df` and are stated on the pictures).
pub fn write_steered(
    df: &DataFrame,
    source: &Source,
    grid: Option<&Grid>,
    dir: &Path,
    steer: &Steer,
) -> Result<Written, ReportError> {
    // what the directory held before: a failed run removes the files it
    // created, never one it found (an earlier report's, or the input table)
    let before: std::collections::BTreeSet<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let mut files = Vec::new();
    let written = write_files(df, source, grid, dir, steer, &mut files);
    if written.is_err() {
        for f in files.iter().filter(|f| !before.contains(*f)) {
            let _ = std::fs::remove_file(f);
        }
    }
    written
}

/// A plot of the report that failed, named (an output error names its
/// file already).
fn plot_failed(file: &str, e: PlotError) -> ReportError {
    match e {
        PlotError::Output { .. } => ReportError::Plot(e),
        e => ReportError::Input(format!("{file}: {e}")),
    }
}

/// [`write_report`]'s work; `files` lists what it has written so far.
fn write_files(
    df: &DataFrame,
    source: &Source,
    grid: Option<&Grid>,
    dir: &Path,
    steer: &Steer,
    files: &mut Vec<PathBuf>,
) -> Result<Written, ReportError> {
    for c in NEEDED {
        if df.column(c).is_err() {
            return Err(ReportError::Input(format!(
                "{}: no `{c}` column; is it a table from `dtsim sweep`?",
                source.input
            )));
        }
    }
    if df.height() == 0 {
        return Err(ReportError::Input(format!(
            "{}: the table has no rows: nothing to report",
            source.input
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    files.push(dir.join("report.md"));
    let swept = swept_columns(df, grid);
    let lay = steered(df, &swept, layout(df, &swept)?, steer)?;
    let unit = columns::texts(df, "throughput_unit")?
        .into_iter()
        .flatten()
        .next()
        .unwrap_or_else(|| "samples/s".into());

    // the rows the plots show
    let mut shown = df.clone();
    for (k, v) in &lay.held {
        shown = columns::holding(&shown, k, v)?;
    }
    // the series label's column (and legend title): a single key keeps its
    // dotted name; several are named by their last parts, joined by commas
    // (which no result column has, so nothing is overwritten)
    let series_col = match lay.series.len() {
        0 => None,
        1 => Some(lay.series[0].clone()),
        _ => Some(
            lay.series
                .iter()
                .map(|k| k.rsplit('.').next().unwrap_or(k))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    };
    if let Some(name) = &series_col {
        shown = columns::with_label(&shown, &lay.series, name)?;
    }
    let mut plots: Vec<(String, String, String)> = Vec::new(); // (file, heading, caption)
    let ext = steer.format.ext();
    // what every picture holds fixed, stated on it
    let held_notes: Vec<String> = lay
        .held
        .iter()
        .map(|(k, v)| labels::setting(k, v))
        .chain(steer.filters.iter().map(|f| crate::plot::filter_note(f)))
        .collect();
    // a column in a caption: "GPUs", "inter-node network"
    let words = |c: &str| labels::in_sentence(&labels::label(c));
    let mut draw =
        |file: &str, spec: PlotSpec, df: &DataFrame, heading: String, caption: String| {
            let path = dir.join(file);
            plot_table(df, &spec, &path).map_err(|e| plot_failed(file, e))?;
            files.push(path);
            plots.push((file.to_string(), heading, caption));
            Ok::<(), ReportError>(())
        };
    if let Some((x, numeric)) = &lay.x {
        let kind = if *numeric { Kind::Line } else { Kind::Bar };
        for (stem, y, what) in [
            (
                "throughput",
                "throughput",
                labels::titled(&labels::label("throughput"), Some(&unit)),
            ),
            (
                "scaling_efficiency",
                "scaling_efficiency",
                "Scaling efficiency (throughput over GPUs × one GPU's)".to_string(),
            ),
        ] {
            let mut spec = PlotSpec::new(x.clone(), [y], kind);
            spec.series = series_col.clone();
            spec.title = Some(format!("{what} against {}", labels::label(x)));
            spec.notes = held_notes.clone();
            draw(
                &format!("{stem}.{ext}"),
                spec,
                &shown,
                what.clone(),
                format!("{what} against {}.", words(x)),
            )?;
        }
        // speedup of one series key (a method, preferably) over its first
        // value, between points that differ in that key alone; never a
        // model's or a batch's (columns::incomparable); none when the key
        // has no value left in the rows shown, as in a hand-edited table
        let key = lay
            .series
            .iter()
            .find(|k| k.starts_with("strategy."))
            .or_else(|| lay.series.iter().find(|k| !columns::incomparable(k)));
        if let (Some(s), Some(key)) = (&series_col, key)
            && let Some(base) = distinct(&shown, key)?.into_iter().next()
        {
            let sp = columns::speedup(&shown, x, "throughput", key, &base)?;
            let mut spec = PlotSpec::new(x.clone(), [SPEEDUP], Kind::Bar);
            spec.series = Some(s.clone());
            spec.title = Some(format!(
                "Speedup in throughput over {}",
                labels::setting(key, &base)
            ));
            spec.notes = held_notes.clone();
            draw(
                &format!("speedup.{ext}"),
                spec,
                &sp,
                format!(
                    "Speedup over {}",
                    labels::in_sentence(&labels::setting(key, &base))
                ),
                format!(
                    "Throughput of each point over that of the point with `{key}` = {base} \
                     and every other setting the same (the same {}).",
                    words(x)
                ),
            )?;
        }
    }
    // breakdown: at the largest x, one bar per series (or per x without series)
    let (bd, bd_x, at) = match (&lay.x, &series_col) {
        (Some((x, numeric)), Some(s)) => {
            // the largest number, or the first category
            let values = distinct(&shown, x)?;
            let top = if *numeric {
                values.last()
            } else {
                values.first()
            };
            let top = top.cloned().unwrap_or_default();
            (
                columns::holding(&shown, x, &top)?,
                s.clone(),
                Some((x.clone(), top)),
            )
        }
        (Some((x, _)), None) => (shown.clone(), x.clone(), None),
        (None, _) => (shown.clone(), "gpus".to_string(), None),
    };
    // the same place in the picture's title (human names) and in the
    // caption (the key, as the user types it)
    let at_words = |title: bool| {
        at.as_ref()
            .map(|(x, v)| {
                if x == "gpus" {
                    format!(" at {v} GPUs")
                } else if title {
                    format!(" at {}", labels::setting(x, v))
                } else {
                    format!(" at `{x}` = {v}")
                }
            })
            .unwrap_or_default()
    };
    {
        let parts = ["compute_s", "compression_s", "exposed_comm_s"];
        let mut spec = PlotSpec::new(bd_x.clone(), parts, Kind::Stacked);
        spec.title = Some(format!("Time per iteration{}", at_words(true)));
        spec.notes = held_notes.clone();
        // the picture leaves out a part that is zero in every bar; the
        // caption says which
        let mut drawn = Vec::new();
        let mut zero = Vec::new();
        for c in parts {
            // (a column that is not numeric fails the plot, by its name)
            let nonzero = columns::numbers(&bd, c)
                .map_or(true, |v| v.iter().any(|v| v.is_some_and(|v| v != 0.0)));
            let name = match c {
                "exposed_comm_s" => "exposed communication (not hidden behind compute)".into(),
                c => words(c),
            };
            if nonzero { &mut drawn } else { &mut zero }.push(name);
        }
        let by = if lay.series.is_empty() {
            words(&bd_x)
        } else {
            lay.series
                .iter()
                .map(|k| words(k))
                .collect::<Vec<_>>()
                .join(" and ")
        };
        let left_out = if zero.is_empty() || drawn.is_empty() {
            String::new()
        } else {
            format!(
                "; {} (zero at every point drawn) is left out",
                and_list(&zero)
            )
        };
        let mut what = and_list(if drawn.is_empty() { &zero } else { &drawn });
        if let Some(first) = what.get(..1) {
            what = first.to_uppercase() + &what[1..];
        }
        draw(
            &format!("breakdown.{ext}"),
            spec,
            &bd,
            "Where the time goes".into(),
            format!(
                "{what} per iteration{}, by {by}{left_out}.",
                at_words(false)
            ),
        )?;
    }
    // timelines of the fastest and slowest point of the breakdown, among
    // the points of its first model and batch when it has several (their
    // samples/s are not comparable: columns::incomparable)
    let mut timelines = Vec::new();
    if let (Some(grid), true) = (grid, bd.column("point").is_ok()) {
        let pts: Vec<Option<f64>> = columns::numbers(&bd, "point")?;
        let thr = columns::numbers(&bd, "throughput")?;
        let model_keys: Vec<String> = swept
            .iter()
            .filter(|k| columns::incomparable(k))
            .cloned()
            .collect();
        let model = columns::row_texts(&bd, &model_keys)?;
        // "with `model.preset` = vgg16" when the breakdown has other models
        let among = match model.first() {
            Some(Some(first)) if model.iter().any(|m| m.as_ref() != Some(first)) => format!(
                " with {}",
                model_keys
                    .iter()
                    .zip(first)
                    .map(|(k, v)| format!("`{k}` = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => String::new(),
        };
        let rows: Vec<(usize, f64)> = pts
            .iter()
            .zip(&thr)
            .zip(&model)
            .filter(|(_, m)| Some(*m) == model.first())
            .filter_map(|((p, t), _)| Some((p.map(|p| p as usize)?, (*t)?)))
            .filter(|(p, _)| *p < grid.len())
            .collect();
        // the first in the table among equals, as the headline names
        let fastest = first_by(rows.iter(), |a, b| b.1 > a.1);
        let slowest = first_by(rows.iter(), |a, b| b.1 < a.1);
        if let (Some(f), Some(s)) = (fastest, slowest)
            && f.0 != s.0
        {
            for (name, (p, _)) in [("fastest", f), ("slowest", s)] {
                let point = grid
                    .point(*p)
                    .map_err(|e| ReportError::Input(e.to_string()))?;
                // the picture shows iterations 1 and 2, which do not depend
                // on later ones: simulate just those (after one warm-up) and
                // trace two GPUs (all run in lockstep), to keep the file small
                let mut cfg = point.config.clone();
                cfg.warmup_iterations = 1;
                cfg.iterations = 2;
                let (_, tl) = sim::train::simulate_traced(&cfg)
                    .map_err(|e| ReportError::Input(format!("point {p}: {e}")))?;
                let trace = crate::trace::chrome_trace(&cfg, &tl, TIMELINE_GPUS);
                let json = dir.join(format!("timeline-{name}.json"));
                std::fs::write(&json, serde_json::to_string(&trace).expect("json"))
                    .map_err(|e| io(&json, e))?;
                // drawn from the run itself, the same spans as the trace's
                let png = dir.join(format!("timeline-{name}.{ext}"));
                let point_words: Vec<String> = point
                    .sweep
                    .iter()
                    .map(|(k, v)| labels::setting(k, &crate::sweep::value_text(v)))
                    .collect();
                // "Timeline of the fastest point, Schedule = priority:
                // iterations 1–2 (one GPU shown: all 16 run alike)"
                let title = if point_words.is_empty() {
                    format!("the {name} point")
                } else {
                    format!("the {name} point, {}", point_words.join(", "))
                };
                let drawn = plot_gantt(
                    // (one GPU's rows when one GPU stood for all)
                    &Gantt::from_timeline(&cfg, &tl, TIMELINE_GPUS).named(title),
                    &png,
                    None,
                    crate::plot::DEFAULT_WIDTH,
                    crate::plot::DEFAULT_HEIGHT,
                );
                if let Err(e) = drawn {
                    // the trace goes with its picture
                    let _ = std::fs::remove_file(&json);
                    return Err(plot_failed(&format!("timeline-{name}.{ext}"), e));
                }
                files.push(png);
                files.push(json);
                let what: Vec<String> = point
                    .sweep
                    .iter()
                    .map(|(k, v)| format!("`{k}` = {}", crate::sweep::value_text(v)))
                    .collect();
                timelines.push((name, *p, what.join(", "), among.clone(), ext));
            }
        }
    }
    // the whole table beside the report
    let csv = dir.join("results.csv");
    table::write(&mut df.clone(), &csv)?;
    files.push(csv);

    let md = markdown(df, source, &swept, &lay, &unit, &plots, &timelines)?;
    std::fs::write(&files[0], md).map_err(|e| io(&files[0], e))?;
    Ok(Written {
        files: std::mem::take(files),
    })
}

/// The first item `better` prefers to every earlier one: the maximum (or
/// minimum) that comes first, where `Iterator::max_by` gives the last of
/// equals.
fn first_by<T: Copy>(items: impl Iterator<Item = T>, better: impl Fn(&T, &T) -> bool) -> Option<T> {
    items.fold(None, |acc, x| match acc {
        Some(a) if !better(&a, &x) => Some(a),
        _ => Some(x),
    })
}

/// A timeline of the report: which (fastest, slowest), its point, the
/// point's swept values, the model it was chosen within, and its
/// picture's extension.
type Timeline = (&'static str, usize, String, String, &'static str);

fn markdown(
    df: &DataFrame,
    source: &Source,
    swept: &[String],
    lay: &Layout,
    unit: &str,
    plots: &[(String, String, String)],
    timelines: &[Timeline],
) -> Result<String, ReportError> {
    let mut md = String::new();
    let name = columns::texts(df, "scenario")
        .ok()
        .and_then(|t| t.into_iter().flatten().next())
        .unwrap_or_else(|| source.input.clone());
    let n = df.height();
    let _ = writeln!(md, "# dtsim report: {name}\n");
    let _ = writeln!(
        md,
        "Made by dtsim {} with `{}` from `{}`. Every number is the simulator's prediction for the scenario, not a measurement.\n",
        source.version, source.command, source.input
    );
    // setup
    let _ = writeln!(md, "## Setup\n");
    let mut same = Vec::new();
    for col in SETTINGS {
        if df.column(col).is_err() {
            continue;
        }
        let d = distinct(df, col)?;
        if d.len() == 1 {
            // a time in the unit that shows its digits ("8.4 µs")
            let value = match (labels::quantity(col), d[0].parse::<f64>()) {
                (labels::Quantity::Time, Ok(s)) => sim::units::HumanSeconds(s).to_string(),
                _ => d[0].clone(),
            };
            same.push((labels::in_sentence(&labels::label(col)), value));
        }
    }
    if !same.is_empty() {
        let _ = writeln!(
            md,
            "Shared by every point:\n\n| setting | value |\n|---|---|"
        );
        for (w, v) in &same {
            let _ = writeln!(md, "| {w} | {v} |");
        }
        md.push('\n');
    }
    if swept.is_empty() {
        let _ = writeln!(md, "No key is swept: one point.\n");
    } else {
        let grid = columns::numbers(df, "grid_points")
            .ok()
            .and_then(|v| v.into_iter().flatten().next())
            .map(|g| g as usize)
            .unwrap_or(n);
        let _ = writeln!(
            md,
            "Swept ({n} points{}):\n\n| key | values |\n|---|---|",
            if grid != n {
                format!(" of a grid of {grid}")
            } else {
                String::new()
            }
        );
        for k in swept {
            let _ = writeln!(md, "| `{k}` | {} |", distinct(df, k)?.join(", "));
        }
        md.push('\n');
    }
    // headline: fastest and slowest point, compared within each model
    // (samples/s of different models or batches are not comparable) and,
    // when the cluster size is swept, at the largest size (more GPUs are
    // faster; which method is fastest there is the question)
    let _ = writeln!(md, "## Results\n");
    let thr = columns::numbers(df, "throughput")?;
    // the lossy dense methods (dtsim advise's `*`): Top-k, gTop-k, and
    // DCT-DP where it compresses (η = 0 runs no kernel: DCT's baseline)
    // (a table without the columns names no method lossy)
    let dense = texts_or_empty(df, "dense").unwrap_or_default();
    let compression = columns::numbers(df, "compression_s").unwrap_or_default();
    let lossy = |r: usize| match dense.get(r).map(String::as_str) {
        Some("topk" | "gtopk") => true,
        Some("dct") => compression
            .get(r)
            .copied()
            .flatten()
            .is_some_and(|c| c > 0.0),
        _ => false,
    };
    let by_size = matches!(&lay.x, Some((x, true)) if x == "gpus");
    let gpus = columns::numbers(df, "gpus")?;
    let largest = gpus.iter().flatten().cloned().fold(f64::MIN, f64::max);
    if by_size {
        let _ = writeln!(md, "At {largest} GPUs, the largest cluster of the sweep:\n");
    }
    let model_keys: Vec<&String> = swept.iter().filter(|k| columns::incomparable(k)).collect();
    let other_keys: Vec<&String> = swept
        .iter()
        .filter(|k| !(columns::incomparable(k) || by_size && *k == "cluster.nodes"))
        .collect();
    let texts_of = |keys: &[&String]| -> Result<Vec<Vec<String>>, ColumnError> {
        keys.iter().map(|k| texts_or_empty(df, k)).collect()
    };
    let model_vals = texts_of(&model_keys)?;
    let other_vals = texts_of(&other_keys)?;
    let name_of = |keys: &[&String], vals: &[Vec<String>], r: usize| -> String {
        keys.iter()
            .zip(vals)
            .map(|(k, v)| format!("`{k}` = {}", v[r]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (r, size) in gpus.iter().enumerate() {
        if by_size && *size != Some(largest) {
            continue;
        }
        let g = name_of(&model_keys, &model_vals, r);
        match groups.iter_mut().find(|(name, _)| *name == g) {
            Some((_, rows)) => rows.push(r),
            None => groups.push((g, vec![r])),
        }
    }
    let shown_groups = groups.len().min(MAX_HEADLINE_GROUPS);
    for (g, rows) in &groups[..shown_groups] {
        // the first in the table among equals (the last came out, so a
        // report named priority fastest where FIFO ran the same to the
        // bit: a review)
        let valued = || rows.iter().filter_map(|&r| Some((r, thr[r]?)));
        let best = first_by(valued(), |a, b| b.1 > a.1);
        let worst = first_by(valued(), |a, b| b.1 < a.1);
        let (Some((b, bt)), Some((w, wt))) = (best, worst) else {
            continue;
        };
        // the others equal to it to the figures shown
        let equal = |x: usize, xt: f64| -> String {
            let same: Vec<String> = valued()
                .filter(|&(r, t)| r != x && sig(t, 4) == sig(xt, 4))
                .map(|(r, _)| name_of(&other_keys, &other_vals, r))
                .collect();
            match same.len() {
                0 => String::new(),
                n if n <= 3 => format!(" (equal, to 4 figures, with {})", same.join("; ")),
                n => format!(
                    " (equal, to 4 figures, with {} and {} more)",
                    same[..3].join("; "),
                    n - 3
                ),
            }
        };
        let lead = if g.is_empty() {
            String::new()
        } else {
            format!("- {g}: ")
        };
        let (fastest, every) = if lead.is_empty() {
            ("Fastest", "Every point")
        } else {
            ("fastest", "every point")
        };
        let throughput = if lead.is_empty() {
            "Throughput"
        } else {
            "throughput"
        };
        if b == w {
            // one point: nothing to compare it with
            let _ = writeln!(md, "{lead}{throughput}: {} {unit}.", sig(bt, 4));
        } else if sig(bt, 4) == sig(wt, 4) {
            let _ = writeln!(
                md,
                "{lead}{every}: {} {unit} (equal to 4 figures).",
                sig(bt, 4)
            );
        } else if b != w && !other_keys.is_empty() {
            let _ = writeln!(
                md,
                "{lead}{fastest}: {}{} — {} {unit}. Slowest: {}{} — {} {unit}. The fastest has {} times the throughput of the slowest.{}",
                name_of(&other_keys, &other_vals, b),
                equal(b, bt),
                sig(bt, 4),
                name_of(&other_keys, &other_vals, w),
                equal(w, wt),
                sig(wt, 4),
                sig(bt / wt, 4),
                if lossy(b) {
                    format!(
                        " The fastest is lossy (`{}`): it changes what the optimiser sees, and how that slows convergence is not modelled, only the time an iteration takes.",
                        dense[b]
                    )
                } else {
                    String::new()
                }
            );
        } else {
            let _ = writeln!(md, "{lead}{throughput}: {} {unit}.", sig(bt, 4));
        }
    }
    if groups.len() > shown_groups {
        let _ = writeln!(
            md,
            "- … and {} more models or batches: see the table.",
            groups.len() - shown_groups
        );
    }
    md.push('\n');
    // table
    // (heading, Markdown alignment: text left, numbers right, cells)
    let mut cols: Vec<(String, &str, Vec<String>)> = Vec::new();
    let mut add_text = |h: String, c: &str| -> Result<(), ReportError> {
        cols.push((h, "---|", texts_or_empty(df, c)?));
        Ok(())
    };
    if df.column("point").is_ok() {
        add_text("point".into(), "point")?;
    }
    for k in swept {
        add_text(format!("`{k}`"), k)?;
    }
    add_text(labels::heading("gpus", None), "gpus")?;
    // (column, unit, scale, significant figures)
    let numeric = [
        ("iteration_time_s", "ms", 1e3, 4),
        ("throughput", unit, 1.0, 4),
        ("scaling_efficiency", "%", 100.0, 3),
        ("compute_s", "ms", 1e3, 4),
        ("compression_s", "ms", 1e3, 4),
        ("exposed_comm_s", "ms", 1e3, 4),
        ("bytes_sent_per_gpu", "MiB", 1.0 / 1048576.0, 4),
    ];
    for (c, u, scale, digits) in numeric {
        let cells = columns::numbers(df, c)?
            .into_iter()
            .map(|v| v.map(|v| sig(v * scale, digits)).unwrap_or_default())
            .collect();
        cols.push((labels::heading(c, Some(u)), "---:|", cells));
    }
    // the busiest link and how busy it is (tables from before 2026-11-29
    // have neither: the column is left out)
    if df.column("busiest_link").is_ok() && df.column("busiest_link_utilisation").is_ok() {
        let cells = texts_or_empty(df, "busiest_link")?
            .into_iter()
            .zip(columns::numbers(df, "busiest_link_utilisation")?)
            .map(|(link, u)| match u {
                Some(u) if !link.is_empty() => format!("{link} ({}%)", sig(u * 100.0, 3)),
                _ => String::new(),
            })
            .collect();
        cols.push(("busiest link (busy)".into(), "---|", cells));
    }
    let head: Vec<&str> = cols.iter().map(|(h, _, _)| h.as_str()).collect();
    let _ = writeln!(md, "| {} |", head.join(" | "));
    let align: String = cols.iter().map(|(_, a, _)| *a).collect();
    let _ = writeln!(md, "|{align}");
    for r in 0..n.min(MAX_TABLE_ROWS) {
        let row: Vec<&str> = cols.iter().map(|(_, _, c)| c[r].as_str()).collect();
        let _ = writeln!(md, "| {} |", row.join(" | "));
    }
    if cols.iter().any(|(h, _, _)| h == "busiest link (busy)") {
        let _ = writeln!(
            md,
            "\nBusiest link: the link that carries the most for its capacity in the measured iterations, and its bytes over its capacity times the iteration time (docs/scenarios.md, Results); near 100% the link bounds the communication."
        );
    }
    if n > MAX_TABLE_ROWS {
        let _ = writeln!(
            md,
            "\nThe first {MAX_TABLE_ROWS} of {n} rows; every row is in [results.csv](results.csv)."
        );
    } else {
        let _ = writeln!(md, "\nThe table as CSV: [results.csv](results.csv).");
    }
    md.push('\n');
    // plots
    let _ = writeln!(md, "## Plots\n");
    if !lay.held.is_empty() {
        let held: Vec<String> = lay
            .held
            .iter()
            .map(|(k, v)| format!("`{k}` = {v}"))
            .collect();
        let why = if lay.chosen {
            "Every key that is neither the x axis nor a series is held at its first value:"
                .to_string()
        } else {
            format!("To keep at most {MAX_SERIES} series,")
        };
        let _ = writeln!(
            md,
            "{why} the plots hold {} (each picture says so after its title); the table has every point. \
             Other plots: `dtsim report` with `--x`, `--series` or `--where` (docs/sweeps.md).\n",
            held.join(", ")
        );
    }
    for (file, heading, caption) in plots {
        let _ = writeln!(md, "### {heading}\n\n![{heading}]({file})\n\n{caption}\n");
    }
    if !timelines.is_empty() {
        let _ = writeln!(md, "### Timelines\n");
        for (name, p, what, among, ext) in timelines {
            let what = if what.is_empty() {
                String::new()
            } else {
                format!(": {what}")
            };
            let _ = writeln!(
                md,
                "The {name} point of the breakdown{among} (point {p}{what}); its trace, for Perfetto or chrome://tracing, is [timeline-{name}.json](timeline-{name}.json).\n\n![timeline of the {name} point](timeline-{name}.{ext})\n"
            );
        }
    }
    if let Some(text) = &source.scenario_text {
        let _ = writeln!(md, "## Scenario\n\n```toml\n{}\n```", text.trim_end());
    }
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A results-like table: `cluster.nodes` × `strategy.dense` ×
    /// `cluster.network` × `model.preset` (3 × 2 × 3 × 2 = 36 rows).
    fn table() -> DataFrame {
        let mut nodes = Vec::new();
        let mut dense = Vec::new();
        let mut net = Vec::new();
        let mut model = Vec::new();
        for n in [1i64, 2, 4] {
            for d in ["allreduce", "ps"] {
                for w in ["eth-10g", "eth-25g", "ib"] {
                    for m in ["resnet50", "vgg16"] {
                        nodes.push(n);
                        dense.push(d);
                        net.push(w);
                        model.push(m);
                    }
                }
            }
        }
        let rows = nodes.len();
        let gpus: Vec<i64> = nodes.iter().map(|n| n * 4).collect();
        let thr: Vec<f64> = (0..rows).map(|i| 100.0 + i as f64).collect();
        df!(
            "point" => (0..rows as i64).collect::<Vec<_>>(),
            "grid_points" => vec![rows as i64; rows],
            "cluster.nodes" => nodes,
            "cluster.network" => net,
            "model.preset" => model,
            "strategy.dense" => dense,
            "scenario" => vec!["t"; rows],
            "gpus" => gpus,
            "iteration_time_s" => vec![0.1; rows],
            "throughput" => thr,
            "throughput_unit" => vec!["samples/s"; rows],
            "scaling_efficiency" => vec![0.9; rows],
            "compute_s" => vec![0.08; rows],
            "compression_s" => vec![0.0; rows],
            "exposed_comm_s" => vec![0.02; rows],
            "bytes_sent_per_gpu" => vec![1048576.0; rows],
        )
        .unwrap()
    }

    fn swept(df: &DataFrame) -> Vec<String> {
        df.get_column_names()
            .iter()
            .map(|c| c.to_string())
            .filter(|c| c.contains('.'))
            .collect()
    }

    #[test]
    fn gpus_on_x_fewest_valued_keys_in_series_the_rest_held() {
        let df = table();
        let lay = layout(&df, &swept(&df)).unwrap();
        assert_eq!(lay.x, Some(("gpus".into(), true)));
        // model (2) and dense (2) make 4 series; network (3) would make 12 > 8
        assert_eq!(lay.series, vec!["model.preset", "strategy.dense"]);
        assert_eq!(lay.held, vec![("cluster.network".into(), "eth-10g".into())]);
    }

    #[test]
    fn without_nodes_the_numeric_or_most_valued_key_is_x() {
        let df = holding(&table(), "cluster.nodes", "2");
        let df = df.drop("cluster.nodes").unwrap();
        let lay = layout(&df, &swept(&df)).unwrap();
        // no numeric key left: the key with the most values, as categories
        assert_eq!(lay.x, Some(("cluster.network".into(), false)));
        assert_eq!(lay.series, vec!["model.preset", "strategy.dense"]);
        assert!(lay.held.is_empty());
    }

    fn holding(df: &DataFrame, k: &str, v: &str) -> DataFrame {
        columns::holding(df, k, v).unwrap()
    }

    #[test]
    fn the_report_lists_what_it_holds_and_cuts_long_tables() {
        let dir = std::env::temp_dir().join(format!("dtsim-report-unit-{}", std::process::id()));
        let mut big = table();
        for _ in 0..6 {
            big.vstack_mut(&table()).unwrap();
        }
        // 252 rows: repeated (x, series) pairs make the line plot refuse,
        // so the cut is checked on markdown() alone
        let src = Source {
            input: "t.csv".into(),
            command: "dtsim report t.csv -o out".into(),
            version: "0".into(),
            scenario_text: None,
        };
        let w = write_report(&table(), &src, None, &dir).unwrap();
        let md = std::fs::read_to_string(&w.files[0]).unwrap();
        assert!(
            md.contains("the plots hold `cluster.network` = eth-10g"),
            "{md}"
        );
        // fastest and slowest within each model at the largest size (16
        // GPUs, rows 24 … 35): throughput is 100 + row, resnet50 on even
        // rows (124 … 134), vgg16 on odd ones (125 … 135)
        assert!(md.contains("At 16 GPUs, the largest cluster"), "{md}");
        assert!(
            md.contains("- `model.preset` = resnet50: fastest: ")
                && md.contains("— 134.0 samples/s. Slowest: ")
                && md.contains("— 124.0 samples/s. The fastest has 1.081 times"),
            "{md}"
        );
        assert!(
            md.contains("- `model.preset` = vgg16: fastest: ")
                && md.contains("— 135.0 samples/s. Slowest: ")
                && md.contains("— 125.0 samples/s. The fastest has 1.080 times"),
            "{md}"
        );
        for f in [
            "throughput.png",
            "scaling_efficiency.png",
            "speedup.png",
            "breakdown.png",
            "results.csv",
        ] {
            assert!(dir.join(f).exists(), "{f}");
        }
        let sw = swept(&big);
        let lay = layout(&big, &sw).unwrap();
        let md = markdown(&big, &src, &sw, &lay, "samples/s", &[], &[]).unwrap();
        let rows = md
            .lines()
            .skip_while(|l| !l.starts_with("| point |"))
            .skip(2)
            .take_while(|l| l.starts_with("| "))
            .count();
        assert_eq!(rows, MAX_TABLE_ROWS);
        assert!(md.contains(&format!("The first {MAX_TABLE_ROWS} of 252 rows")));
        // an empty table is refused
        let empty = table().head(Some(0));
        let e = write_report(&empty, &src, None, &dir).unwrap_err();
        assert!(e.to_string().contains("no rows"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
