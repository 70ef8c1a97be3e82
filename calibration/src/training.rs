//! Calibration from measured training runs (issue 14, item 2): `dtsim
//! calibrate training` and `dtsim validate --training`.
//!
//! A user who ran a few configurations of a job on their own cluster
//! writes what they measured in a CSV file, a row a run: the scenario's
//! swept keys (every one, named as in `[sweep]`) and the measured
//! `iteration_time_s` or `throughput` (the whole job's, in the scenario's
//! unit), for example
//!
//! ```text
//! # ResNet-20, 128 samples a worker, measured on our 1 GbE cluster
//! cluster.nodes,strategy.dense,throughput
//! 4,allreduce,5243
//! 8,allreduce,8975
//! ```
//!
//! Lines starting with `#` are comments. A cell is read as a TOML value
//! (`4`, `0.5`, `true`, `"x"`), else as text (`allreduce`, `4MiB`).
//! Without a scenario given beside the file, a `scenario` column names
//! each run's scenario file (relative to the measurements' file; rows
//! may name different files, each leaving the others' keys empty).
//!
//! [`fit`] finds the losses besides bytes (`sim::losses`: stragglers'
//! coefficient of variation, the per-message overhead, the NIC
//! efficiency) that make the simulator's iteration times closest to the
//! measured ones, in the least-squares sense of ln(predicted/measured)
//! (relative errors, so that a slow point weighs no more than a fast
//! one): projected Levenberg–Marquardt over the parameters' ranges, the
//! Jacobian by forward differences of whole simulations. The fit's
//! covariance is the residual variance times (JᵀJ)⁻¹ at the optimum, the
//! usual linearisation; a parameter that ends on a bound of its range, or
//! that no measured point depends on, gets none (and is named).
//!
//! Every prediction is a simulation of the scenario at the measured
//! point with those losses: nothing is interpolated between points.

use crate::calibrate::{CalibrateError, Requester};
use crate::fit::solve;
use crate::profile::{Profile, Provenance, TrainingEntry, TrainingPointEntry, now_rfc3339};
use rayon::prelude::*;
use sim::losses::Param;
use sim::scenario;
use sim::train::{TrainConfig, simulate};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The measured column that gives seconds an iteration.
pub const TIME_COLUMN: &str = "iteration_time_s";
/// The measured column that gives the job's throughput.
pub const THROUGHPUT_COLUMN: &str = "throughput";

/// One measured run, at its point of the scenario.
#[derive(Debug, Clone)]
pub struct Run {
    /// Line of the measurements' file (1-based).
    pub line: usize,
    /// The point's keys and values, as the file gave them
    /// (`cluster.nodes=4, strategy.dense=allreduce`).
    pub label: String,
    /// The run's scenario file: `--scenario` as given, or the row's
    /// [`SCENARIO_COLUMN`] joined to the measurements' directory.
    pub scenario: String,
    /// The swept keys and their values.
    pub keys: BTreeMap<String, toml::Value>,
    /// The scenario at this point, with its own losses.
    pub config: TrainConfig,
    /// Measured seconds an iteration (from the throughput where the file
    /// gives that: the point's work an iteration over it).
    pub measured_s: f64,
}

/// A measurements' file problem, located.
fn at(path: &Path, line: usize, m: impl std::fmt::Display) -> CalibrateError {
    CalibrateError::Input(format!("{}:{line}: {m}", path.display()))
}

/// A cell as a TOML value where it reads as one, else as text.
fn cell_value(cell: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {cell}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(cell.to_string()))
}

/// A number of seconds or of throughput, finite and positive.
fn measured_number(
    path: &Path,
    line: usize,
    column: &str,
    cell: &str,
) -> Result<f64, CalibrateError> {
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(at(
            path,
            line,
            format!("column `{column}`: `{cell}` is not a positive number"),
        )),
    }
}

/// The column that names each run's scenario file (relative to the
/// measurements' file) where no scenario is given beside the file.
pub const SCENARIO_COLUMN: &str = "scenario";

