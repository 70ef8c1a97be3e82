//! Validation: fit on part of the measurements, predict the rest with the
//! simulator, and report the error of every point.
//!
//! For a log of one operation, the sizes are sorted and split alternately:
//! even positions (the 1st, 3rd, … size) are fitted ([`crate::fit`]), odd
//! positions are held out and predicted by the simulator's analytical model
//! of the operation with the fitted regime's α and B. The error of a point
//! is (predicted − measured) / measured.
//!
//! Errors are summarised twice: over all held-out sizes, and over held-out
//! sizes of at least 64 KiB, where bandwidth dominates and an α-β model is
//! expected to hold; below that, per-message software overheads that vary
//! with the size (protocol switches, kernel launch, eager-buffer copies)
//! make small-message time noisy relative to its value.

use crate::fit::{Algos, Fit, FitError, Library, Model, Segment, Shape, fit_measurements, median};
use crate::logs::Log;
use serde::Serialize;
use sim::names::Named;

/// Held-out sizes at or above this count in the "large" summary.
pub const LARGE_BYTES: u64 = 64 * 1024;

/// One held-out point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Size, bytes.
    pub size_bytes: u64,
    /// Measured time, seconds.
    pub measured_s: f64,
    /// Predicted time, seconds.
    pub predicted_s: f64,
    /// (predicted − measured) / measured.
    pub error: f64,
    /// What the fit ran the point with: the algorithm and the protocol
    /// ("ring LL128"), or the size regime ([`Fit::via`]).
    pub via: String,
}

/// The validation of one operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    /// Where the measurements came from.
    pub source: String,
    /// Tool ("nccl-tests", "osu", "mpi").
    pub tool: String,
    /// Operation.
    pub op: String,
    /// Ranks.
    pub ranks: u32,
    /// What was fitted ("every other size" or "pingpong").
    pub fitted_on: String,
    /// The fit's shape ("protocols" or "regimes", [`Shape`]).
    pub shape: String,
    /// A protocol fit's sharpness q ([`crate::fit::blend`]); absent when
    /// it switches at the lines' crossing (q = ∞) and for regimes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharpness: Option<f64>,
    /// Fitted lines: protocols by rising bandwidth, or regimes by size.
    pub regimes: Vec<Segment>,
    /// Median |relative residual| over the fitted points.
    pub fit_median_abs_residual: f64,
    /// Held-out points.
    pub points: Vec<Point>,
    /// Median |error| over all held-out points.
    pub median_abs_error: f64,
    /// Largest |error| over all held-out points.
    pub max_abs_error: f64,
    /// Median |error| over held-out sizes ≥ 64 KiB (NaN if none).
    pub median_abs_error_large: f64,
    /// Largest |error| over held-out sizes ≥ 64 KiB (NaN if none).
    pub max_abs_error_large: f64,
    /// Median |error| over held-out sizes < 64 KiB (NaN if none).
    pub median_abs_error_small: f64,
    /// Median |log2(predicted / measured)| over all held-out points: a
    /// symmetric measure (1 = off by a factor of 2 either way), where the
    /// relative error of an under-prediction can never exceed 100%.
    pub median_abs_log2_ratio: f64,
    /// How the rank count was inferred, where the log did not state it
    /// ([`Log::ranks_inferred`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks_inferred: Option<String>,
    /// Lines of the log the parser skipped as not the benchmark's
    /// (launcher, Slurm, Open MPI help, NCCL debug lines).
    pub skipped_lines: Vec<SkippedLine>,
    /// Fitted sizes kept out of the fit as measurement anomalies
    /// ([`crate::fit::screen`]), each with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub screened: Vec<ScreenedPoint>,
}

/// A point kept out of a fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScreenedPoint {
    /// Size, bytes.
    pub size_bytes: u64,
    /// Measured time, seconds.
    pub measured_s: f64,
    /// Why.
    pub reason: String,
}

/// A skipped log line, for results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedLine {
    /// 1-based line number.
    pub line: usize,
    /// The line.
    pub text: String,
}

