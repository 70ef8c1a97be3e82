//! What a cluster loses besides bytes: the defaults a scenario gets for
//! each loss unless it says `ideal = true` (the pure α-β bound, every loss
//! off). Each loss has its own key, which wins over both; the sources of
//! each default are in docs/models.md ("What a cluster loses besides
//! bytes") and docs/research/losses.md.
//!
//! * **Stragglers** (`model.compute_jitter`): each GPU's compute time in
//!   each iteration is its nominal time × a log-normal factor of mean 1
//!   and this coefficient of variation ([`crate::train::jitter`]).
//! * **Per-message overhead** (`strategy.message_overhead`): every message
//!   a channel sends (a fused buffer, a bucket, a PS partition's push or
//!   pull; a message with nothing to send costs nothing) occupies its
//!   channel this long before its transfer starts: the
//!   collective's launch and the framework's bookkeeping.
//! * **NIC efficiency** (`cluster.nic_efficiency`): the fraction of the
//!   network's per-NIC bandwidth a collective achieves.
//!
//! A scenario may take all three from a profile that `dtsim calibrate
//! training` fitted to measured runs (`training_profile`); [`Param`] names
//! them for the fit, and [`FittedLosses`] keeps the fit's uncertainty for
//! `dtsim run --uncertainty`.

use crate::train::TrainConfig;

/// Coefficient of variation of a GPU's per-iteration compute time on a
/// dedicated cluster, 0.5%: the default of `model.compute_jitter` (none
/// with `ideal = true`; see [`Losses::defaults`]). ByteDance's straggler study's healthy jobs vary
/// 0.4–0.7% across data-parallel ranks per step (derived from the traces
/// of its artifact, docs/models.md §4.1); PyTorch's DDP benchmark on one
/// DGX-1 V100 bounds a single GPU's at 0.29% (p95/p50 ≤ 1.005,
/// docs/research/losses.md §1).
pub const TYPICAL_COMPUTE_JITTER: f64 = 0.005;

/// Seconds each message costs before its transfer: NCCL's base latency of
/// a ring collective in the Simple protocol, 8.4 µs, unchanged from NCCL
/// 2.7.8 to 2.30.7 (`src/graph/tuning.cc`, `baseLat`;
/// docs/research/losses.md §2). NCCL adds it to every call's modelled
/// time on top of the per-hop latencies, which dtsim's network already
/// charges.
pub const TYPICAL_MESSAGE_OVERHEAD_S: f64 = 8.4e-6;

/// The fraction of a preset's per-NIC bandwidth a large collective
/// reaches: 1. The RDMA presets' and `eth-1g`'s bandwidths are already
/// measured rates (what NCCL reaches on InfiniBand and RoCE is 96–98% of
/// line rate, which those measurements are: docs/research/losses.md §3);
/// `eth-10g` and `eth-25g` are TCP goodput by specification, and no
/// measurement of what a collective reaches at 10 or 25 GbE was found (at
/// 32–100 Gb/s over sockets NCCL measured 32–94%, which does not carry
/// over). A calibration profile's bandwidth is what was measured.
pub const TYPICAL_NIC_EFFICIENCY: f64 = 1.0;

/// The losses of one run, as resolved from a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Losses {
    /// Whether the scenario asked for the pure bound (`ideal = true`):
    /// every loss defaults to none.
    pub ideal: bool,
    /// `model.compute_jitter`.
    pub compute_jitter: f64,
    /// `strategy.message_overhead`, seconds.
    pub message_overhead_s: f64,
    /// `cluster.nic_efficiency`.
    pub nic_efficiency: f64,
}