/// Reads the measured runs from the CSV file `measured`: of `scenario`,
/// or, where that is `None`, of the scenario file each row names in its
/// [`SCENARIO_COLUMN`] (a path relative to `measured`'s directory; rows
/// may name different files, each row giving the keys its own file
/// sweeps and leaving the others' columns empty).
pub fn read_runs(scenario: Option<&Path>, measured: &Path) -> Result<Vec<Run>, CalibrateError> {
    let fixed = scenario
        .map(|s| scenario::open_file(s).map_err(|e| CalibrateError::Input(e.to_string())))
        .transpose()?;
    let bytes = std::fs::read(measured)
        .map_err(|e| CalibrateError::Input(format!("{}: cannot read: {e}", measured.display())))?;
    // a line of spaces is a blank line: made a comment, which the reader
    // skips and counts (line numbers stay the file's)
    let text: Vec<u8> = bytes
        .split_inclusive(|&b| b == b'\n')
        .flat_map(|l| {
            let blank = l.iter().all(|b| b.is_ascii_whitespace());
            let keep: &[u8] = match (blank, l.ends_with(b"\n")) {
                (false, _) => l,
                (true, true) => b"#\n",
                (true, false) => b"",
            };
            keep.iter().copied()
        })
        .collect();
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_slice());
    let headers = reader
        .headers()
        .map_err(|e| at(measured, csv_line(&text, &e), csv_message(&e)))?
        .clone();
    let columns: Vec<String> = headers.iter().map(str::to_string).collect();
    if columns.iter().all(|c| c.is_empty()) {
        return Err(CalibrateError::Input(format!(
            "{}: has no header line; the first line names the columns: the scenario's swept keys and `{TIME_COLUMN}` or `{THROUGHPUT_COLUMN}`",
            measured.display()
        )));
    }
    let head = headers.position().map_or(1, |p| line_at(&text, p));
    let scenario_col = columns.iter().position(|c| c == SCENARIO_COLUMN);
    match (&fixed, scenario_col) {
        (Some(_), Some(_)) => {
            return Err(at(
                measured,
                head,
                format!(
                    "column `{SCENARIO_COLUMN}` names each run's scenario file: give it or --scenario, not both"
                ),
            ));
        }
        (None, None) => {
            return Err(at(
                measured,
                head,
                format!(
                    "which scenario were these runs of? give --scenario FILE, or a column `{SCENARIO_COLUMN}` naming each run's scenario file (relative to this file)"
                ),
            ));
        }
        _ => {}
    }
    let mut value_col = None;
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].contains(c) {
            return Err(at(measured, head, format!("column `{c}` appears twice")));
        }
        if c == TIME_COLUMN || c == THROUGHPUT_COLUMN {
            if let Some((_, other)) = value_col {
                return Err(at(
                    measured,
                    head,
                    format!("give one measured column, `{other}` or `{c}`, not both"),
                ));
            }
            value_col = Some((i, c.clone()));
        }
    }
    let Some((value_col, value_name)) = value_col else {
        return Err(at(
            measured,
            head,
            format!(
                "no measured column: add `{TIME_COLUMN}` (seconds an iteration) or `{THROUGHPUT_COLUMN}` (the whole job's, in the scenario's unit)"
            ),
        ));
    };
    // every key column swept by a run's scenario (and, with --scenario,
    // every key it sweeps a column)
    let is_key = |i: usize| i != value_col && Some(i) != scenario_col;
    let check_columns = |grids: &[(String, PathBuf, scenario::Grid)]| {
        for (i, c) in columns.iter().enumerate() {
            if is_key(i) && !grids.iter().any(|(_, _, g)| g.keys().contains(c)) {
                let mut expected: Vec<&str> = grids
                    .iter()
                    .flat_map(|(_, _, g)| g.keys().iter().map(String::as_str))
                    .collect();
                expected.sort_unstable();
                expected.dedup();
                let what = if expected.is_empty() {
                    format!(
                        "column `{c}` is not a key the scenario sweeps (it sweeps none: give `{TIME_COLUMN}` or `{THROUGHPUT_COLUMN}` alone)"
                    )
                } else {
                    expected.extend([TIME_COLUMN, THROUGHPUT_COLUMN]);
                    sim::names::unknown("column", c, &expected)
                        + " (the scenario's swept keys and the measured value)"
                };
                return Err(at(measured, head, what));
            }
        }
        if scenario_col.is_none()
            && let Some(k) = grids[0].2.keys().iter().find(|k| !columns.contains(k))
        {
            return Err(at(
                measured,
                head,
                format!(
                    "the scenario sweeps `{k}`, and each run must say its value: add a column `{k}`"
                ),
            ));
        }
        Ok(())
    };
    // the rows, each with its scenario's index in `grids`
    let mut rows = Vec::new();
    // (the name as the runs give it, the path as the user reaches it, the
    // grid): `--scenario`'s, or each named in the column
    let mut grids: Vec<(String, PathBuf, scenario::Grid)> = Vec::new();
    if let (Some(g), Some(s)) = (fixed, scenario) {
        grids.push((s.display().to_string(), s.to_path_buf(), g));
        // its columns checked before its rows, as they always were
        check_columns(&grids)?;
    }
    let dir = measured.parent().unwrap_or(Path::new(""));
    for record in reader.records() {
        let record = record.map_err(|e| at(measured, csv_line(&text, &e), csv_message(&e)))?;
        let line = record.position().map_or(0, |p| line_at(&text, p));
        if record.iter().all(str::is_empty) {
            continue;
        }
        let grid = match scenario_col {
            None => 0,
            Some(sc) => {
                let name = &record[sc];
                if name.is_empty() {
                    return Err(at(
                        measured,
                        line,
                        format!("column `{SCENARIO_COLUMN}` is empty"),
                    ));
                }
                // one file however the rows spell it (`a.toml`, `./a.toml`:
                // paths compare by their components)
                let path = dir.join(name);
                match grids.iter().position(|(_, p, _)| *p == path) {
                    Some(g) => g,
                    None => {
                        let g = scenario::open_file(&path).map_err(|e| {
                            at(measured, line, format!("column `{SCENARIO_COLUMN}`: {e}"))
                        })?;
                        grids.push((name.to_string(), path, g));
                        grids.len() - 1
                    }
                }
            }
        };
        rows.push((line, grid, record));
    }
    if rows.is_empty() {
        return Err(CalibrateError::Input(format!(
            "{}: has no measured run (a row a run after the header)",
            measured.display()
        )));
    }
    if scenario_col.is_some() {
        check_columns(&grids)?;
    }
    let mut runs = Vec::new();
    for (line, grid, record) in rows {
        let (name, path, grid) = &grids[grid];
        if let Some(k) = grid.keys().iter().find(|k| !columns.contains(k)) {
            return Err(at(
                measured,
                line,
                format!(
                    "this run's scenario {name} sweeps `{k}`, and each of its runs must say its value: add a column `{k}`"
                ),
            ));
        }
        let mut keys = BTreeMap::new();
        let mut label = Vec::new();
        if scenario_col.is_some() {
            label.push(format!("{SCENARIO_COLUMN}={name}"));
        }
        for (i, (c, cell)) in columns.iter().zip(record.iter()).enumerate() {
            if !is_key(i) {
                continue;
            }
            let swept = grid.keys().contains(c);
            match (swept, cell.is_empty()) {
                (true, true) => {
                    return Err(at(measured, line, format!("column `{c}` is empty")));
                }
                (false, false) => {
                    return Err(at(
                        measured,
                        line,
                        format!(
                            "column `{c}`: this run's scenario {name} does not sweep it; leave the cell empty"
                        ),
                    ));
                }
                (false, true) => continue,
                (true, false) => {}
            }
            keys.insert(c.clone(), cell_value(cell));
            label.push(format!("{c}={cell}"));
        }
        let point = grid.point_with(keys.clone()).map_err(|e| match &e.key {
            Some(k) if keys.contains_key(k) => {
                at(measured, line, format!("column `{k}`: {}", e.message))
            }
            _ => at(measured, line, format!("this run's point of {e}")),
        })?;
        let value = measured_number(measured, line, &value_name, &record[value_col])?;
        let config = point.config;
        let measured_s = if value_name == TIME_COLUMN {
            value
        } else {
            // the point's work an iteration, from its own simulation
            // (the same whatever the losses)
            let r = simulate(&config).map_err(|e| at(measured, line, e))?;
            r.throughput * r.iteration_time_s / value
        };
        // an iteration of more than a day is a unit mistake, not a run
        if !(measured_s.is_finite() && measured_s <= sim::limits::MAX_LAYER_TIME_S) {
            return Err(at(
                measured,
                line,
                format!(
                    "column `{value_name}`: {} makes an iteration of {measured_s:.3e} s, more than a day (is the unit the scenario's, for the whole job?)",
                    &record[value_col],
                ),
            ));
        }
        runs.push(Run {
            line,
            label: label.join(", "),
            scenario: path.display().to_string(),
            keys,
            config,
            measured_s,
        });
    }
    Ok(runs)
}