/// Why a validation could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidateError {
    /// The operation has no model in the simulator.
    #[error("`{0}`: the simulator has no model of this operation")]
    UnknownOp(String),
    /// The rank count is needed and unknown.
    #[error("`{0}`: the log does not say how many ranks ran; give --ranks")]
    UnknownRanks(String),
    /// The rank count is not one a collective can run on in the simulator.
    #[error("`{0}`: {1} ranks; a collective needs 2 to {max}", max = sim::limits::MAX_GPUS)]
    BadRanks(String, u32),
    /// Too few sizes to fit on half and predict the other half.
    #[error(
        "`{op}`: {n} distinct size{s}; at least 4 are needed to fit on half and predict the rest",
        s = if *.n == 1 { "" } else { "s" }
    )]
    TooFewSizes {
        /// Operation.
        op: String,
        /// Distinct sizes.
        n: usize,
    },
    /// The fit failed.
    #[error("`{0}`: {1}")]
    Fit(String, FitError),
    /// A ping-pong fit asked to drive a pipelined algorithm, whose
    /// messages change size with the buffer.
    #[error(
        "`{0}`: a ping-pong fit cannot drive `{1}`, whose pieces change size with the buffer, so no regime of the ping-pong's is the one its messages run in; fit the operation's own measurements instead"
    )]
    Pipelined(String, String),
}

fn summarise(
    source: &str,
    tool: &str,
    op: &str,
    ranks: u32,
    fitted_on: &str,
    f: &Fit,
    held: &[(u64, f64)],
) -> Validation {
    let points: Vec<Point> = held
        .iter()
        .map(|&(m, t)| {
            let p = f.predict(m);
            Point {
                size_bytes: m,
                measured_s: t,
                predicted_s: p,
                error: (p - t) / t,
                via: f.via(m),
            }
        })
        .collect();
    let abs = |pred: &dyn Fn(&Point) -> bool| -> Vec<f64> {
        points
            .iter()
            .filter(|p| pred(p))
            .map(|p| p.error.abs())
            .collect()
    };
    let all = abs(&|_| true);
    let large = abs(&|p| p.size_bytes >= LARGE_BYTES);
    let small = abs(&|p| p.size_bytes < LARGE_BYTES);
    let max = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().copied().fold(0.0, f64::max)
        }
    };
    Validation {
        source: source.to_string(),
        tool: tool.to_string(),
        op: op.to_string(),
        ranks,
        fitted_on: fitted_on.to_string(),
        shape: f.shape.name().to_string(),
        sharpness: f.sharpness.is_finite().then_some(f.sharpness),
        regimes: f.segments.clone(),
        fit_median_abs_residual: f.median_abs_residual(),
        median_abs_error: median(all.clone()),
        max_abs_error: max(&all),
        median_abs_error_large: median(large.clone()),
        max_abs_error_large: max(&large),
        median_abs_error_small: median(small),
        median_abs_log2_ratio: median(
            points
                .iter()
                .map(|p| (p.predicted_s / p.measured_s).log2().abs())
                .collect(),
        ),
        points,
        ranks_inferred: None,
        skipped_lines: Vec::new(),
        screened: Vec::new(),
    }
}

/// Distinct (size, time) points of a log, by size; a repeated size keeps
/// its median time.
pub fn points_of(log: &Log) -> Vec<(u64, f64)> {
    median_per_size(log.rows.iter().map(|r| (r.size_bytes, r.time_s)).collect())
}

/// Distinct (size, time) points by size, a repeated size at the median of
/// its positive times; a size with none keeps a time of 0, which
/// [`crate::fit::unmeasured`] then names.
fn median_per_size(mut rows: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
    rows.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    rows.chunk_by(|a, b| a.0 == b.0)
        .map(|g| {
            let times: Vec<f64> = g.iter().map(|r| r.1).filter(|&t| t > 0.0).collect();
            (g[0].0, if times.is_empty() { 0.0 } else { median(times) })
        })
        .collect()
}

/// The ranks of a log: its own count when it states one, else `fallback`
/// (the user's `--ranks`); point-to-point tests always have 2.
pub fn ranks_of(log: &Log, fallback: Option<u32>) -> Result<u32, ValidateError> {
    match (log.op.as_str(), log.ranks.or(fallback)) {
        ("latency" | "bw", _) => Ok(2),
        (_, Some(r)) if (2..=sim::limits::MAX_GPUS).contains(&u64::from(r)) => Ok(r),
        (op, Some(r)) => Err(ValidateError::BadRanks(op.to_string(), r)),
        (op, None) => Err(ValidateError::UnknownRanks(op.to_string())),
    }
}

