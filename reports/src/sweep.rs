//! Sweeps: every point of a scenario's grid, evaluated in parallel, kept
//! durably, written as one tidy table.
//!
//! * Every point is built from the [`Grid`] and validated before any
//!   runs, so that a bad value is reported at once. Points are then
//!   evaluated on a rayon pool (`--jobs`) in blocks of [`BLOCK_POINTS`];
//!   each block is sorted by point index and appended to the table (a
//!   Parquet row group), so the output does not depend on scheduling and
//!   memory does not grow with the grid. A shard of one block (every
//!   report, most sweeps) keeps the points it validated and runs them as
//!   built; a larger one builds each point again when its block runs,
//!   since keeping them would hold the whole grid (a few kB per point).
//!   Only resuming holds more: the results found in the checkpoint (a few
//!   hundred bytes per point) until their block is written.
//! * Every finished point is appended at once, as one JSON line, to a
//!   checkpoint beside the output (`RESULTS.csv.partial`). A sweep killed
//!   part-way keeps every point it finished; a re-run reads the checkpoint,
//!   computes only the missing points, writes the table (to a temporary
//!   file, renamed into place) and removes the checkpoint. The checkpoint
//!   survives the process being killed (each line is written before the
//!   next point is reported); it is synced to disk at the end. A last
//!   line cut short by a kill is not counted; any other line the re-run
//!   cannot resume, and a checkpoint of another sweep (kept aside as
//!   `RESULTS.csv.partial.stale`), are warned of (`read_checkpoint`).
//! * `--shard I/N` evaluates the points whose index is I−1 modulo N, so a
//!   cluster job array can split a sweep; [`merge`] joins the shards and
//!   refuses overlapping or missing points.
//!
//! The table has one row per point: `point` (its index in the whole grid),
//! `grid_points` (the grid's size), one column per swept key (named by the
//! key, typed by its values), and one column per scalar field of
//! [`sim::train::RunResult`], in its order (`results`).

mod results;