/// The scenarios of `runs`, each once, in the order of their first run.
pub fn scenarios_of(runs: &[Run]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        if !out.contains(&r.scenario) {
            out.push(r.scenario.clone());
        }
    }
    out
}

/// The 1-based line of `text` a record of the reader starts on: its
/// position is where the reader began, before the comment lines it
/// skipped, so those are stepped over here.
fn line_at(text: &[u8], p: &csv::Position) -> usize {
    let mut at = (p.byte() as usize).min(text.len());
    let mut line = text[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    while text[at..].starts_with(b"#") {
        match text[at..].iter().position(|&b| b == b'\n') {
            Some(n) => {
                at += n + 1;
                line += 1;
            }
            None => break,
        }
    }
    line
}

fn csv_line(text: &[u8], e: &csv::Error) -> usize {
    e.position().map_or(0, |p| line_at(text, p))
}

fn csv_message(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} cells where the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "is not UTF-8 text".into(),
        _ => e.to_string(),
    }
}

/// What the fit found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TrainingFit {
    /// The three losses at the optimum, fitted or held, in
    /// [`Param::ALL`]'s order: compute jitter, overhead (s), efficiency.
    pub values: [f64; 3],
    /// The parameters fitted.
    pub fitted: Vec<String>,
    /// Their standard errors (NaN where none is known: see `covariance`).
    pub standard_errors: Vec<f64>,
    /// Their covariance (rows and columns of parameters on a bound, or
    /// that no point depends on, are 0).
    pub covariance: Vec<Vec<f64>>,
    /// Fitted parameters that ended on a bound of their range.
    pub at_bound: Vec<String>,
    /// Fitted parameters no measured run depends on: they keep the
    /// scenario's value, and have no uncertainty.
    pub unidentified: Vec<String>,
    /// Fitted parameters the runs move only together (JᵀJ singular over
    /// them): they have no uncertainty.
    pub collinear: Vec<String>,
    /// Root mean square of ln(predicted/measured) at the optimum.
    pub rms_log_residual: f64,
    /// Levenberg–Marquardt iterations.
    pub iterations: u32,
    /// Simulations run.
    pub simulations: u64,
    /// What the runs cannot mean as given ([`calibrate`] fills it): a
    /// run faster than the scenario allows with no loss at all, or a fit
    /// that leaves the runs far off.
    pub warnings: Vec<String>,
}

/// A run is called faster than any loss allows when its measured time is
/// under this share of its prediction without losses (stragglers, the
/// only loss that can speed one GPU's mean, move a 10-iteration mean by
/// well under 5% at the largest CV dtsim takes on its measured window).
const BELOW_IDEAL: f64 = 0.95;

/// An rms of ln(predicted/measured) past which the fitted losses are
/// said not to describe the runs (a typical miss of a factor e^0.5 ≈ 1.65).
const FAR_OFF_RMS: f64 = 0.5;

/// The scenario's losses at a run's point, in [`Param::ALL`]'s order.
fn losses_of(cfg: &TrainConfig) -> [f64; 3] {
    Param::ALL.map(|p| p.get(cfg))
}

/// `cfg` with the losses `v` (in [`Param::ALL`]'s order).
fn with_losses(cfg: &TrainConfig, v: &[f64; 3]) -> TrainConfig {
    let mut c = cfg.clone();
    for (p, &x) in Param::ALL.iter().zip(v) {
        if p.get(&c) != x {
            p.set(&mut c, x);
        }
    }
    c
}

/// Predicted seconds an iteration of each run with the losses `v`, or,
/// with `None`, with the scenario's own losses (its defaults, or its
/// keys). A failure reported is the first run's in the file's order,
/// whichever ran first.
pub fn predict(runs: &[Run], v: Option<&[f64; 3]>) -> Result<Vec<f64>, CalibrateError> {
    let all: Vec<_> = runs
        .par_iter()
        .map(|r| {
            let res = match v {
                Some(v) => simulate(&with_losses(&r.config, v)),
                None => simulate(&r.config),
            };
            res.map(|res| res.iteration_time_s)
                .map_err(|e| CalibrateError::Input(format!("line {}: {e}", r.line)))
        })
        .collect();
    all.into_iter().collect()
}