/// A log's points with sizes in the simulator's meaning (nccl-tests'):
/// OSU prints the per-rank contribution for osu_allgather and the per-peer
/// message for osu_alltoall, which are multiplied by the ranks to give the
/// whole gathered buffer and one rank's whole send buffer.
pub fn sim_points(log: &Log, ranks: u32) -> Vec<(u64, f64)> {
    let scale = match (log.tool, log.op.as_str()) {
        (crate::logs::Tool::Osu, "allgather" | "alltoall") => ranks as u64,
        _ => 1,
    };
    points_of(log)
        .into_iter()
        .map(|(m, t)| (m.saturating_mul(scale), t))
        .collect()
}

/// Fits every other size of `log` and predicts the others.
pub fn validate_log(
    log: &Log,
    source: &str,
    ranks: Option<u32>,
    shape: Option<Shape>,
    algos: &Algos,
) -> Result<Validation, ValidateError> {
    let ranks = ranks_of(log, ranks)?;
    let pts = sim_points(log, ranks);
    let library = Library::of_tool(log.tool.name());
    let v = every_other_size(
        &pts,
        (&log.op, ranks),
        source,
        log.tool.name(),
        shape,
        library,
        algos,
    )?;
    Ok(Validation {
        ranks_inferred: log.ranks_inferred.clone(),
        skipped_lines: log
            .skipped
            .iter()
            .map(|s| SkippedLine {
                line: s.line,
                text: s.text.clone(),
            })
            .collect(),
        ..v
    })
}

/// Fits every other size of `pts` (distinct sizes, sorted) of `op` on
/// `ranks` and predicts the others.
fn every_other_size(
    pts: &[(u64, f64)],
    (op, ranks): (&str, u32),
    source: &str,
    tool: &str,
    shape: Option<Shape>,
    library: Library,
    algos: &Algos,
) -> Result<Validation, ValidateError> {
    let model = algos
        .model(op, ranks)
        .ok_or_else(|| ValidateError::UnknownOp(op.into()))?;
    // points that measure no message (nccl-tests' size 0) are neither
    // fitted nor held out; the sizes alternate as the log lists them
    let none = |p: &(u64, f64)| crate::fit::unmeasured(p.0, p.1).is_some();
    let measured = pts.iter().filter(|p| !none(p)).count();
    if measured < 4 {
        return Err(ValidateError::TooFewSizes {
            op: op.into(),
            n: measured,
        });
    }
    let fit_pts: Vec<(u64, f64)> = pts.iter().copied().step_by(2).collect();
    let (held_none, held): (crate::fit::Points, crate::fit::Points) =
        pts.iter().skip(1).step_by(2).partition(|p| none(p));
    let (f, mut dropped) = fit_measurements(model, &fit_pts, shape, library, algos.eager_limit())
        .map_err(|e| ValidateError::Fit(op.into(), e))?;
    // the fit lists the unmeasured points it was given; the held-out ones too
    dropped.extend(held_none);
    dropped.sort_by_key(|p| p.0);
    let screened = crate::fit::screen_reasons(&model, &fit_pts, &dropped)
        .into_iter()
        .zip(&dropped)
        .map(|(reason, &(size_bytes, measured_s))| ScreenedPoint {
            size_bytes,
            measured_s,
            reason,
        })
        .collect();
    Ok(Validation {
        screened,
        ..summarise(source, tool, op, ranks, "every other size", &f, &held)
    })
}

/// Fits every other size of a profile's measured series (a repeated size
/// at its median time) and predicts the others, as [`validate_log`] does
/// for a log.
pub fn validate_series(
    series: &crate::calibrate::OpSeries,
    source: &str,
    shape: Option<Shape>,
    library: Library,
    algos: &Algos,
) -> Result<Validation, ValidateError> {
    let pts = median_per_size(series.points.clone());
    let tool = match library {
        Library::Nccl => "nccl",
        Library::Mpi => "mpi",
    };
    every_other_size(
        &pts,
        (&series.op, series.ranks),
        source,
        tool,
        shape,
        library,
        algos,
    )
}