impl Losses {
    /// The defaults: a typical dedicated cluster, or none with `ideal`.
    /// Stragglers are on (since 2026-11-26): a data-parallel plan follows
    /// one GPU at each iteration's slowest GPU's pace
    /// (`sim::train::engine::Mode::of`), exactly what following every GPU
    /// gives, so they no longer cost a sweep what they did (a 10,000-point
    /// sweep of up to 1,000 GPUs took 195 s against 0.64 s when every GPU
    /// was followed; docs/benchmarks.md).
    pub fn defaults(ideal: bool) -> Losses {
        if ideal {
            Losses {
                ideal,
                compute_jitter: 0.0,
                message_overhead_s: 0.0,
                nic_efficiency: 1.0,
            }
        } else {
            Losses {
                ideal,
                compute_jitter: TYPICAL_COMPUTE_JITTER,
                message_overhead_s: TYPICAL_MESSAGE_OVERHEAD_S,
                nic_efficiency: TYPICAL_NIC_EFFICIENCY,
            }
        }
    }
}

/// One of the three losses, as `dtsim calibrate training` fits them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Param {
    /// `model.compute_jitter`.
    ComputeJitter,
    /// `strategy.message_overhead`, seconds.
    MessageOverhead,
    /// `cluster.nic_efficiency`.
    NicEfficiency,
}

impl Param {
    /// The three, in their fixed order.
    pub const ALL: [Param; 3] = [
        Param::ComputeJitter,
        Param::MessageOverhead,
        Param::NicEfficiency,
    ];

    /// The last part of its scenario key: `compute_jitter`,
    /// `message_overhead`, `nic_efficiency`.
    pub fn name(self) -> &'static str {
        match self {
            Param::ComputeJitter => "compute_jitter",
            Param::MessageOverhead => "message_overhead",
            Param::NicEfficiency => "nic_efficiency",
        }
    }

    /// Its scenario key.
    pub fn key(self) -> &'static str {
        match self {
            Param::ComputeJitter => "model.compute_jitter",
            Param::MessageOverhead => "strategy.message_overhead",
            Param::NicEfficiency => "cluster.nic_efficiency",
        }
    }

    /// The parameter a name (or a whole key) gives.
    pub fn parse(s: &str) -> Result<Param, String> {
        Param::ALL
            .into_iter()
            .find(|p| p.name() == s || p.key() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Param::ALL.iter().map(|p| p.name()).collect();
                crate::names::unknown("loss", s, &known)
            })
    }

    /// The range a value may take: a coefficient of variation in [0, 1],
    /// an overhead in [0, [`crate::limits::MAX_LATENCY_S`]], an efficiency
    /// in [[`MIN_NIC_EFFICIENCY`], 1] (the scenario key takes any
    /// positive fraction; a fit stops at 1%, below which no cluster runs).
    pub fn range(self) -> (f64, f64) {
        match self {
            Param::ComputeJitter => (0.0, 1.0),
            Param::MessageOverhead => (0.0, crate::limits::MAX_LATENCY_S),
            Param::NicEfficiency => (MIN_NIC_EFFICIENCY, 1.0),
        }
    }

    /// Whether a configuration may hold `v`, as its scenario key would
    /// (wider than [`Param::range`] for the efficiency: any positive
    /// fraction).
    pub fn admits(self, v: f64) -> bool {
        let (_, hi) = self.range();
        let low_ok = match self {
            Param::NicEfficiency => v > 0.0,
            _ => v >= 0.0,
        };
        v.is_finite() && low_ok && v <= hi
    }

    /// [`Param::admits`]'s interval, as messages write it.
    pub fn admitted(self) -> String {
        let (_, hi) = self.range();
        match self {
            Param::NicEfficiency => format!("(0, {hi}]"),
            _ => format!("[0, {hi}]"),
        }
    }

    /// Its value in a configuration.
    pub fn get(self, cfg: &TrainConfig) -> f64 {
        match self {
            Param::ComputeJitter => cfg.model.compute_jitter,
            Param::MessageOverhead => cfg.strategy.message_overhead_s,
            Param::NicEfficiency => cfg.cluster.nic_efficiency,
        }
    }

    /// Sets its value in a configuration, as the scenario key would have:
    /// an efficiency scales the network's per-NIC bandwidth, which the
    /// cluster holds with the old efficiency applied.
    ///
    /// # Panics
    /// If `v` is outside [`Param::range`]'s (the callers clamp), or an
    /// efficiency of 0.
    pub fn set(self, cfg: &mut TrainConfig, v: f64) {
        assert!(self.admits(v), "{} = {v}", self.name());
        match self {
            Param::ComputeJitter => cfg.model.compute_jitter = v,
            Param::MessageOverhead => cfg.strategy.message_overhead_s = v,
            Param::NicEfficiency => {
                let c = &mut cfg.cluster;
                c.inter.bandwidth = c.inter.bandwidth / c.nic_efficiency * v;
                c.nic_efficiency = v;
            }
        }
    }
}