/// Where a fitted parameter starts: the scenario's value, or, where that
/// is 0 (no loss), a typical cluster's (`sim::losses`' constants), so
/// that the first differences see the parameter at work.
fn start_value(p: Param, scenario: f64) -> f64 {
    match p {
        Param::ComputeJitter if scenario == 0.0 => sim::losses::TYPICAL_COMPUTE_JITTER,
        Param::MessageOverhead if scenario == 0.0 => sim::losses::TYPICAL_MESSAGE_OVERHEAD_S,
        _ => scenario,
    }
}

/// The scale a parameter's finite difference is taken at: 0.1% of its
/// value, or of a floor where the value is small (1 µs of overhead, 10%
/// efficiency, 0.1% of CV).
fn step(p: Param, v: f64) -> f64 {
    let floor = match p {
        Param::ComputeJitter => 1e-3,
        Param::MessageOverhead => 1e-6,
        Param::NicEfficiency => 0.1,
    };
    1e-3 * v.abs().max(floor)
}

/// Fits the losses `params` to the runs (the others held at the
/// scenario's values, which must be the same at every run).
pub fn fit(runs: &[Run], params: &[Param]) -> Result<TrainingFit, CalibrateError> {
    let p = params.len();
    if p == 0 {
        return Err(CalibrateError::Input(
            "--params: name at least one loss to fit".into(),
        ));
    }
    // repeats of a point measure its noise, not the losses: the points
    // are counted, not the rows (a review: five rows of one job fitted
    // three losses, exit 0)
    let mut distinct: Vec<(&str, &BTreeMap<String, toml::Value>)> = Vec::new();
    for r in runs {
        if !distinct.contains(&(r.scenario.as_str(), &r.keys)) {
            distinct.push((r.scenario.as_str(), &r.keys));
        }
    }
    let points = distinct.len();
    if points < p + 1 {
        let repeats = if points < runs.len() {
            format!(
                " ({} runs: repeats of a point measure its noise, not the losses)",
                runs.len()
            )
        } else {
            String::new()
        };
        return Err(CalibrateError::Input(format!(
            "{points} measured point{}{repeats} for {p} parameter{}: a fit with an uncertainty needs at least {} distinct points (measure more points, or fit fewer losses with --params)",
            if points == 1 { "" } else { "s" },
            if p == 1 { "" } else { "s" },
            p + 1
        )));
    }
    let base = losses_of(&runs[0].config);
    for r in runs {
        let here = losses_of(&r.config);
        for (i, q) in Param::ALL.iter().enumerate() {
            if params.contains(q) && here[i] != base[i] {
                return Err(CalibrateError::Input(format!(
                    "line {}: the runs set `{}` to different values ({} here, {} at line {}), and the fit gives it one value for all: fit the other losses only (--params), or measure at one value",
                    r.line,
                    q.key(),
                    here[i],
                    base[i],
                    runs[0].line
                )));
            }
            if !params.contains(q) && here[i] != base[i] {
                return Err(CalibrateError::Input(format!(
                    "line {}: the scenario gives this run another `{}` ({}) than line {}'s ({}); a held loss must be the same at every run (fit it too, or set it once)",
                    r.line,
                    q.key(),
                    here[i],
                    runs[0].line,
                    base[i]
                )));
            }
        }
    }
    let idx: Vec<usize> = params
        .iter()
        .map(|q| Param::ALL.iter().position(|a| a == q).expect("a loss"))
        .collect();
    let mut v = base;
    for (&i, &q) in idx.iter().zip(params) {
        v[i] = start_value(q, base[i]);
    }
    let ln_meas: Vec<f64> = runs.iter().map(|r| r.measured_s.ln()).collect();
    let mut sims = 0u64;
    let residuals = |v: &[f64; 3], sims: &mut u64| -> Result<Vec<f64>, CalibrateError> {
        *sims += runs.len() as u64;
        Ok(predict(runs, Some(v))?
            .iter()
            .zip(&ln_meas)
            .map(|(t, m)| t.ln() - m)
            .collect())
    };
    let cost = |r: &[f64]| r.iter().map(|x| x * x).sum::<f64>();
    let mut r = residuals(&v, &mut sims)?;
    let mut c = cost(&r);
    let mut lambda = 1e-3;
    let mut iterations = 0;
    let mut jac;
    let mut unidentified = vec![false; p];
    loop {
        // J by forward differences, inward at an upper bound
        jac = vec![vec![0.0; p]; runs.len()];
        for (j, (&i, &q)) in idx.iter().zip(params).enumerate() {
            let (_, hi) = q.range();
            let mut h = step(q, v[i]);
            if v[i] + h > hi {
                h = -h;
            }
            let mut w = v;
            w[i] += h;
            let mut rw = residuals(&w, &mut sims)?;
            if rw == r {
                // flat over 0.1%: the losses move the iteration piecewise,
                // so look again over ten times the step before calling
                // the parameter one that no run depends on
                h *= 10.0;
                w = v;
                w[i] = (v[i] + h).clamp(q.range().0, hi);
                h = w[i] - v[i];
                rw = residuals(&w, &mut sims)?;
            }
            for (row, (a, b)) in jac.iter_mut().zip(rw.iter().zip(&r)) {
                row[j] = if h != 0.0 { (a - b) / h } else { 0.0 };
            }
        }
        let g: Vec<f64> = (0..p)
            .map(|j| jac.iter().zip(&r).map(|(row, x)| row[j] * x).sum())
            .collect();
        let a: Vec<Vec<f64>> = (0..p)
            .map(|j| {
                (0..p)
                    .map(|k| jac.iter().map(|row| row[j] * row[k]).sum())
                    .collect()
            })
            .collect();
        // free parameters: not pushed past a bound by the descent, and
        // moving some point
        let free: Vec<usize> = (0..p)
            .filter(|&j| {
                let (lo, hi) = params[j].range();
                let x = v[idx[j]];
                unidentified[j] = a[j][j] <= 0.0;
                !(unidentified[j] || (x <= lo && g[j] > 0.0) || (x >= hi && g[j] < 0.0))
            })
            .collect();
        if free.is_empty() || iterations >= 100 {
            break;
        }
        let mut improved = false;
        while lambda < 1e10 {
            let m: Vec<Vec<f64>> = free
                .iter()
                .map(|&j| {
                    free.iter()
                        .map(|&k| a[j][k] + if j == k { lambda * a[j][j] } else { 0.0 })
                        .collect()
                })
                .collect();
            let rhs: Vec<f64> = free.iter().map(|&j| -g[j]).collect();
            let Some(delta) = solve(m, rhs) else {
                lambda *= 4.0;
                continue;
            };
            let mut w = v;
            for (&j, d) in free.iter().zip(&delta) {
                let (lo, hi) = params[j].range();
                w[idx[j]] = (w[idx[j]] + d).clamp(lo, hi);
            }
            if w == v {
                // the bounds cancel the whole step: a larger damping turns
                // it towards the steepest descent, which they allow
                lambda *= 4.0;
                continue;
            }
            let rw = residuals(&w, &mut sims)?;
            let cw = cost(&rw);
            if cw < c {
                let gain = (c - cw) / c.max(f64::MIN_POSITIVE);
                v = w;
                r = rw;
                c = cw;
                lambda = (lambda / 3.0).max(1e-12);
                improved = gain > 1e-10;
                break;
            }
            lambda *= 4.0;
        }
        iterations += 1;
        if !improved {
            break;
        }
    }
    // covariance over the parameters inside their ranges that move a point
    let n = runs.len();
    let inner: Vec<usize> = (0..p)
        .filter(|&j| {
            let (lo, hi) = params[j].range();
            let x = v[idx[j]];
            !unidentified[j] && x > lo && x < hi
        })
        .collect();
    // a loss no run depends on keeps the scenario's value, not the start
    for j in (0..p).filter(|&j| unidentified[j]) {
        v[idx[j]] = base[idx[j]];
    }
    // residual variance over the degrees of freedom the estimated
    // parameters leave
    let dof = n.saturating_sub(inner.len());
    let s2 = if dof > 0 { c / dof as f64 } else { f64::NAN };
    // the sensitivities at the optimum by central differences over ±1%
    // (of the value, or of the step's floor): a secant over a wider step
    // than the search's, since an overhead or a straggler moves the
    // iteration piecewise linearly (a message enters or leaves the
    // critical path), and a one-sided 0.1% difference at a kink can read
    // a slope that holds for no measurable change
    for (j, (&i, &q)) in idx.iter().zip(params).enumerate() {
        if !inner.contains(&j) {
            continue;
        }
        let (lo, hi) = q.range();
        let h = 10.0 * step(q, v[i]);
        let (a, b) = ((v[i] - h).max(lo), (v[i] + h).min(hi));
        let (mut wa, mut wb) = (v, v);
        wa[i] = a;
        wb[i] = b;
        let ra = residuals(&wa, &mut sims)?;
        let rb = residuals(&wb, &mut sims)?;
        for (row, (x, y)) in jac.iter_mut().zip(rb.iter().zip(&ra)) {
            row[j] = (x - y) / (b - a);
        }
    }
    let mut cov = vec![vec![0.0; p]; p];
    let ata = |j: usize, k: usize| jac.iter().map(|row| row[j] * row[k]).sum::<f64>();
    let inv = invert_well_determined(
        inner
            .iter()
            .map(|&j| inner.iter().map(|&k| ata(j, k)).collect())
            .collect(),
    );
    let mut collinear = Vec::new();
    match inv {
        Some(inv) if s2.is_finite() => {
            for (a, &j) in inner.iter().enumerate() {
                for (b, &k) in inner.iter().enumerate() {
                    cov[j][k] = s2 * inv[a][b];
                }
            }
        }
        // the runs move these losses only together: no one of them is
        // determined apart from the others
        None => {
            collinear = inner
                .iter()
                .map(|&j| params[j].name().to_string())
                .collect()
        }
        Some(_) => {}
    }
    let at_bound = (0..p)
        .filter(|&j| {
            let (lo, hi) = params[j].range();
            let x = v[idx[j]];
            x <= lo || x >= hi
        })
        .map(|j| params[j].name().to_string())
        .collect();
    Ok(TrainingFit {
        values: v,
        fitted: params.iter().map(|q| q.name().to_string()).collect(),
        standard_errors: (0..p)
            .map(|j| {
                if inner.contains(&j) && cov[j][j] > 0.0 {
                    cov[j][j].sqrt()
                } else {
                    f64::NAN
                }
            })
            .collect(),
        covariance: cov,
        at_bound,
        unidentified: (0..p)
            .filter(|&j| unidentified[j])
            .map(|j| params[j].name().to_string())
            .collect(),
        collinear,
        rms_log_residual: (c / n as f64).sqrt(),
        iterations,
        simulations: sims,
        warnings: Vec::new(),
    })
}

