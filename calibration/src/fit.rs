//! Fitting α-β cost models to measured times.
//!
//! A measured operation is modelled the way the simulator costs it: on a
//! flat cluster of N ranks joined by links of latency α and bandwidth B, the
//! simulator's analytical model of the collective (`sim::collective`) gives
//!
//! ```text
//! T(m) = S·α + F·m/B
//! ```
//!
//! with S the number of steps and F the bytes on the busiest link per byte of
//! buffer (ring AllReduce: S = 2(N−1), F = 2(N−1)/N; a ping-pong: S = F = 1).
//! S and F are read off the simulator itself, so the fit and the prediction
//! use one model. α and β = 1/B are fitted by least squares on the *relative*
//! error, Σ ((T(mᵢ) − tᵢ)/tᵢ)², so small and large messages weigh alike.
//!
//! NCCL and MPI switch protocol and algorithm with the message size (NCCL's
//! LL, LL128 and Simple protocols; MPI's eager and rendezvous), so one line
//! misfits small messages by 2–3×. The sizes are therefore cut into up to
//! three contiguous regimes, each with its own (α, β), by segmented least
//! squares (dynamic programming over breakpoints) with a penalty per regime
//! (BIC, `n·ln(SSE/n) + (3k−1)·ln n` for k regimes of α, β and a break, with
//! SSE floored at 0.1% RMS
//! relative error, below which differences are timer noise), so a regime is
//! added only where it pays.

use sim::cluster::ClusterSpec;
use sim::collective::{Algo, Collective, Op};
use sim::names::Named;

/// The simulator's structure coefficients of an operation on N ranks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Structure {
    /// Latency terms: T grows by `steps · α`.
    pub steps: f64,
    /// Bytes term per byte of buffer: T grows by `bytes · m / B`.
    pub bytes: f64,
}

/// How a measured operation maps onto the simulator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// A point-to-point message (ping-pong one-way time, osu_latency/osu_bw):
    /// T = α + m/B.
    PointToPoint,
    /// A collective of the simulator over `ranks` ranks, one per node.
    Collective {
        /// The simulator's collective.
        op: Op,
        /// Ranks.
        ranks: u32,
        /// The algorithm: the operation's default, but the binomial tree
        /// for broadcast (a fit needs a structure linear in the size).
        algo: Algo,
    },
}

impl Model {
    /// The model for a tool's op name, or `None` if the simulator has no
    /// collective of that name. `ranks` is needed for collectives.
    pub fn for_op(op: &str, ranks: u32) -> Option<Model> {
        match op {
            "latency" | "bw" | "pingpong" => Some(Model::PointToPoint),
            other => Op::from_name(other).map(|op| Model::Collective {
                op,
                ranks,
                algo: fitted_collective(op).algo,
            }),
        }
    }

    /// The cluster the model runs on: a flat cluster of single-GPU nodes.
    pub fn cluster(&self, alpha: f64, bandwidth: f64) -> ClusterSpec {
        let n = match self {
            Model::PointToPoint => 2,
            Model::Collective { ranks, .. } => *ranks,
        };
        ClusterSpec::flat(n.max(1), bandwidth, alpha)
    }

    /// Predicted time of `bytes` with latency `alpha` (s) and bandwidth
    /// `bandwidth` (B/s), from the simulator's analytical model.
    pub fn predict(&self, bytes: f64, alpha: f64, bandwidth: f64) -> f64 {
        match self {
            Model::PointToPoint => alpha + bytes / bandwidth,
            Model::Collective { op, algo, .. } => fitted_collective(*op)
                .with_algo(*algo)
                .expect("a model's algorithm is its operation's")
                .analytical(&self.cluster(alpha, bandwidth))
                .time(bytes),
        }
    }

    /// Bytes each step sends per byte of buffer, F/S (1 for a model of no
    /// steps): what a regime fitted by message size is chosen by.
    pub fn bytes_per_step(&self) -> f64 {
        let st = self.structure();
        if st.steps > 0.0 {
            st.bytes / st.steps
        } else {
            1.0
        }
    }

    /// S and F of `T(m) = S·α + F·m/B`, read off the simulator by evaluating
    /// its model at unit latency and bandwidth.
    pub fn structure(&self) -> Structure {
        let t0 = self.predict(0.0, 1.0, 1.0);
        let t1 = self.predict(1.0, 1.0, 1.0);
        Structure {
            steps: t0,
            bytes: t1 - t0,
        }
    }
}