/// The smallest NIC efficiency a fit considers.
pub const MIN_NIC_EFFICIENCY: f64 = 0.01;

/// The losses a scenario took from a training profile, with what the fit
/// knows of their uncertainty: `dtsim run --uncertainty` draws each run's
/// losses from it ([`FittedLosses::draw`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FittedLosses {
    /// The profile, as the scenario names it.
    pub profile: String,
    /// The losses whose value the scenario took from the profile (those
    /// it does not set itself).
    pub taken: Vec<Param>,
    /// The parameters taken from the profile that its fit estimated (a
    /// loss the scenario sets itself, or the fit held, is not here).
    pub params: Vec<Param>,
    /// Their covariance, in `params`' order.
    pub covariance: Vec<Vec<f64>>,
}

impl FittedLosses {
    /// Whether the fit knows an uncertainty of some loss taken from it:
    /// `--uncertainty` then draws the losses.
    pub fn uncertain(&self) -> bool {
        self.covariance.iter().flatten().any(|&c| c != 0.0)
    }

    /// `cfg` with its fitted losses drawn at random for run `k`: a draw
    /// from the normal law of the fit's estimate (mean: `cfg`'s values,
    /// covariance: the fit's), each clamped to its range. The draw is a
    /// function of (`cfg.seed`, `k`) alone.
    pub fn draw(&self, cfg: &TrainConfig, k: u64) -> TrainConfig {
        use rand::SeedableRng;
        use rand_distr::{Distribution, StandardNormal};
        let mut out = cfg.clone();
        let n = self.params.len();
        if n == 0 || self.covariance.len() != n {
            return out;
        }
        let l = cholesky(&self.covariance);
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(crate::seed::mix(
            crate::seed::mix(cfg.seed ^ 0x3c6e_f372_fe94_f82b) ^ k,
        ));
        let z: Vec<f64> = (0..n).map(|_| StandardNormal.sample(&mut rng)).collect();
        for (i, &p) in self.params.iter().enumerate() {
            let dv: f64 = (0..=i).map(|j| l[i][j] * z[j]).sum();
            // scenarios refuse a covariance whose factor is not finite
            let dv = if dv.is_finite() { dv } else { 0.0 };
            let (lo, hi) = p.range();
            p.set(&mut out, (p.get(cfg) + dv).clamp(lo, hi));
        }
        out
    }
}