/// Largest variance inflation a determined parameter may have: the
/// diagonal of the inverse of JᵀJ scaled to a unit diagonal, 1/(1 − R²)
/// for the parameter's correlation R with the others. Past 10⁸ (R² within
/// 10⁻⁸ of 1) the runs move it only together with the others, and an
/// inverse by elimination gives rounding, not a covariance (a review: a
/// single point repeated gave negative variances and an asymmetric
/// matrix, a profile `dtsim run` then refused).
const MAX_VARIANCE_INFLATION: f64 = 1e8;

/// The inverse of the symmetric positive semi-definite `a` (JᵀJ), or
/// `None` where it is singular or so nearly so that a parameter's
/// variance inflation passes [`MAX_VARIANCE_INFLATION`]: scaled to a unit
/// diagonal, inverted, checked, and scaled back, symmetric by
/// construction.
fn invert_well_determined(a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    if (0..n).any(|i| !(a[i][i] > 0.0 && a[i][i].is_finite())) {
        return None;
    }
    let d: Vec<f64> = (0..n).map(|i| a[i][i].sqrt()).collect();
    let scaled: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| a[i][j] / (d[i] * d[j])).collect())
        .collect();
    let inv = invert(scaled)?;
    if (0..n).any(|i| !(inv[i][i] >= 1.0 - 1e-9 && inv[i][i] <= MAX_VARIANCE_INFLATION)) {
        return None;
    }
    Some(
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| 0.5 * (inv[i][j] + inv[j][i]) / (d[i] * d[j]))
                    .collect()
            })
            .collect(),
    )
}