/// The collective a fit models for `op`: its default algorithm, but the
/// binomial tree for broadcast. A fit reads `T(m) = S·α + F·m/B` off the
/// model ([`Model::structure`]), which must be linear in m; the pipelined
/// ring broadcast (the simulator's default) is not: its F falls from N − 1
/// at one piece towards 1 at many. MPI's broadcast is forced binomial in
/// measurements for the same reason (docs/calibration.md).
fn fitted_collective(op: Op) -> Collective {
    let c = Collective::new(op);
    match op {
        Op::Broadcast => c
            .with_algo(Algo::Binomial)
            .expect("broadcast has a binomial tree"),
        _ => c,
    }
}

/// One size regime's fit (also how profiles store it; the type is
/// defined with the profile format in [`sim::profile`]).
pub use sim::profile::Segment;

/// A fitted cost model of one operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// How the operation maps onto the simulator.
    pub model: Model,
    /// Bytes of one point-to-point message per byte of buffer: 1 for fits
    /// of the operation itself (regimes are looked up by buffer size); for
    /// a point-to-point fit driving a collective, the collective's message
    /// size per byte of buffer (1/N for a ring), so that each regime is
    /// chosen by the size of the messages the collective actually sends.
    pub regime_scale: f64,
    /// Size regimes, by increasing size.
    pub segments: Vec<Segment>,
    /// Relative residual (predicted − measured)/measured of each fitted
    /// point, by size.
    pub residuals: Vec<(u64, f64)>,
}

impl Fit {
    /// Predicted time of `bytes`, from the simulator with the α and B of
    /// the regime whose fitted size range contains it. Between two regimes
    /// (a size no regime covers, where the library switches protocol or
    /// algorithm at a point the fitted sizes do not pin down) both regimes'
    /// predictions are candidates and the prediction is their geometric
    /// mean, which is off by at most half the ratio between them whichever
    /// regime the library actually uses there. Below the first regime or
    /// above the last, that regime's line extends.
    pub fn predict(&self, bytes: u64) -> f64 {
        let m = bytes as f64;
        let at = |s: &Segment| self.model.predict(m, s.alpha_s, s.bandwidth_bps);
        // the size that selects the regime
        let bytes = (m * self.regime_scale).round() as u64;
        let first = &self.segments[0];
        if bytes <= first.min_bytes {
            return at(first);
        }
        for w in self.segments.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            if bytes <= a.max_bytes {
                return at(a);
            }
            if bytes < b.min_bytes {
                return (at(a) * at(b)).sqrt();
            }
        }
        at(self.segments.last().expect("a fit has a regime"))
    }

    /// Median of |residual| over the fitted points.
    pub fn median_abs_residual(&self) -> f64 {
        median(self.residuals.iter().map(|r| r.1.abs()).collect())
    }
}

/// Why a fit failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// Fewer than two usable points.
    #[error("need at least 2 measurements with positive time to fit, got {0}")]
    TooFewPoints(usize),
    /// The times do not grow with size in any way a bandwidth can explain.
    #[error("the times do not grow with the message size; no bandwidth can be fitted ({0})")]
    NoBandwidth(String),
}

/// Median of a list (NaN if empty), by statrs.
pub fn median(v: Vec<f64>) -> f64 {
    use statrs::statistics::{Data, Median};
    if v.is_empty() {
        return f64::NAN;
    }
    Data::new(v).median()
}