/// Fits `fitted`'s measurements of an operation (on its rank count) and
/// predicts `target`'s (the same operation, on its own rank count and
/// sizes) with the simulator: the link's fitted α and B per protocol (or
/// regime), the operation's step structure at the target's ranks. The
/// fastest protocol at the target's ranks is taken; a regime is chosen by
/// the size of the messages each step sends (the buffer × F/S). Either
/// way a protocol switch the library makes at a message size lands at the
/// right buffer size at the other rank count. Every target point is held
/// out.
pub fn validate_across(
    fitted: &crate::calibrate::OpSeries,
    target: &crate::calibrate::OpSeries,
    source: &str,
    shape: Option<Shape>,
    library: Library,
    algos: &Algos,
) -> Result<Validation, ValidateError> {
    validate_between(fitted, target, source, shape, library, (algos, algos))
}

/// [`validate_across`] where the two series ran different algorithms
/// (measured with different libraries or settings): `algos.0` models
/// `fitted`, `algos.1` `target`.
pub fn validate_between(
    fitted: &crate::calibrate::OpSeries,
    target: &crate::calibrate::OpSeries,
    source: &str,
    shape: Option<Shape>,
    library: Library,
    algos: (&Algos, &Algos),
) -> Result<Validation, ValidateError> {
    let op = &fitted.op;
    let model = |algos: &Algos, ranks| {
        algos
            .model(op, ranks)
            .ok_or_else(|| ValidateError::UnknownOp(op.clone()))
    };
    let (from, to) = (model(algos.0, fitted.ranks)?, model(algos.1, target.ranks)?);
    let (f, _) = fit_measurements(from, &fitted.points, shape, library, algos.0.eager_limit())
        .map_err(|e| ValidateError::Fit(op.clone(), e))?;
    let fit = Fit {
        model: to,
        shape: f.shape,
        sharpness: f.sharpness,
        regime_segment: 0,
        regime_from: Some(from),
        eager_limit: f.eager_limit,
        segments: f.segments.clone(),
        residuals: f.residuals.clone(),
    };
    Ok(summarise(
        source,
        "profile",
        op,
        target.ranks,
        &format!("{} ranks", fitted.ranks),
        &fit,
        &target.points,
    ))
}

/// Fits point-to-point (ping-pong) measurements and predicts a collective
/// measured on `ranks` ranks with the simulator: the check `.ci/run` makes
/// with MPI.
pub fn validate_from_pingpong(
    pingpong: &[(u64, f64)],
    op: &str,
    ranks: u32,
    measured: &[(u64, f64)],
    source: &str,
    shape: Option<Shape>,
    algos: &Algos,
) -> Result<Validation, ValidateError> {
    let (p2p, _) = fit_measurements(
        Model::PointToPoint,
        pingpong,
        shape,
        Library::Mpi,
        algos.eager_limit(),
    )
    .map_err(|e| ValidateError::Fit("pingpong".into(), e))?;
    let model = algos
        .model(op, ranks)
        .ok_or_else(|| ValidateError::UnknownOp(op.to_string()))?;
    // a regime is chosen by the size of the collective's messages, a
    // fixed fraction of the buffer for a straight model, a segment for
    // Open MPI's segmented broadcast; a pipeline's pieces are neither
    // (a selection, whose algorithms are each straight, sends the
    // messages of the one it runs at each size)
    if let Model::Collective { algo, segment, .. } = model
        && segment == 0
        && !model.is_straight()
        && model.switches().is_empty()
    {
        return Err(ValidateError::Pipelined(
            op.to_string(),
            algo.name().to_string(),
        ));
    }
    // the same regimes, now driving the collective's model, each chosen by
    // the size of the messages the collective sends (m·F/S per step)
    let f = Fit {
        model,
        shape: p2p.shape,
        sharpness: p2p.sharpness,
        regime_segment: match model {
            Model::Collective {
                op, algo, segment, ..
            } if algo.takes_segments(op) => segment,
            Model::PointToPoint | Model::Collective { .. } => 0,
        },
        regime_from: Some(Model::PointToPoint),
        eager_limit: p2p.eager_limit,
        segments: p2p.segments.clone(),
        residuals: p2p.residuals.clone(),
    };
    Ok(summarise(
        source, "mpi", op, ranks, "pingpong", &f, measured,
    ))
}