/// The inverse of a small matrix, column by column; `None` if singular.
fn invert(a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let cols: Option<Vec<Vec<f64>>> = (0..n)
        .map(|j| {
            solve(
                a.clone(),
                (0..n).map(|i| f64::from(u8::from(i == j))).collect(),
            )
        })
        .collect();
    let cols = cols?;
    Some(
        (0..n)
            .map(|i| (0..n).map(|j| cols[j][i]).collect())
            .collect(),
    )
}

/// What `dtsim calibrate training` was asked.
#[derive(Debug, Clone)]
pub struct TrainingRequest {
    /// The scenario whose points were measured; `None`: each run's
    /// [`SCENARIO_COLUMN`] names its own.
    pub scenario: Option<PathBuf>,
    /// The measurements (CSV).
    pub measured: PathBuf,
    /// The losses to fit.
    pub params: Vec<Param>,
}

/// The losses `dtsim calibrate training` fits unless told otherwise.
pub const DEFAULT_PARAMS: [Param; 3] = Param::ALL;

/// `dtsim calibrate training`: reads the runs, fits, and returns the
/// profile to write with the fit.
pub fn calibrate(
    req: &TrainingRequest,
    who: &Requester,
) -> Result<(Profile, TrainingFit), CalibrateError> {
    let runs = read_runs(req.scenario.as_deref(), &req.measured)?;
    let scenarios = scenarios_of(&runs);
    let mut f = fit(&runs, &req.params)?;
    let predicted = predict(&runs, Some(&f.values))?;
    // runs no loss can reach: losses only slow a run (a review: a
    // throughput 170 times the compute alone, or milliseconds written as
    // seconds, fitted without a word)
    let none = sim::losses::Losses::defaults(true);
    let ideal = predict(
        &runs,
        Some(&[
            none.compute_jitter,
            none.message_overhead_s,
            none.nic_efficiency,
        ]),
    )?;
    for (r, &t) in runs.iter().zip(&ideal) {
        if r.measured_s < BELOW_IDEAL * t {
            f.warnings.push(format!(
                "line {} ({}): measured {:.4} s an iteration, faster than the scenario allows with no loss at all ({:.4} s): no fitted loss can reach it; the scenario's compute or network is slower than the cluster measured, or the measurement's unit is off",
                r.line, r.label, r.measured_s, t
            ));
        }
    }
    if f.rms_log_residual > FAR_OFF_RMS {
        f.warnings.push(format!(
            "the fitted losses leave the runs off by a factor of {:.2} in the mean (rms of ln(predicted/measured) {:.3}): they do not describe these runs; check the measurements' units and the scenario",
            f.rms_log_residual.exp(),
            f.rms_log_residual
        ));
    }
    let mut notes = vec![format!(
        "least squares of ln(predicted/measured) over {} runs, {} iterations, {} simulations",
        runs.len(),
        f.iterations,
        f.simulations
    )];
    for b in &f.at_bound {
        notes.push(format!(
            "{b} ended on a bound of its range: no uncertainty for it"
        ));
    }
    for w in &f.warnings {
        notes.push(format!("warning: {w}"));
    }
    for u in &f.unidentified {
        notes.push(format!(
            "no measured run depends on {u}: it keeps the scenario's value, unknown"
        ));
    }
    if !f.collinear.is_empty() {
        notes.push(format!(
            "the runs move {} only together: no uncertainty for them (measure points that tell them apart)",
            f.collinear.join(" and ")
        ));
    }
    let determined: Vec<usize> = (0..f.fitted.len())
        .filter(|&j| !f.unidentified.contains(&f.fitted[j]))
        .collect();
    let profile = Profile {
        provenance: Provenance {
            tool: format!("{} calibrate training", who.tool),
            created: now_rfc3339(),
            sources: scenarios
                .iter()
                .cloned()
                .chain([req.measured.display().to_string()])
                .collect(),
            host: None,
            command: who.command.clone(),
            notes,
        },
        training: Some(TrainingEntry {
            scenario: scenarios.join(", "),
            compute_jitter: f.values[0],
            message_overhead_s: f.values[1],
            nic_efficiency: f.values[2],
            // a loss no run depends on was not fitted: the profile holds
            // it as it holds one left out of --params, the scenario's
            // value, and names it in its notes (a review: listed as
            // fitted with no variance, `dtsim run` took it as known)
            fitted: determined.iter().map(|&j| f.fitted[j].clone()).collect(),
            covariance: determined
                .iter()
                .map(|&j| determined.iter().map(|&k| f.covariance[j][k]).collect())
                .collect(),
            points: runs.len(),
            rms_log_residual: f.rms_log_residual,
        }),
        training_points: runs
            .iter()
            .zip(&predicted)
            .map(|(r, &p)| TrainingPointEntry {
                point: r.label.clone(),
                measured_s: r.measured_s,
                predicted_s: p,
            })
            .collect(),
        ..Profile::default()
    };
    Ok((profile, f))
}