/// Least squares of one regime on relative error. Returns (α, β, SSE).
fn fit_line(st: Structure, pts: &[(f64, f64)]) -> (f64, f64, f64) {
    // minimise Σ (a·x1 + b·x2 − 1)², x1 = S/t, x2 = F·m/t
    let (mut s11, mut s12, mut s22, mut s1, mut s2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(m, t) in pts {
        let x1 = st.steps / t;
        let x2 = st.bytes * m / t;
        s11 += x1 * x1;
        s12 += x1 * x2;
        s22 += x2 * x2;
        s1 += x1;
        s2 += x2;
    }
    let det = s11 * s22 - s12 * s12;
    let (mut a, mut b) = if det.abs() > 1e-300 * s11.max(1.0) * s22.max(1.0) && det > 0.0 {
        ((s1 * s22 - s2 * s12) / det, (s2 * s11 - s1 * s12) / det)
    } else {
        (f64::NAN, f64::NAN)
    };
    // constrained fits when the free one leaves the physical region
    if !(a >= 0.0 && b > 0.0) {
        // α = 0: b = s2/s22 ; β → 0: a = s1/s11; take the better physical one
        let cand_b = if s22 > 0.0 { s2 / s22 } else { 0.0 };
        let cand_a = if s11 > 0.0 { s1 / s11 } else { 0.0 };
        let sse = |a: f64, b: f64| {
            pts.iter()
                .map(|&(m, t)| ((st.steps * a + st.bytes * m * b - t) / t).powi(2))
                .sum::<f64>()
        };
        // β ≈ 0 reads as latency-only (`sim::profile::LATENCY_ONLY_BPS`)
        let tiny = 1e-30;
        if cand_b > 0.0 && sse(0.0, cand_b) <= sse(cand_a, tiny) {
            a = 0.0;
            b = cand_b;
        } else {
            a = cand_a.max(0.0);
            b = tiny;
        }
    }
    let sse = pts
        .iter()
        .map(|&(m, t)| ((st.steps * a + st.bytes * m * b - t) / t).powi(2))
        .sum();
    (a, b, sse)
}

fn r2(st: Structure, pts: &[(f64, f64)], a: f64, b: f64) -> f64 {
    use statrs::statistics::Statistics;
    if pts.len() < 3 {
        return f64::NAN;
    }
    let mean = pts.iter().map(|p| p.1).mean();
    let ss_tot: f64 = pts.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let ss_res: f64 = pts
        .iter()
        .map(|&(m, t)| (st.steps * a + st.bytes * m * b - t).powi(2))
        .sum();
    if ss_tot == 0.0 {
        f64::NAN
    } else {
        1.0 - ss_res / ss_tot
    }
}

/// Fits `model` to (size bytes, seconds) points with up to `max_segments`
/// size regimes of at least `min_points` points each.
pub fn fit(
    model: Model,
    points: &[(u64, f64)],
    max_segments: usize,
    min_points: usize,
) -> Result<Fit, FitError> {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.1 > 0.0 && p.1.is_finite())
        .map(|&(m, t)| (m as f64, t))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = pts.len();
    if n < 2 {
        return Err(FitError::TooFewPoints(n));
    }
    let st = model.structure();
    let min_points = min_points.max(2);
    // cost[i][j]: SSE of one regime over pts[i..j]
    let seg_cost = |i: usize, j: usize| fit_line(st, &pts[i..j]).2;
    let kmax = max_segments.max(1).min(n / min_points).max(1);
    // dp[k][j]: best SSE covering pts[..j] with k regimes; back-pointers
    let inf = f64::INFINITY;
    let mut dp = vec![vec![inf; n + 1]; kmax + 1];
    let mut back = vec![vec![0usize; n + 1]; kmax + 1];
    dp[0][0] = 0.0;
    for k in 1..=kmax {
        for j in (k * min_points)..=n {
            for i in ((k - 1) * min_points)..=(j - min_points) {
                if dp[k - 1][i] == inf {
                    continue;
                }
                let c = dp[k - 1][i] + seg_cost(i, j);
                if c < dp[k][j] {
                    dp[k][j] = c;
                    back[k][j] = i;
                }
            }
        }
    }
    // choose k by a BIC-style penalty on relative SSE; relative errors
    // below 0.1% RMS are treated as timer noise, so a regime is never added
    // to chase noise
    let nf = n as f64;
    let score = |k: usize| {
        let sse = dp[k][n].max(nf * 1e-6);
        // k regimes have 3k − 1 parameters: α and β each, and k − 1 breaks
        nf * (sse / nf).ln() + (3 * k - 1) as f64 * nf.ln()
    };
    let best_k = (1..=kmax)
        .filter(|&k| dp[k][n] < inf)
        .min_by(|&a, &b| score(a).total_cmp(&score(b)))
        .unwrap_or(1);
    let mut bounds = Vec::new();
    let mut j = n;
    for k in (1..=best_k).rev() {
        let i = back[k][j];
        bounds.push((i, j));
        j = i;
    }
    bounds.reverse();
    let mut segments = Vec::new();
    let mut residuals = Vec::new();
    for (i, j) in bounds {
        let seg = &pts[i..j];
        // a regime whose time does not grow with size (pure latency) gets
        // β ≈ 0, i.e. a bandwidth so high it never matters
        let (a, b, _) = fit_line(st, seg);
        for &(m, t) in seg {
            residuals.push((m as u64, (st.steps * a + st.bytes * m * b - t) / t));
        }
        segments.push(Segment {
            min_bytes: seg[0].0 as u64,
            max_bytes: seg[seg.len() - 1].0 as u64,
            alpha_s: a,
            bandwidth_bps: 1.0 / b,
            points: seg.len(),
            r2: r2(st, seg, a, b),
        });
    }
    if segments.iter().all(|s| s.bandwidth().is_none()) {
        return Err(FitError::NoBandwidth(format!(
            "sizes {}..{} bytes",
            pts[0].0,
            pts[n - 1].0
        )));
    }
    Ok(Fit {
        model,
        regime_scale: 1.0,
        segments,
        residuals,
    })
}