/// The lower-triangular L with L·Lᵀ = `a` for a symmetric positive
/// semi-definite `a`; a pivot that is not positive (a parameter the fit
/// could not estimate, or one dependent on the others) gives a zero
/// column.
pub fn cholesky(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = a[i][i] - s;
                l[i][j] = if d > 0.0 && d.is_finite() {
                    d.sqrt()
                } else {
                    0.0
                };
            } else if l[j][j] > 0.0 {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_of_a_known_matrix() {
        // [[4, 2], [2, 3]] = L·Lᵀ with L = [[2, 0], [1, √2]]
        let l = cholesky(&[vec![4.0, 2.0], vec![2.0, 3.0]]);
        assert_eq!(l[0], [2.0, 0.0]);
        assert_eq!(l[1][0], 1.0);
        assert!((l[1][1] - 2f64.sqrt()).abs() < 1e-15);
        // a zero row (a parameter held at a bound) gives a zero column
        let l = cholesky(&[vec![0.0, 0.0], vec![0.0, 9.0]]);
        assert_eq!(l, [vec![0.0, 0.0], vec![0.0, 3.0]]);
    }

    /// Draws of fitted losses have the fit's mean and covariance (4,000
    /// draws: the sample mean's standard error is σ/63, the sample
    /// covariance's about σᵢσⱼ·√2/63; 5 standard errors), are a function
    /// of the seed and the run alone, and stay in each loss's range.
    #[test]
    fn draws_follow_the_fit() {
        let text = "iterations = 1\n[cluster]\nnodes = 2\nnetwork = \"eth-10g\"\n[model]\nbatch_per_gpu = 1\n[[model.layers]]\nparams = 1000\nforward = \"1ms\"\nbackward = \"1ms\"\n[strategy]\nmessage_overhead = \"100us\"\n";
        let mut cfg = crate::scenario::load_str(text, "t.toml", "t").unwrap()[0]
            .config
            .clone();
        Param::NicEfficiency.set(&mut cfg, 0.6);
        Param::ComputeJitter.set(&mut cfg, 0.02);
        let (s_o, s_e, rho) = (20e-6, 0.05, -0.5);
        let f = FittedLosses {
            profile: "p.toml".into(),
            taken: Param::ALL.to_vec(),
            params: vec![Param::MessageOverhead, Param::NicEfficiency],
            covariance: vec![
                vec![s_o * s_o, rho * s_o * s_e],
                vec![rho * s_o * s_e, s_e * s_e],
            ],
        };
        let bw = cfg.cluster.inter.bandwidth;
        let n = 4000;
        let draws: Vec<(f64, f64)> = (0..n)
            .map(|k| {
                let d = f.draw(&cfg, k);
                // the bandwidth follows the efficiency; the jitter is held
                let e = d.cluster.nic_efficiency;
                assert!((d.cluster.inter.bandwidth - bw / 0.6 * e).abs() <= 1e-9 * bw);
                assert_eq!(d.model.compute_jitter, 0.02);
                assert!(e > 0.0 && e <= 1.0 && d.strategy.message_overhead_s >= 0.0);
                (d.strategy.message_overhead_s, e)
            })
            .collect();
        assert_eq!(f.draw(&cfg, 17), f.draw(&cfg, 17));
        assert_ne!(f.draw(&cfg, 17), f.draw(&cfg, 18));
        let nf = n as f64;
        let mo = draws.iter().map(|d| d.0).sum::<f64>() / nf;
        let me = draws.iter().map(|d| d.1).sum::<f64>() / nf;
        let se = nf.sqrt();
        assert!((mo - 100e-6).abs() < 5.0 * s_o / se, "{mo}");
        assert!((me - 0.6).abs() < 5.0 * s_e / se, "{me}");
        let var = |g: &dyn Fn(&(f64, f64)) -> f64, m: f64| {
            draws.iter().map(|d| (g(d) - m).powi(2)).sum::<f64>() / (nf - 1.0)
        };
        let vo = var(&|d| d.0, mo);
        let ve = var(&|d| d.1, me);
        let c = draws.iter().map(|d| (d.0 - mo) * (d.1 - me)).sum::<f64>() / (nf - 1.0);
        let tol = 5.0 * 2f64.sqrt() / se;
        assert!((vo / (s_o * s_o) - 1.0).abs() < tol, "{vo}");
        assert!((ve / (s_e * s_e) - 1.0).abs() < tol, "{ve}");
        assert!((c / (s_o * s_e) - rho).abs() < tol, "{c}");
    }

    #[test]
    fn params_parse_by_name_or_key() {
        assert_eq!(Param::parse("nic_efficiency"), Ok(Param::NicEfficiency));
        assert_eq!(
            Param::parse("strategy.message_overhead"),
            Ok(Param::MessageOverhead)
        );
        let e = Param::parse("nic_eficiency").unwrap_err();
        assert!(e.contains("nic_efficiency"), "{e}");
    }
}