/// What `dtsim validate --training` was asked.
#[derive(Debug, Clone)]
pub struct TrainingValidateRequest {
    /// The scenario whose points were measured; `None`: each run's
    /// [`SCENARIO_COLUMN`] names its own.
    pub scenario: Option<PathBuf>,
    /// The measurements (CSV).
    pub measured: PathBuf,
    /// The losses to fit.
    pub params: Vec<Param>,
    /// Fit on the runs whose key takes one of these values and predict
    /// the others (runs whose scenario does not sweep the key among
    /// them); `None`: leave each run out in turn (fit on the rest,
    /// predict it).
    pub fit_on: Option<(String, Vec<toml::Value>)>,
}

/// One held-out run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HeldOut {
    /// The measurements' line.
    pub line: usize,
    /// The point.
    pub point: String,
    /// Measured seconds an iteration.
    pub measured_s: f64,
    /// Predicted by the fit that did not see it.
    pub predicted_s: f64,
    /// (predicted − measured) / measured.
    pub error: f64,
    /// Predicted with the scenario's own losses (no calibration).
    pub uncalibrated_s: f64,
    /// Its error.
    pub uncalibrated_error: f64,
    /// The losses that predicted it, in [`Param::ALL`]'s order.
    pub losses: [f64; 3],
}

/// `dtsim validate --training`'s result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TrainingValidation {
    /// How the runs were split: "leave one out" or "fit on KEY = …".
    pub split: String,
    /// The losses fitted.
    pub fitted: Vec<String>,
    /// Each held-out run.
    pub held_out: Vec<HeldOut>,
    /// Median |error| over them, calibrated.
    pub median_abs_error: f64,
    /// Largest |error|, calibrated.
    pub max_abs_error: f64,
    /// Median |error| with the scenario's own losses.
    pub uncalibrated_median_abs_error: f64,
}

fn median_abs(v: impl Iterator<Item = f64>) -> f64 {
    crate::fit::median(v.map(f64::abs).collect())
}

/// `dtsim validate --training`: fits on part of the runs and predicts the
/// rest, each against what it would be without calibration.
pub fn validate(req: &TrainingValidateRequest) -> Result<TrainingValidation, CalibrateError> {
    let runs = read_runs(req.scenario.as_deref(), &req.measured)?;
    let uncal = predict(&runs, None)?;
    let mut held = Vec::new();
    let held_out = |i: usize, f: &TrainingFit, t: f64, held: &mut Vec<HeldOut>| {
        let r: &Run = &runs[i];
        held.push(HeldOut {
            line: r.line,
            point: r.label.clone(),
            measured_s: r.measured_s,
            predicted_s: t,
            error: t / r.measured_s - 1.0,
            uncalibrated_s: uncal[i],
            uncalibrated_error: uncal[i] / r.measured_s - 1.0,
            losses: f.values,
        });
    };
    let split = match &req.fit_on {
        None => {
            if runs.len() < req.params.len() + 2 {
                return Err(CalibrateError::Input(format!(
                    "{} measured runs: leaving one out to predict needs at least {} for {} parameter{} (or fit fewer with --params)",
                    runs.len(),
                    req.params.len() + 2,
                    req.params.len(),
                    if req.params.len() == 1 { "" } else { "s" }
                )));
            }
            for i in 0..runs.len() {
                let rest: Vec<Run> = runs
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, r)| r.clone())
                    .collect();
                let f = fit(&rest, &req.params)?;
                let t = predict(std::slice::from_ref(&runs[i]), Some(&f.values))?[0];
                held_out(i, &f, t, &mut held);
            }
            "leave one out".to_string()
        }
        Some((key, values)) => {
            // a key of any run (runs of several scenarios may sweep
            // different keys: a run whose scenario does not sweep it is
            // one of the others, predicted)
            // the runs' own scenario files, where a column names them
            // (a review: a whole file could not be held out)
            let by_file = key == SCENARIO_COLUMN && req.scenario.is_none();
            let dir = req.measured.parent().unwrap_or(Path::new(""));
            if !by_file && !runs.iter().any(|r| r.keys.contains_key(key)) {
                let mut known: Vec<&str> = runs
                    .iter()
                    .flat_map(|r| r.keys.keys().map(String::as_str))
                    .collect();
                known.sort_unstable();
                known.dedup();
                return Err(CalibrateError::Input(format!(
                    "--fit-on: {}",
                    sim::names::unknown("column", key, &known)
                )));
            }
            let on = |r: &Run| {
                if by_file {
                    // one file however it is spelled (`a.toml`, `./a.toml`)
                    values
                        .iter()
                        .any(|v| Path::new(&r.scenario) == dir.join(shown(v)))
                } else {
                    r.keys
                        .get(key)
                        .is_some_and(|k| values.iter().any(|v| same(k, v)))
                }
            };
            let train: Vec<Run> = runs.iter().filter(|r| on(r)).cloned().collect();
            if train.is_empty() {
                let mut taken: Vec<String> = if by_file {
                    runs.iter()
                        .map(|r| {
                            Path::new(&r.scenario)
                                .strip_prefix(dir)
                                .map_or(r.scenario.clone(), |p| p.display().to_string())
                        })
                        .collect()
                } else {
                    runs.iter()
                        .filter_map(|r| r.keys.get(key))
                        .map(shown)
                        .collect()
                };
                taken.dedup();
                taken.sort();
                taken.dedup();
                return Err(CalibrateError::Input(format!(
                    "--fit-on {key}: no run has {}; the runs' values are {}",
                    values.iter().map(shown).collect::<Vec<_>>().join(" or "),
                    taken.join(", ")
                )));
            }
            let test: Vec<usize> = (0..runs.len()).filter(|&i| !on(&runs[i])).collect();
            if test.is_empty() {
                return Err(CalibrateError::Input(format!(
                    "--fit-on {key}: every run has one of these values, so none is left to predict"
                )));
            }
            let f = fit(&train, &req.params)?;
            let tests: Vec<Run> = test.iter().map(|&i| runs[i].clone()).collect();
            let t = predict(&tests, Some(&f.values))?;
            for (&i, &t) in test.iter().zip(&t) {
                held_out(i, &f, t, &mut held);
            }
            format!(
                "fit on {key} = {}",
                values.iter().map(shown).collect::<Vec<_>>().join(", ")
            )
        }
    };
    Ok(TrainingValidation {
        split,
        fitted: req.params.iter().map(|q| q.name().to_string()).collect(),
        median_abs_error: median_abs(held.iter().map(|h| h.error)),
        max_abs_error: held.iter().map(|h| h.error.abs()).fold(0.0, f64::max),
        uncalibrated_median_abs_error: median_abs(held.iter().map(|h| h.uncalibrated_error)),
        held_out: held,
    })
}