/// Measured (size bytes, seconds) points.
pub type Points = Vec<(u64, f64)>;

/// The regime settings every fit of dtsim uses, in `calibrate` and in
/// `validate` alike, so that what is validated is what profiles contain:
/// up to 8 regimes of at least 2 points. NCCL changes algorithm, protocol
/// and channel count several times over a size sweep, so regimes may be
/// short; the BIC penalty keeps them from chasing noise.
pub const MAX_REGIMES: usize = 8;
/// See [`MAX_REGIMES`].
pub const MIN_POINTS: usize = 2;

/// [`fit`] with dtsim's regime settings, after [`screen`]ing anomalies out.
/// Returns the fit and the screened-out points.
pub fn fit_measurements(
    model: Model,
    points: &[(u64, f64)],
) -> Result<(Fit, Vec<(u64, f64)>), FitError> {
    let (kept, dropped) = screen(points);
    Ok((fit(model, &kept, MAX_REGIMES, MIN_POINTS)?, dropped))
}

/// Why [`screen`] kept each of `dropped` out of a fit of `points`: its
/// throughput against the best at a smaller size, in words.
pub fn screen_reasons(points: &[(u64, f64)], dropped: &[(u64, f64)]) -> Vec<String> {
    dropped
        .iter()
        .map(|&(m, t)| {
            let best = points
                .iter()
                .filter(|p| p.0 < m && p.1 > 0.0)
                .map(|p| p.0 as f64 / p.1)
                .fold(0.0f64, f64::max);
            let thr = if t > 0.0 { m as f64 / t } else { 0.0 };
            format!(
                "its throughput, {}, is under 60% of the best at a smaller size, {} (a measurement anomaly: swapping, a competing job, a throttled link)",
                sim::units::HumanRate(thr),
                sim::units::HumanRate(best)
            )
        })
        .collect()
}