use crate::run::Interval;
use crate::table::{self, TableError};
use polars::prelude::*;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sim::scenario::{Grid, Point};
use sim::train::{RunResult, simulate};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why a sweep or a merge failed.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A table could not be read or written.
    #[error(transparent)]
    Table(#[from] TableError),
    /// The checkpoint could not be written or read (a failure, not the
    /// input's).
    #[error("{path}: {message}")]
    Checkpoint {
        /// The checkpoint file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The output path cannot hold a table (bad input).
    #[error("{path}: {message}")]
    Output {
        /// The table's path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The worker threads could not be started.
    #[error("cannot start the sweep's worker threads: {0}")]
    Threads(String),
    /// A point could not be simulated.
    #[error("point {point}: {message}")]
    Point {
        /// Point index.
        point: usize,
        /// The simulator's message.
        message: String,
    },
    /// The shard specification is not I/N with 1 ≤ I ≤ N.
    #[error("--shard `{0}`: expected I/N with 1 ≤ I ≤ N, e.g. 2/8")]
    Shard(String),
    /// The scenario's grid has a bad point.
    #[error(transparent)]
    Scenario(sim::scenario::ScenarioError),
    /// Shards that cannot be merged.
    #[error("{0}")]
    Merge(String),
}

impl SweepError {
    /// Whether the error is the input's (exit code 2: a bad scenario, shard,
    /// output path or shard tables) rather than a failure of the run
    /// (exit code 1: the checkpoint or table could not be written).
    pub fn is_input(&self) -> bool {
        match self {
            SweepError::Table(t) => t.is_input(),
            SweepError::Checkpoint { .. } | SweepError::Threads(_) => false,
            SweepError::Output { .. }
            | SweepError::Point { .. }
            | SweepError::Shard(_)
            | SweepError::Scenario(_)
            | SweepError::Merge(_) => true,
        }
    }
}

/// A shard: this is the `index`-th (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based index.
    pub index: u32,
    /// Number of shards.
    pub count: u32,
}

impl Shard {
    /// Parses `I/N`.
    pub fn parse(s: &str) -> Result<Shard, SweepError> {
        let bad = || SweepError::Shard(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether point `i` belongs to this shard.
    pub fn has(&self, i: usize) -> bool {
        i % self.count as usize == (self.index - 1) as usize
    }
}

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct Options {
    /// Worker threads (0 = all cores).
    pub jobs: usize,
    /// Which part of the grid.
    pub shard: Option<Shard>,
    /// Show a progress bar on stderr (only drawn on a terminal).
    pub progress: bool,
    /// Points per block (0 = [`BLOCK_POINTS`]).
    pub block_points: usize,
    /// Run each point this many times over its seeds and add the
    /// percentiles of its iteration time and throughput
    /// ([`crate::run::Interval`]'s columns) to the table.
    pub uncertainty: Option<u32>,
}

/// What a sweep did.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Points in this sweep (its shard).
    pub points: usize,
    /// Points taken from a checkpoint of an earlier, interrupted run.
    pub resumed: usize,
    /// Points computed now.
    pub computed: usize,
    /// What an earlier run's checkpoint held that was not resumed
    /// (damaged lines, a checkpoint of another sweep: [`run`]'s
    /// `read_checkpoint`), naming the file and line; then settings of the
    /// scenario that are valid but probably a mistake
    /// (`sim::scenario::advice`), each once, located in the file.
    pub warnings: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct Header {
    dtsim_sweep: u32,
    scenario: String,
    grid_points: usize,
    shard: String,
    fingerprint: String,
}

#[derive(Serialize, Deserialize)]
struct Line {
    point: usize,
    result: RunResult,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interval: Option<Interval>,
}

/// A finished point: its result, and its percentiles when the sweep
/// asked for them.
type Row = (usize, RunResult, Option<Interval>);

/// The checkpoint kept beside `out`.
pub fn checkpoint_path(out: &Path) -> PathBuf {
    with_suffix(out, ".partial")
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A checkpoint line: point `i` and its result, as JSON.
fn checkpoint_line(i: usize, r: &RunResult, interval: Option<Interval>) -> String {
    serde_json::to_string(&Line {
        point: i,
        result: r.clone(),
        interval,
    })
    .expect("results serialise")
}

/// A swept value as text: strings bare, anything else in TOML form.
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn ck_err(path: &Path, e: impl std::fmt::Display) -> SweepError {
    SweepError::Checkpoint {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// What an earlier run's checkpoint gives this one: the finished points
/// it resumes, and warnings about what it could not resume.
type Resumed = (BTreeMap<usize, (RunResult, Option<Interval>)>, Vec<String>);

/// Reads the checkpoint at `path` of an earlier run of this sweep
/// (`header`), keeping the points of this shard (`mine`).
///
/// Nothing is lost silently:
/// * a last line cut short (no line end: what a kill leaves) is simply
///   not counted; any other line that is not a finished point of this
///   shard (a checkpoint damaged otherwise) is skipped with a warning
///   naming its line, its point computed again;
/// * a checkpoint of another sweep (another scenario, grid, shard,
///   settings, `--uncertainty` or dtsim version), or a file that is not a
///   checkpoint, is not resumed, with a warning; if it holds any line
///   besides its header it is first renamed aside (`NAME.partial.stale`,
///   or `.stale2`, … when taken), so that its finished points survive
///   this run rewriting the checkpoint.
///
/// These are warnings rather than errors as a checkpoint is the sweep's
/// own file, not its input: the sweep can always go on by computing the
/// points again (the convention of a checkpoint of another number of runs
/// being started afresh). An empty or missing file starts afresh
/// silently; one that cannot be read is an error (a failure, exit 1).
fn read_checkpoint(
    path: &Path,
    header: &Header,
    mine: impl Fn(usize) -> bool,
) -> Result<Resumed, SweepError> {
    let mut done = BTreeMap::new();
    let mut warnings = Vec::new();
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((done, warnings)),
        Err(e) => return Err(ck_err(path, e)),
    };
    let mut reader = std::io::BufReader::new(file);
    // the next line, without its line end, and whether it had one; none
    // at the end of the file
    let mut next_line = move || -> Result<Option<(Vec<u8>, bool)>, SweepError> {
        let mut l = Vec::new();
        if reader
            .read_until(b'\n', &mut l)
            .map_err(|e| ck_err(path, e))?
            == 0
        {
            return Ok(None);
        }
        let ended = l.last() == Some(&b'\n');
        if ended {
            l.pop();
        }
        Ok(Some((l, ended)))
    };
    let Some((first, _)) = next_line()? else {
        return Ok((done, warnings));
    };
    let why_not = match serde_json::from_slice::<Header>(&first) {
        Err(e) => Some(format!(
            ", line 1: not the header of a dtsim sweep checkpoint ({e})"
        )),
        Ok(h) => {
            let mut differ = Vec::new();
            if h.scenario != header.scenario {
                differ.push(format!(
                    "of scenario `{}`, not `{}`",
                    h.scenario, header.scenario
                ));
            }
            if h.grid_points != header.grid_points {
                differ.push(format!(
                    "of a grid of {} points, not {}",
                    h.grid_points, header.grid_points
                ));
            }
            if h.shard != header.shard {
                differ.push(format!("of shard {}, not {}", h.shard, header.shard));
            }
            // the fingerprint: the points' settings and dtsim's version,
            // then `-uN` for --uncertainty N
            let runs = |f: &str| f.split_once("-u").map(|(_, n)| n.to_string());
            let (was, now) = (runs(&h.fingerprint), runs(&header.fingerprint));
            if was != now {
                let say = |n: &Option<String>| {
                    n.as_ref().map_or("without --uncertainty".to_string(), |n| {
                        format!("with --uncertainty {n}")
                    })
                };
                differ.push(format!("made {}, not {}", say(&was), say(&now)));
            }
            if differ.is_empty() && h.fingerprint != header.fingerprint {
                differ.push(
                    "of other settings of the scenario, or made by another dtsim version"
                        .to_string(),
                );
            }
            (!differ.is_empty())
                .then(|| format!(": a checkpoint of another sweep ({})", differ.join("; ")))
        }
    };
    if let Some(why) = why_not {
        // what it holds: lines, and lines that are finished points
        let (mut held, mut points) = (0, 0);
        while let Some((l, _)) = next_line()? {
            held += usize::from(!l.is_empty());
            points += usize::from(serde_json::from_slice::<Line>(&l).is_ok());
        }
        if held == 0 {
            warnings.push(format!(
                "{}{why}: not resumed (it holds no finished point)",
                path.display()
            ));
        } else {
            drop(next_line); // (the file closed before it is renamed)
            let aside = set_aside(path)?;
            let what = match points {
                0 => String::new(),
                1 => ", with its 1 finished point".to_string(),
                n => format!(", with its {n} finished points"),
            };
            warnings.push(format!(
                "{}{why}: not resumed; moved to {}{what}",
                path.display(),
                aside.display()
            ));
        }
        return Ok((done, warnings));
    }
    // lines that are not a finished point of this shard: the first's
    // number and why, and how many
    let mut bad: Option<(usize, String)> = None;
    let mut more = 0;
    let mut k = 1;
    while let Some((l, ended)) = next_line()? {
        k += 1;
        let why = match serde_json::from_slice::<Line>(&l) {
            Ok(line) if mine(line.point) => {
                done.insert(line.point, (line.result, line.interval));
                continue;
            }
            Ok(line) => format!(
                "point {} is not a point of this shard ({} of a grid of {})",
                line.point, header.shard, header.grid_points
            ),
            // a line cut short by a kill is simply not counted
            Err(_) if !ended => continue,
            Err(e) => format!("not a finished point ({e})"),
        };
        match bad {
            None => bad = Some((k, why)),
            Some(_) => more += 1,
        }
    }
    if let Some((line, why)) = bad {
        let others = match more {
            0 => String::new(),
            1 => " (and 1 more such line)".to_string(),
            n => format!(" (and {n} more such lines)"),
        };
        warnings.push(format!(
            "{}, line {line}: {why}{others}: skipped; the points it should hold are computed again",
            path.display()
        ));
    }
    Ok((done, warnings))
}

/// Renames the checkpoint `path` aside, to the first free name of
/// `NAME.stale`, `NAME.stale2`, …, and gives that name.
fn set_aside(path: &Path) -> Result<PathBuf, SweepError> {
    for k in 1.. {
        let aside = if k == 1 {
            with_suffix(path, ".stale")
        } else {
            with_suffix(path, &format!(".stale{k}"))
        };
        if !aside.exists() {
            std::fs::rename(path, &aside).map_err(|e| ck_err(&aside, e))?;
            return Ok(aside);
        }
    }
    unreachable!("some name is free")
}

/// Points evaluated between two writes of the table: the memory a sweep
/// holds is this many results (a few hundred bytes each) whatever the size
/// of the grid, and each block becomes one Parquet row group.
pub const BLOCK_POINTS: usize = 4_096;

/// Runs the sweep of `grid` (this shard of it) into `out`.
///
/// Every point of this shard is validated first (in parallel), so a bad
/// value is reported before anything runs. Points are then evaluated block
/// by block ([`BLOCK_POINTS`]) in parallel, as validated when the shard is
/// one block, else built again; each finished point goes to the
/// checkpoint at once, each finished block to the table.
pub fn run(grid: &Grid, out: &Path, opts: &Options) -> Result<Summary, SweepError> {
    table::Format::of(out)?;
    // refused now rather than after the whole grid has run
    if out.is_dir() {
        return Err(SweepError::Output {
            path: out.display().to_string(),
            message: "is a directory; give a file name for the table".into(),
        });
    }
    crate::create_parent(out).map_err(|e| ck_err(out, e))?;
    let (first, step) = match opts.shard {
        Some(s) => ((s.index - 1) as usize, s.count as usize),
        None => (0, 1),
    };
    // this shard's points are first, first + step, ... below grid.len()
    let mine = grid.len().saturating_sub(first).div_ceil(step);
    let index = |j: usize| first + j * step;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs)
        .build()
        .map_err(|e| SweepError::Threads(e.to_string()))?;
    let per_block = if opts.block_points == 0 {
        BLOCK_POINTS
    } else {
        opts.block_points
    };
    // every point is built here once to be validated; a shard of one block
    // keeps its points and runs them as built
    let checked = pool.install(|| check(grid, mine, &index, mine <= per_block))?;
    let header = Header {
        dtsim_sweep: 1,
        scenario: checked.scenario,
        grid_points: grid.len(),
        shard: opts
            .shard
            .map(|s| format!("{}/{}", s.index, s.count))
            .unwrap_or_else(|| "1/1".into()),
        // a checkpoint of another number of runs a point is another sweep
        fingerprint: match opts.uncertainty {
            Some(n) => format!("{}-u{n}", checked.fingerprint),
            None => checked.fingerprint,
        },
    };
    let kept = checked.points;
    let ck = checkpoint_path(out);
    let (mut done, mut warnings) = read_checkpoint(&ck, &header, |i| {
        i < grid.len() && i >= first && (i - first) % step == 0
    })?;
    let resumed = done.len();
    // rewrite the checkpoint with what is kept (beside it, then renamed, so
    // a kill now loses nothing), then append to it as points finish
    let fresh_ck = with_suffix(&ck, ".new");
    {
        let mut file = std::fs::File::create(&fresh_ck).map_err(|e| ck_err(&fresh_ck, e))?;
        writeln!(file, "{}", serde_json::to_string(&header).expect("header"))
            .map_err(|e| ck_err(&fresh_ck, e))?;
        for (i, (r, interval)) in &done {
            writeln!(file, "{}", checkpoint_line(*i, r, *interval))
                .map_err(|e| ck_err(&fresh_ck, e))?;
        }
        file.sync_all().map_err(|e| ck_err(&fresh_ck, e))?;
    }
    std::fs::rename(&fresh_ck, &ck).map_err(|e| ck_err(&ck, e))?;
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(&ck)
        .map_err(|e| ck_err(&ck, e))?;
    let bar = if opts.progress {
        let b = indicatif::ProgressBar::new(mine as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} points  {per_sec}  eta {eta}",
            )
            .expect("template"),
        );
        b.set_position(resumed as u64);
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let slow = std::env::var("DTSIM_SWEEP_TEST_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    let mut writer =
        table::Writer::create(out, frame(grid, &[], opts.uncertainty.is_some())?.schema())?;
    let file = Mutex::new(file);
    let mut computed = 0;
    for block in (0..mine).step_by(per_block) {
        let positions = block..(block + per_block).min(mine);
        let fresh = Mutex::new(Vec::<Row>::new());
        pool.install(|| {
            positions.clone().into_par_iter().try_for_each(|j| {
                let i = index(j);
                if done.contains_key(&i) {
                    return Ok(());
                }
                if let Some(ms) = slow {
                    // a test hook, to kill a sweep part-way
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                }
                let built;
                let p = match kept.get(j) {
                    Some(p) => p,
                    None => {
                        built = grid.point(i).map_err(SweepError::Scenario)?;
                        &built
                    }
                };
                let point_err = |e: sim::limits::SimError| SweepError::Point {
                    point: i,
                    message: e.to_string(),
                };
                let r = simulate(&p.config).map_err(point_err)?;
                let interval = opts
                    .uncertainty
                    .map(|n| crate::run::interval(&p.config, &r, n))
                    .transpose()
                    .map_err(point_err)?;
                let line = checkpoint_line(i, &r, interval);
                {
                    let mut f = file.lock().expect("checkpoint");
                    writeln!(f, "{line}").map_err(|e| ck_err(&ck, e))?;
                    f.flush().map_err(|e| ck_err(&ck, e))?;
                }
                fresh.lock().expect("results").push((i, r, interval));
                bar.inc(1);
                Ok::<(), SweepError>(())
            })
        })?;
        let mut rows = fresh.into_inner().expect("results");
        computed += rows.len();
        for j in positions {
            if let Some((r, interval)) = done.remove(&index(j)) {
                rows.push((index(j), r, interval));
            }
        }
        rows.sort_by_key(|(i, _, _)| *i);
        writer.write(&mut frame(grid, &rows, opts.uncertainty.is_some())?)?;
    }
    bar.finish_and_clear();
    file.into_inner()
        .expect("checkpoint")
        .sync_all()
        .map_err(|e| ck_err(&ck, e))?;
    writer.finish()?;
    let _ = std::fs::remove_file(&ck);
    Ok(Summary {
        points: mine,
        resumed,
        computed,
        warnings: {
            // the checkpoint's first: they concern what this run did
            warnings.extend(checked.warnings);
            warnings
        },
    })
}

/// What [`check`] found: the shard's fingerprint, its first point's
/// scenario name (for the checkpoint's header), and its points when asked
/// to keep them.
struct Checked {
    fingerprint: String,
    scenario: String,
    /// The j-th point of the shard at j; empty unless kept.
    points: Vec<Point>,
    /// The points' warnings, each once, sorted.
    warnings: Vec<String>,
}

/// Validates this shard's points (`mine` of them, the j-th being point
/// `index(j)`) in parallel, so a bad value is reported before anything
/// runs, and fingerprints them: two runs resume each other's checkpoint
/// only if they sweep the same points with the same settings. The
/// fingerprint is an order-independent sum of a hash (FNV-1a) of each
/// point's index and configuration, stable for a given dtsim build. When
/// several points are bad, the error of the lowest one is reported.
///
/// With `keep`, the points are returned, so that a shard small enough to
/// hold (one block) is built once; otherwise each is dropped once checked,
/// and memory does not grow with the grid.
fn check(
    grid: &Grid,
    mine: usize,
    index: &(dyn Fn(usize) -> usize + Sync),
    keep: bool,
) -> Result<Checked, SweepError> {
    /// The hash of a point, fed its Debug form as it is written.
    struct Fnv(u64);
    impl Fnv {
        fn new() -> Fnv {
            Fnv(0xcbf2_9ce4_8422_2325)
        }
    }
    impl std::fmt::Write for Fnv {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            for b in text.bytes() {
                self.0 ^= b as u64;
                self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            }
            Ok(())
        }
    }
    /// Hash sum, first point's scenario name and the kept points of a run
    /// of positions; or the lowest bad point and its error.
    type Part = Result<Found, (usize, sim::scenario::ScenarioError)>;
    type Found = (u64, Option<String>, Vec<Point>, BTreeSet<String>);
    let part: Part = (0..mine)
        .into_par_iter()
        .map(|j| {
            let i = index(j);
            let p = grid.point(i).map_err(|e| (i, e))?;
            let mut h = Fnv::new();
            write!(h, "{i} {:?} {:?}", p.config, p.sweep).expect("hashing cannot fail");
            let name = (j == 0).then(|| p.config.name.clone());
            let warnings = p.warnings.iter().map(|w| w.to_string()).collect();
            Ok((h.0, name, if keep { vec![p] } else { Vec::new() }, warnings))
        })
        // in order: the kept points stay in position order
        .reduce(
            || Ok((0, None, Vec::new(), BTreeSet::new())),
            |a: Part, b: Part| match (a, b) {
                (Ok((x, n, mut p, mut w)), Ok((y, m, q, v))) => {
                    p.extend(q);
                    w.extend(v);
                    Ok((x.wrapping_add(y), n.or(m), p, w))
                }
                (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
                (Err(e1), Err(e2)) => Err(if e1.0 <= e2.0 { e1 } else { e2 }),
            },
        );
    let (sum, scenario, points, warnings) = part.map_err(|(_, e)| SweepError::Scenario(e))?;
    let mut version = Fnv::new();
    write!(version, "{}", env!("CARGO_PKG_VERSION")).expect("hashing cannot fail");
    Ok(Checked {
        fingerprint: format!("{:016x}", sum ^ version.0),
        scenario: scenario.unwrap_or_default(),
        points,
        warnings: warnings.into_iter().collect(),
    })
}

/// The result columns of a sweep table, in order: the scalar fields of
/// [`RunResult`], named as the fields.
pub fn result_columns() -> Vec<&'static str> {
    results::names()
}

/// The numeric columns of dtsim's own in a sweep table, with the type
/// their values read as: `point` and `grid_points`, the numeric result
/// columns, and the percentiles' columns of `--uncertainty`. (The swept
/// keys' columns are typed by the grid, which a table does not record.)
pub(crate) fn numeric_columns() -> Vec<(&'static str, table::Expect)> {
    use results::Cell;
    let mut cols = vec![
        ("point", table::Expect::U64),
        ("grid_points", table::Expect::U64),
    ];
    let fields = results::fields(&RunResult::default())
        .into_iter()
        .chain(results::fields(&Interval::default()));
    cols.extend(fields.filter_map(|(name, cell)| match cell {
        Cell::U32(_) => Some((name, table::Expect::U32)),
        Cell::U64(_) => Some((name, table::Expect::U64)),
        Cell::F64(_) if matches!(name, "throughput" | "iteration_time_s") => {
            Some((name, table::Expect::Positive))
        }
        Cell::F64(_) => Some((name, table::Expect::F64)),
        Cell::Text(_) => None,
    }));
    cols
}

/// The column of swept key `key`: the key itself, or `sweep.KEY` when the
/// key is a top-level one that a fixed column already has the name of
/// (sweeping a whole `model` table, say).
pub fn swept_column(key: &str) -> String {
    if key == "point" || key == "grid_points" || result_columns().contains(&key) {
        format!("sweep.{key}")
    } else {
        key.to_string()
    }
}

/// The column type of a swept key: integer, float, boolean or (mixed or
/// anything else) string, decided by all the values the key takes.
#[derive(Clone, Copy)]
enum KeyType {
    Int,
    Float,
    Bool,
    Text,
}

fn key_type(values: &[toml::Value]) -> KeyType {
    use toml::Value as V;
    if values.iter().all(|v| matches!(v, V::Integer(_))) {
        KeyType::Int
    } else if values
        .iter()
        .all(|v| matches!(v, V::Float(_) | V::Integer(_)))
    {
        KeyType::Float
    } else if values.iter().all(|v| matches!(v, V::Boolean(_))) {
        KeyType::Bool
    } else {
        KeyType::Text
    }
}

/// The tidy table of finished points `rows` (sorted by point), with the
/// percentiles' columns when `intervals`.
fn frame(grid: &Grid, rows: &[Row], intervals: bool) -> Result<DataFrame, SweepError> {
    let n = rows.len();
    let mut cols: Vec<Column> = vec![
        Column::new(
            "point".into(),
            rows.iter().map(|(i, _, _)| *i as u64).collect::<Vec<_>>(),
        ),
        Column::new("grid_points".into(), vec![grid.len() as u64; n]),
    ];
    let swept: Vec<_> = rows.iter().map(|(i, _, _)| grid.swept(*i)).collect();
    for k in grid.keys() {
        let name = swept_column(k).into();
        let vals = swept.iter().map(|s| &s[k]);
        let col = match key_type(grid.values(k).expect("a swept key")) {
            KeyType::Int => Column::new(name, vals.map(|v| v.as_integer()).collect::<Vec<_>>()),
            KeyType::Float => Column::new(
                name,
                vals.map(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                    .collect::<Vec<_>>(),
            ),
            KeyType::Bool => Column::new(name, vals.map(|v| v.as_bool()).collect::<Vec<_>>()),
            KeyType::Text => Column::new(name, vals.map(value_text).collect::<Vec<_>>()),
        };
        cols.push(col);
    }
    cols.extend(results::columns(rows.iter().map(|(_, r, _)| r)));
    if intervals {
        // every point of a sweep with --uncertainty has its interval
        let none = Interval::default();
        cols.extend(results::columns(
            rows.iter().map(|(_, _, i)| i.as_ref().unwrap_or(&none)),
        ));
    }
    DataFrame::new(n, cols).map_err(|e| SweepError::Merge(e.to_string()))
}

/// Joins shard tables into one, refusing overlapping or missing points.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<Summary, SweepError> {
    table::Format::of(out)?;
    if inputs.is_empty() {
        return Err(SweepError::Merge("give at least one table to merge".into()));
    }
    let mut frames = Vec::new();
    for p in inputs {
        let df = table::read(p)?;
        for c in ["point", "grid_points"] {
            if df.column(c).is_err() {
                return Err(SweepError::Merge(format!(
                    "{}: no `{c}` column; is it a dtsim sweep table?",
                    p.display()
                )));
            }
        }
        frames.push((p, df));
    }
    let names = frames[0].1.get_column_names_owned();
    for (p, df) in &frames[1..] {
        if df.get_column_names_owned() != names {
            return Err(SweepError::Merge(format!(
                "{}: its columns differ from {}'s",
                p.display(),
                frames[0].0.display()
            )));
        }
    }
    // every row's point must be a point of its grid: whole, in range
    let mut points = Vec::new();
    let mut grids = BTreeSet::new();
    for (p, df) in &frames {
        let f64s = |name: &str| -> Result<Vec<Option<f64>>, SweepError> {
            let c = df
                .column(name)
                .and_then(|c| c.cast(&DataType::Float64))
                .map_err(|e| SweepError::Merge(format!("{}: `{name}`: {e}", p.display())))?;
            let ca = c.f64().map_err(|e| SweepError::Merge(e.to_string()))?;
            Ok(ca.iter().collect())
        };
        for (row, (pt, g)) in f64s("point")?
            .into_iter()
            .zip(f64s("grid_points")?)
            .enumerate()
        {
            let whole = |v: Option<f64>| v.filter(|v| v.fract() == 0.0 && *v >= 0.0);
            match (whole(pt), whole(g)) {
                (Some(pt), Some(g)) if pt < g => {
                    points.push(pt as u64);
                    grids.insert(g as u64);
                }
                _ => {
                    let show = |v: Option<f64>| v.map_or("empty".to_string(), |v| v.to_string());
                    return Err(SweepError::Merge(format!(
                        "{}: row {}: point {} is not a point of a grid of {} points",
                        p.display(),
                        row + 1,
                        show(pt),
                        show(g)
                    )));
                }
            }
        }
    }
    // a shard with no points (more shards than points) adds nothing; as
    // CSV its columns have no type to stack with, so it is left out
    let mut rows = frames.iter().filter(|(_, df)| df.height() > 0);
    let Some((first_path, first)) = rows.next() else {
        return Err(SweepError::Merge(
            "the tables have no rows: nothing to merge".into(),
        ));
    };
    let mut all = first.clone();
    for (p, df) in rows {
        // a CSV and a Parquet shard of one sweep may type a column
        // differently (Int64 and UInt64): stack as the first table types it
        let mut df = df.clone();
        for c in all.columns() {
            let want = c.dtype();
            if df
                .column(c.name())
                .map(|d| d.dtype() != want)
                .unwrap_or(false)
            {
                let d = df.column(c.name()).expect("the columns are the same");
                let cast = d.strict_cast(want).map_err(|e| {
                    // a value of a swept key's column (typed by what
                    // the file holds) that the first table's type
                    // cannot hold: name its row
                    let lax = d.cast(want).ok();
                    let bad = (0..d.len()).find_map(|i| {
                        let v = d.get(i).ok()?;
                        let now = lax.as_ref()?.get(i).ok()?;
                        (!v.is_null() && now.is_null()).then(|| {
                            let text = v.get_str().map_or_else(|| v.to_string(), str::to_string);
                            (i, text)
                        })
                    });
                    SweepError::Merge(match bad {
                        Some((i, text)) => format!(
                            "{}: row {}: column `{}`: `{text}` is not a value of type {want}, \
                             the column's type in {}",
                            p.display(),
                            i + 1,
                            c.name(),
                            first_path.display()
                        ),
                        None => format!("{}: `{}`: {e}", p.display(), c.name()),
                    })
                })?;
                df.with_column(cast)
                    .map_err(|e| SweepError::Merge(format!("{}: {e}", p.display())))?;
            }
        }
        all.vstack_mut(&df)
            .map_err(|e| SweepError::Merge(format!("{}: {e}", p.display())))?;
    }
    if grids.len() != 1 {
        return Err(SweepError::Merge(format!(
            "the tables come from grids of different sizes: {grids:?}"
        )));
    }
    let grid = *grids.iter().next().expect("one");
    let mut seen = BTreeSet::new();
    let mut dup = Vec::new();
    for &p in &points {
        if !seen.insert(p) {
            dup.push(p);
        }
    }
    if !dup.is_empty() {
        dup.truncate(10);
        return Err(SweepError::Merge(format!(
            "overlapping shards: points {dup:?} appear more than once"
        )));
    }
    let missing: Vec<u64> = (0..grid).filter(|p| !seen.contains(p)).take(10).collect();
    if !missing.is_empty() {
        return Err(SweepError::Merge(format!(
            "missing points (first {}): {missing:?} of a grid of {grid}",
            missing.len()
        )));
    }
    let mut sorted = all
        .sort(["point"], SortMultipleOptions::default())
        .map_err(|e| SweepError::Merge(e.to_string()))?;
    table::write(&mut sorted, out)?;
    Ok(Summary {
        points: grid as usize,
        resumed: 0,
        computed: 0,
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shard of one block runs the points it validated; a larger one
    /// builds them again: the same table either way.
    #[test]
    fn kept_and_rebuilt_points_give_the_same_table() {
        let text = "[cluster]\nnodes = 1\ngpus_per_node = 2\nnetwork = \"eth-10g\"\n\
                    model = \"analytical\"\n\
                    [model]\npreset = \"alexnet\"\nbatch_per_gpu = 8\ngpu = \"titan-xp\"\n\
                    [sweep]\n\"cluster.nodes\" = [1, 2, 3]\n\"strategy.schedule\" = [\"fifo\", \"priority\"]\n";
        let grid = sim::scenario::open_str_in(text, "t.toml", "t", None).unwrap();
        let dir = std::env::temp_dir().join(format!("dtsim-sweep-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let table = |block_points: usize| {
            let out = dir.join(format!("b{block_points}.csv"));
            let opts = Options {
                jobs: 2,
                shard: None,
                progress: false,
                block_points,
                uncertainty: None,
            };
            let s = run(&grid, &out, &opts).unwrap();
            assert_eq!((s.points, s.computed), (6, 6));
            std::fs::read(&out).unwrap()
        };
        let kept = table(0);
        assert!(kept == table(4), "blocks of 4 rebuild the points");
        assert!(kept == table(1));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_table_has_the_documented_columns_and_swept_keys_never_clash() {
        let text = "[cluster]\nnodes = 1\ngpus_per_node = 2\nnetwork = \"eth-10g\"\n\
                    [model]\npreset = \"resnet50\"\nbatch_per_gpu = 8\ngpu = \"titan-xp\"\n\
                    [sweep]\n\"cluster.nodes\" = [1, 2]\n\"iterations\" = [2, 3]\n";
        let grid = sim::scenario::open_str_in(text, "t.toml", "t", None).unwrap();
        let names: Vec<String> = frame(&grid, &[], false)
            .unwrap()
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect();
        // the fields of RunResult but its map, in order, as
        // docs/scenarios.md lists them
        let documented = "scenario, nodes, gpus, network, net_model, model, gpu, \
            batch_per_gpu, dense, algo, sparse, schedule, compute_jitter, \
            message_overhead_s, nic_efficiency, iteration_time_s, throughput, \
            throughput_unit, scaling_efficiency, compute_s, comm_s, exposed_comm_s, \
            compression_s, bytes_sent_per_gpu, busiest_link, busiest_link_utilisation, \
            messages_per_iteration, events";
        assert_eq!(result_columns().join(", "), documented);
        let mut want = vec!["point", "grid_points", "cluster.nodes", "iterations"];
        want.extend(result_columns());
        assert_eq!(names, want);
        // typed as the fields, also without rows
        let empty = frame(&grid, &[], false).unwrap();
        let dtype = |c: &str| empty.column(c).unwrap().dtype().clone();
        assert_eq!(dtype("gpus"), DataType::UInt32);
        assert_eq!(dtype("events"), DataType::UInt64);
        assert_eq!(dtype("throughput"), DataType::Float64);
        assert_eq!(dtype("network"), DataType::String);
        assert_eq!(dtype("busiest_link"), DataType::String);
        assert_eq!(dtype("busiest_link_utilisation"), DataType::Float64);
        assert_eq!(swept_column("model"), "sweep.model");
        assert_eq!(swept_column("events"), "sweep.events");
        assert_eq!(swept_column("iterations"), "iterations");
    }

    /// With `uncertainty`, each point has the percentiles `dtsim run
    /// --uncertainty` gives it, as seven more columns after the results;
    /// a checkpoint keeps them, and a checkpoint of another number of
    /// runs is not resumed.
    #[test]
    fn uncertainty_adds_each_points_percentiles() {
        let text = "[cluster]\nnodes = 1\ngpus_per_node = 4\nnetwork = \"eth-10g\"\n\
                    model = \"analytical\"\n\
                    [model]\npreset = \"alexnet\"\nbatch_per_gpu = 8\ngpu = \"titan-xp\"\ncompute_jitter = 0.05\n\
                    [sweep]\n\"cluster.nodes\" = [1, 2]\n";
        let grid = sim::scenario::open_str_in(text, "t.toml", "t", None).unwrap();
        let dir = std::env::temp_dir().join(format!("dtsim-sweep-u-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("u.csv");
        let opts = Options {
            jobs: 2,
            shard: None,
            progress: false,
            block_points: 0,
            uncertainty: Some(16),
        };
        run(&grid, &out, &opts).unwrap();
        let df = crate::table::read(&out).unwrap();
        let names: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect();
        let tail: Vec<&str> = names[names.len() - 7..]
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(
            tail,
            [
                "uncertainty_samples",
                "iteration_time_s_p5",
                "iteration_time_s_p50",
                "iteration_time_s_p95",
                "throughput_p5",
                "throughput_p50",
                "throughput_p95"
            ]
        );
        for i in 0..grid.len() {
            let p = grid.point(i).unwrap();
            let r = simulate(&p.config).unwrap();
            let want = crate::run::interval(&p.config, &r, 16).unwrap();
            let got = |c: &str| df.column(c).unwrap().f64().unwrap().get(i).unwrap();
            assert_eq!(got("iteration_time_s_p5"), want.iteration_time_s_p5);
            assert_eq!(got("throughput_p95"), want.throughput_p95);
            assert!(want.iteration_time_s_p5 < want.iteration_time_s_p95);
        }
        // a checkpoint line keeps the interval; one without reads as none
        let p = grid.point(1).unwrap();
        let r = simulate(&p.config).unwrap();
        let i = crate::run::interval(&p.config, &r, 16).unwrap();
        let line: Line = serde_json::from_str(&checkpoint_line(1, &r, Some(i))).unwrap();
        assert_eq!(line.interval, Some(i));
        let line: Line = serde_json::from_str(&checkpoint_line(1, &r, None)).unwrap();
        assert_eq!(line.interval, None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A checkpoint as an interrupted run of `grid` (all of it) leaves it:
    /// its header, and the lines of `points` finished.
    fn checkpoint_of(grid: &Grid, points: &[usize]) -> (String, Vec<String>) {
        let checked = check(grid, grid.len(), &|j| j, false).unwrap();
        let header = Header {
            dtsim_sweep: 1,
            scenario: checked.scenario,
            grid_points: grid.len(),
            shard: "1/1".into(),
            fingerprint: checked.fingerprint,
        };
        let lines = points
            .iter()
            .map(|&i| {
                let r = simulate(&grid.point(i).unwrap().config).unwrap();
                checkpoint_line(i, &r, None)
            })
            .collect();
        (serde_json::to_string(&header).unwrap(), lines)
    }

    fn small_grid(name: &str) -> Grid {
        let text = "[cluster]\nnodes = 1\ngpus_per_node = 2\nnetwork = \"eth-10g\"\n\
                    model = \"analytical\"\n\
                    [model]\npreset = \"alexnet\"\nbatch_per_gpu = 8\ngpu = \"titan-xp\"\n\
                    [sweep]\n\"cluster.nodes\" = [1, 2, 3]\n\"strategy.schedule\" = [\"fifo\", \"priority\"]\n";
        sim::scenario::open_str_in(text, &format!("{name}.toml"), name, None).unwrap()
    }

    fn one_job() -> Options {
        Options {
            jobs: 1,
            shard: None,
            progress: false,
            block_points: 0,
            uncertainty: None,
        }
    }

    /// A last line cut short (a kill mid-write) is not counted, silently;
    /// a damaged line before it is skipped with a warning naming the
    /// checkpoint and the line, and its point computed again; the lines
    /// after it are still resumed. The table is a fresh run's.
    #[test]
    fn a_damaged_checkpoint_line_is_skipped_with_a_warning() {
        let grid = small_grid("t");
        let dir = std::env::temp_dir().join(format!("dtsim-sweep-ck-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fresh = dir.join("fresh.csv");
        run(&grid, &fresh, &one_job()).unwrap();

        let out = dir.join("r.csv");
        let ck = checkpoint_path(&out);
        let (header, lines) = checkpoint_of(&grid, &[0, 1, 3, 4]);
        // only the cut last line: resumed silently, as before
        let cut = &lines[3][..lines[3].len() / 2];
        std::fs::write(&ck, format!("{header}\n{}\n{}\n{cut}", lines[0], lines[1])).unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert_eq!((s.resumed, s.computed), (2, 4));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&fresh).unwrap());

        // line 3 garbage, line 5 a point of no such grid, line 7 cut
        let text = format!(
            "{header}\n{}\n{{\"point\": 1, \"resu\n{}\n{}\n{}\n{cut}",
            lines[0],
            lines[1],
            lines[2].replacen("\"point\":3", "\"point\":99", 1),
            lines[2]
        );
        std::fs::write(&ck, text).unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert_eq!((s.resumed, s.computed), (3, 3));
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        let w = &s.warnings[0];
        let want = format!("{}, line 3: not a finished point (", ck.display());
        assert!(w.starts_with(&want), "{w}");
        assert!(
            w.ends_with(
                " (and 1 more such line): skipped; the points it should hold are computed again"
            ),
            "{w}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&fresh).unwrap());
        assert!(!ck.exists());

        // a line that is not even text does not end the reading
        let mut bytes = format!("{header}\n{}\n", lines[0]).into_bytes();
        bytes.extend(b"\xff\xfe\n");
        bytes.extend(format!("{}\n{}\n", lines[1], lines[2]).bytes());
        std::fs::write(&ck, bytes).unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert_eq!((s.resumed, s.computed), (3, 3));
        assert!(
            s.warnings[0].starts_with(&format!("{}, line 3: not a finished point", ck.display())),
            "{:?}",
            s.warnings
        );
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&fresh).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A checkpoint of another scenario is not resumed, with a warning
    /// that says why; its finished points are kept aside, not overwritten.
    #[test]
    fn a_checkpoint_of_another_sweep_is_kept_aside_with_a_warning() {
        let dir = std::env::temp_dir().join(format!("dtsim-sweep-other-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("r.csv");
        let ck = checkpoint_path(&out);
        let (header, lines) = checkpoint_of(&small_grid("other"), &[0, 1]);
        let theirs = format!("{header}\n{}\n{}\n", lines[0], lines[1]);
        std::fs::write(&ck, &theirs).unwrap();
        let grid = small_grid("t");
        let s = run(&grid, &out, &one_job()).unwrap();
        assert_eq!((s.resumed, s.computed), (0, 6));
        let aside = dir.join("r.csv.partial.stale");
        assert_eq!(
            s.warnings,
            [format!(
                "{}: a checkpoint of another sweep (of scenario `other`, not `t`): \
                 not resumed; moved to {}, with its 2 finished points",
                ck.display(),
                aside.display()
            )]
        );
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), theirs);
        // a second one goes beside the first
        std::fs::write(&ck, &theirs).unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert!(
            s.warnings[0].ends_with("r.csv.partial.stale2, with its 2 finished points"),
            "{:?}",
            s.warnings
        );
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), theirs);

        // not a checkpoint at all; one of a header only goes unkept
        std::fs::write(&ck, "results of last week\n1,2,3\n").unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert!(
            s.warnings[0].starts_with(&format!(
                "{}, line 1: not the header of a dtsim sweep checkpoint (",
                ck.display()
            )),
            "{:?}",
            s.warnings
        );
        let stale3 = dir.join("r.csv.partial.stale3");
        assert!(
            s.warnings[0].ends_with(&format!("): not resumed; moved to {}", stale3.display())),
            "{:?}",
            s.warnings
        );
        assert!(stale3.exists());
        std::fs::write(&ck, format!("{header}\n")).unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert!(
            s.warnings[0].ends_with("not resumed (it holds no finished point)"),
            "{:?}",
            s.warnings
        );
        assert!(!dir.join("r.csv.partial.stale4").exists());

        // the same scenario made with other settings, or --uncertainty
        let (mine, lines) = checkpoint_of(&grid, &[0]);
        let mut h: Header = serde_json::from_str(&mine).unwrap();
        h.fingerprint = format!("{}-u16", h.fingerprint);
        let with_u = serde_json::to_string(&h).unwrap();
        std::fs::write(&ck, format!("{with_u}\n{}\n", lines[0])).unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert!(
            s.warnings[0]
                .contains("(made with --uncertainty 16, not without --uncertainty): not resumed"),
            "{:?}",
            s.warnings
        );
        h.fingerprint = "0123456789abcdef".into();
        let other = serde_json::to_string(&h).unwrap();
        std::fs::write(&ck, format!("{other}\n{}\n", lines[0])).unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert!(
            s.warnings[0].contains(
                "(of other settings of the scenario, or made by another dtsim version): not resumed"
            ),
            "{:?}",
            s.warnings
        );
        // this sweep's own resumes silently
        std::fs::write(&ck, format!("{mine}\n{}\n", lines[0])).unwrap();
        let s = run(&grid, &out, &one_job()).unwrap();
        assert_eq!((s.resumed, s.computed), (1, 5));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