/// A cell's value as the file would have it (text without quotes).
fn shown(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Whether two cells mean the same value: a whole number and a float of
/// the same value do, and so do a size and its bytes (`64MiB` and
/// `67108864`, as the runs' cells of a size key may be written either
/// way; a review found `--fit-on strategy.fusion=64MiB` matched no run
/// written in bytes).
fn same(a: &toml::Value, b: &toml::Value) -> bool {
    use toml::Value::{Float, Integer, String as Text};
    match (a, b) {
        (Integer(x), Float(y)) | (Float(y), Integer(x)) => *x as f64 == *y,
        (Text(t), Integer(x)) | (Integer(x), Text(t)) => {
            sim::units::parse_bytes(t).is_ok_and(|n| i64::try_from(n) == Ok(*x))
        }
        (Text(t), Text(u)) if t != u => {
            matches!((sim::units::parse_bytes(t), sim::units::parse_bytes(u)), (Ok(x), Ok(y)) if x == y)
        }
        _ => a == b,
    }
}

/// Parses `--fit-on KEY=V1,V2`.
pub fn parse_fit_on(s: &str) -> Result<(String, Vec<toml::Value>), CalibrateError> {
    let (k, vs) = s.split_once('=').ok_or_else(|| {
        CalibrateError::Input(format!(
            "--fit-on {s}: give KEY=VALUE[,VALUE...], e.g. cluster.nodes=1,2"
        ))
    })?;
    let values: Vec<toml::Value> = vs
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(cell_value)
        .collect();
    if values.is_empty() {
        return Err(CalibrateError::Input(format!(
            "--fit-on {s}: no value after `=`"
        )));
    }
    Ok((k.trim().to_string(), values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_as_toml_values_or_text() {
        assert_eq!(cell_value("4"), toml::Value::Integer(4));
        assert_eq!(cell_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(cell_value("true"), toml::Value::Boolean(true));
        assert_eq!(
            cell_value("allreduce"),
            toml::Value::String("allreduce".into())
        );
        assert_eq!(cell_value("4MiB"), toml::Value::String("4MiB".into()));
        assert_eq!(cell_value("\"a b\""), toml::Value::String("a b".into()));
    }

    #[test]
    fn small_systems_solve_and_invert() {
        let x = solve(vec![vec![2.0, 1.0], vec![1.0, 3.0]], vec![3.0, 5.0]).unwrap();
        assert!(
            (x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12,
            "{x:?}"
        );
        assert!(solve(vec![vec![1.0, 2.0], vec![2.0, 4.0]], vec![1.0, 2.0]).is_none());
        let inv = invert(vec![vec![4.0, 7.0], vec![2.0, 6.0]]).unwrap();
        let want = [[0.6, -0.7], [-0.2, 0.4]];
        for i in 0..2 {
            for j in 0..2 {
                assert!((inv[i][j] - want[i][j]).abs() < 1e-12);
            }
        }
        // JᵀJ: inverted and symmetric where determined; refused where
        // two columns agree to 1e-9 (a variance inflation of about
        // 5e17), or a column is zero
        let a = vec![vec![4.0, 2.0], vec![2.0, 3.0]];
        let inv = invert_well_determined(a).unwrap();
        let want = [[0.375, -0.25], [-0.25, 0.5]];
        for i in 0..2 {
            for j in 0..2 {
                assert!((inv[i][j] - want[i][j]).abs() < 1e-12, "{inv:?}");
            }
        }
        let j = [[1.0, 1.0 + 1e-9], [2.0, 2.0], [3.0, 3.0 - 1e-9]];
        let ata: Vec<Vec<f64>> = (0..2)
            .map(|p| {
                (0..2)
                    .map(|q| j.iter().map(|r| r[p] * r[q]).sum())
                    .collect()
            })
            .collect();
        assert!(invert_well_determined(ata).is_none());
        assert!(invert_well_determined(vec![vec![1.0, 0.0], vec![0.0, 0.0]]).is_none());
    }

    #[test]
    fn fit_on_parses() {
        let (k, v) = parse_fit_on("cluster.nodes=1, 2").unwrap();
        assert_eq!(k, "cluster.nodes");
        assert_eq!(v, [toml::Value::Integer(1), toml::Value::Integer(2)]);
        assert!(parse_fit_on("cluster.nodes").is_err());
        assert!(parse_fit_on("cluster.nodes=").is_err());
        assert!(same(&toml::Value::Integer(2), &toml::Value::Float(2.0)));
        let text = |t: &str| toml::Value::String(t.into());
        assert!(same(&text("64MiB"), &toml::Value::Integer(67_108_864)));
        assert!(same(&text("64MiB"), &text("67108864B")));
        assert!(!same(&text("64MiB"), &toml::Value::Integer(64)));
        assert!(!same(&text("eth-10g"), &text("eth-25g")));
    }
}