/// Separates measurement anomalies from a size sweep: a point of at least
/// 1 MiB whose throughput (size/time) is below 60% of the best throughput
/// at any smaller size. Bandwidth does not fall by half as messages grow;
/// when a log shows it (swapping, a competing job, a throttled link), the
/// point measures the anomaly, not the network, and fitting through it
/// would drag the largest regime off. Screened points are still predicted
/// and reported by validation; they are only kept out of the fit.
pub fn screen(points: &[(u64, f64)]) -> (Points, Points) {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.0);
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    let mut best = 0.0f64;
    for (m, t) in sorted {
        let thr = if t > 0.0 { m as f64 / t } else { 0.0 };
        if m >= 1 << 20 && thr < 0.6 * best {
            dropped.push((m, t));
        } else {
            kept.push((m, t));
        }
        best = best.max(thr);
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Broadcast is fitted as the binomial tree, whose time is linear in
    /// the size (⌈log2 8⌉ = 3 steps of the whole buffer), so the structure
    /// read at 0 and 1 byte predicts 4 MiB too; the pipelined ring, whose
    /// F falls with the size, would miss it.
    #[test]
    fn broadcast_is_fitted_as_a_linear_model() {
        let m = Model::for_op("broadcast", 8).unwrap();
        let s = m.structure();
        assert!(
            (s.steps - 3.0).abs() < 1e-9 && (s.bytes - 3.0).abs() < 1e-9,
            "{s:?}"
        );
        let (alpha, b, bytes) = (2e-6, 1e10, 4.0 * 1048576.0);
        let linear = s.steps * alpha + s.bytes * bytes / b;
        assert!((m.predict(bytes, alpha, b) - linear).abs() < 1e-12 * linear);
    }

    #[test]
    fn structure_of_a_ring_is_the_closed_form() {
        let m = Model::for_op("allreduce", 8).unwrap();
        let s = m.structure();
        assert!((s.steps - 14.0).abs() < 1e-9);
        assert!((s.bytes - 14.0 / 8.0).abs() < 1e-12);
        assert_eq!(
            Model::PointToPoint.structure(),
            Structure {
                steps: 1.0,
                bytes: 1.0
            }
        );
    }

    #[test]
    fn recovers_alpha_and_beta_exactly() {
        let m = Model::for_op("allreduce", 16).unwrap();
        let pts: Vec<(u64, f64)> = (10..28)
            .map(|p| {
                let b = 1u64 << p;
                (b, m.predict(b as f64, 5e-6, 20e9))
            })
            .collect();
        let f = fit(m, &pts, 3, 4).unwrap();
        assert_eq!(f.segments.len(), 1, "{f:?}");
        assert!((f.segments[0].alpha_s - 5e-6).abs() / 5e-6 < 1e-6);
        assert!((f.segments[0].bandwidth_bps - 20e9).abs() / 20e9 < 1e-6);
        assert!(f.median_abs_residual() < 1e-9);
    }

    #[test]
    fn finds_protocol_regimes() {
        // two regimes: small messages α=2us,B=1GB/s; large α=50us,B=20GB/s
        let m = Model::PointToPoint;
        let pts: Vec<(u64, f64)> = (4..28)
            .map(|p| {
                let b = 1u64 << p;
                let t = if b < (1 << 16) {
                    2e-6 + b as f64 / 1e9
                } else {
                    50e-6 + b as f64 / 20e9
                };
                (b, t)
            })
            .collect();
        let f = fit(m, &pts, 3, 3).unwrap();
        assert!(f.segments.len() >= 2, "{f:?}");
        assert!(f.median_abs_residual() < 1e-6);
        assert!((f.predict(1 << 26) - (50e-6 + (1u64 << 26) as f64 / 20e9)).abs() < 1e-9);
    }

    #[test]
    fn too_few_points() {
        assert!(matches!(
            fit(Model::PointToPoint, &[(8, 1e-6)], 3, 3),
            Err(FitError::TooFewPoints(1))
        ));
    }
}

/// Least squares on relative error for `t ≈ Σ cⱼ·xⱼ` (features `x` per
/// observation, e.g. `[1, m, k]` for a kernel's `a + b·m + c·k`). Returns
/// the coefficients and the median |relative residual|, or `None` if the
/// features do not determine the coefficients.
pub fn fit_linear_relative(rows: &[(Vec<f64>, f64)]) -> Option<(Vec<f64>, f64)> {
    let p = rows.first()?.0.len();
    if p == 0
        || rows.len() < p
        || rows
            .iter()
            .any(|r| r.0.len() != p || r.1.is_nan() || r.1 <= 0.0)
    {
        return None;
    }
    // normal equations of Σ (x·c/t − 1)²
    let mut a = vec![vec![0.0f64; p + 1]; p];
    for (x, t) in rows {
        for i in 0..p {
            for j in 0..p {
                a[i][j] += x[i] * x[j] / (t * t);
            }
            a[i][p] += x[i] / t;
        }
    }
    // Gaussian elimination with partial pivoting
    for col in 0..p {
        let piv = (col..p).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                for (x, &y) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * y;
                }
            }
        }
    }
    let coef: Vec<f64> = (0..p).map(|i| a[i][p] / a[i][i]).collect();
    if coef.iter().any(|c| !c.is_finite()) {
        return None;
    }
    let res = rows
        .iter()
        .map(|(x, t)| ((x.iter().zip(&coef).map(|(a, b)| a * b).sum::<f64>() - t) / t).abs())
        .collect();
    Some((coef, median(res)))
}

#[cfg(test)]
mod linear_tests {
    use super::*;

    #[test]
    fn recovers_a_kernel_model() {
        let rows: Vec<(Vec<f64>, f64)> = [(1e4, 10.0), (1e5, 100.0), (1e6, 1000.0), (1e6, 5000.0)]
            .iter()
            .map(|&(m, k)| (vec![1.0, m, k], 2e-6 + 3e-9 * m + 4e-8 * k))
            .collect();
        let (c, r) = fit_linear_relative(&rows).unwrap();
        assert!(
            (c[0] - 2e-6).abs() < 1e-12
                && (c[1] - 3e-9).abs() < 1e-15
                && (c[2] - 4e-8).abs() < 1e-14
        );
        assert!(r < 1e-9);
        assert!(fit_linear_relative(&rows[..2]).is_none());
    }
}
