//! Parallax's search for the number of partitions of sparse variables
//! (`strategy.ps_partitions = "auto"`; Parallax §3.2, Eq. 1).
//!
//! Parallax models the iteration time as a function of the partitions P,
//!
//! ```text
//! iter_time = θ0 + θ1/P + θ2·P
//! ```
//!
//! (θ1: the servers' work that partitions parallelise; θ2: what each
//! partition adds), samples it, fits θ by least squares and takes the
//! optimum P* = √(θ1/θ2), which dtsim rounds to a multiple of the
//! servers (every server the same share). Its samples start at the number of machines (the
//! servers' machines: the GPU machines, or their own with `ps_machines`) and
//! double until the iteration time goes up, then halve from the start
//! until it goes up again, so that the optimum lies between the smallest
//! and the largest sample ("the cost model can predict the optimal P
//! without performing any extrapolation"). dtsim does the same with
//! simulated iterations: each sample is a whole run of the scenario with
//! P fixed, and the result is the run at P*.

use super::{Options, RunResult, Timeline, TrainConfig};
use crate::limits::MAX_PARTITIONS;
use crate::limits::SimError;
use crate::strategy::Partitions;
use serde::{Deserialize, Serialize};

/// One sampled partition count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Partitions of each sparse variable.
    pub partitions: u32,
    /// The simulated iteration time, seconds.
    pub iteration_time_s: f64,
}

/// What the search sampled, fitted and chose.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PartitionSearch {
    /// The samples, in the order taken.
    pub samples: Vec<Sample>,
    /// θ0 (s), θ1 (s·partitions), θ2 (s per partition) of Eq. 1, fitted
    /// to the samples; zeros when fewer than three distinct counts were
    /// sampled.
    pub theta: [f64; 3],
    /// The partitions of the result: √(θ1/θ2) rounded to a multiple of the
    /// servers ([`round_to_servers`]), within the sampled range, or the
    /// fastest sample where the fit has no minimum.
    pub chosen: u32,
}

/// Runs the search for `cfg` (whose strategy asks for it) and the
/// scenario at the chosen count.
pub(super) fn search(
    cfg: &TrainConfig,
    opts: Options,
) -> Result<(RunResult, Option<Timeline>), SimError> {
    let max = cfg
        .model
        .layers
        .iter()
        .filter_map(|l| l.embedding.as_ref())
        .map(|e| e.vocab.min(MAX_PARTITIONS as u64) as u32)
        .min()
        .unwrap_or(MAX_PARTITIONS)
        .max(1);
    let at = |p: u32, opts: Options| {
        let mut c = cfg.clone();
        c.strategy.ps_partitions = Partitions::Fixed(p);
        super::simulate_plain(&c, opts)
    };
    let quiet = Options {
        trace: false,
        ..opts
    };
    let time = |p: u32| at(p, quiet).map(|(r, _)| r.iteration_time_s);
    // the servers' machines: the GPU machines, or their own
    let start = cfg.cluster.server_machines().clamp(1, max);
    let mut samples = vec![Sample {
        partitions: start,
        iteration_time_s: time(start)?,
    }];
    // doubling, then halving, each until the time goes up
    for up in [true, false] {
        let (mut p, mut t) = (start, samples[0].iteration_time_s);
        loop {
            let q = if up {
                p.saturating_mul(2).min(max)
            } else {
                p / 2
            };
            if q == p || q == 0 {
                break;
            }
            let tq = time(q)?;
            samples.push(Sample {
                partitions: q,
                iteration_time_s: tq,
            });
            if tq >= t {
                break;
            }
            (p, t) = (q, tq);
        }
    }
    let theta = fit(&samples).unwrap_or([0.0; 3]);
    let (lo, hi) = samples.iter().fold((u32::MAX, 0), |(lo, hi), s| {
        (lo.min(s.partitions), hi.max(s.partitions))
    });
    let fastest = samples
        .iter()
        .min_by(|a, b| a.iteration_time_s.total_cmp(&b.iteration_time_s))
        .map_or(start, |s| s.partitions);
    let servers = cfg.strategy.server_count(&cfg.cluster);
    let chosen = if theta[1] > 0.0 && theta[2] > 0.0 {
        round_to_servers((theta[1] / theta[2]).sqrt(), servers, lo, hi)
    } else {
        fastest
    };
    let (mut result, timeline) = at(chosen, opts)?;
    result.partition_search = Some(PartitionSearch {
        samples,
        theta,
        chosen,
    });
    Ok((result, timeline))
}

/// The partitions for the fitted optimum `star` with `servers` servers,
/// within the sampled range `lo..=hi`: the multiple of the servers nearest
/// to it, so that every server holds as many partitions (Eq. 1's θ1/P
/// assumes the servers' work divides evenly; 11 partitions on 8 servers
/// give three servers two and run as slowly as if each held two), or
/// `star` rounded where no multiple lies in the range.
pub fn round_to_servers(star: f64, servers: u32, lo: u32, hi: u32) -> u32 {
    let s = servers.max(1) as f64;
    let first = (lo as f64 / s).ceil() * s;
    if first > hi as f64 {
        return (star.round() as u32).clamp(lo, hi);
    }
    let last = (hi as f64 / s).floor() * s;
    ((star / s).round() * s).clamp(first, last) as u32
}

/// Least-squares θ of t = θ0 + θ1/P + θ2·P over `samples`; `None` with
/// fewer than three distinct partition counts (the fit is not determined).
pub fn fit(samples: &[Sample]) -> Option<[f64; 3]> {
    let mut distinct: Vec<u32> = samples.iter().map(|s| s.partitions).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 3 {
        return None;
    }
    // normal equations AᵀA θ = Aᵀt with rows (1, 1/P, P)
    let mut m = [[0.0f64; 4]; 3];
    for s in samples {
        let p = s.partitions as f64;
        let row = [1.0, 1.0 / p, p];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += row[i] * row[j];
            }
            m[i][3] += row[i] * s.iteration_time_s;
        }
    }
    // Gaussian elimination with partial pivoting
    for c in 0..3 {
        let pivot = (c..3).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs()))?;
        m.swap(c, pivot);
        if m[c][c].abs() < 1e-300 {
            return None;
        }
        let pivot_row = m[c];
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot_row[c];
                for (x, p) in row.iter_mut().zip(pivot_row).skip(c) {
                    *x -= f * p;
                }
            }
        }
    }
    let theta = [m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]];
    theta.iter().all(|x| x.is_finite()).then_some(theta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(theta: [f64; 3], ps: &[u32]) -> Vec<Sample> {
        ps.iter()
            .map(|&p| Sample {
                partitions: p,
                iteration_time_s: theta[0] + theta[1] / p as f64 + theta[2] * p as f64,
            })
            .collect()
    }

    /// Exact samples of Eq. 1 give θ back.
    #[test]
    fn the_fit_recovers_the_curve() {
        let theta = [0.5, 2.0, 1e-4];
        let got = fit(&samples(theta, &[8, 16, 32, 64, 128, 256])).unwrap();
        for (g, w) in got.iter().zip(theta) {
            assert!((g - w).abs() <= 1e-9 * w.abs().max(1e-3), "{got:?}");
        }
        // √(θ1/θ2) = √20000 ≈ 141.4
        assert!(((got[1] / got[2]).sqrt() - 141.42).abs() < 0.01);
    }

    /// Two counts do not determine three parameters.
    /// The optimum goes to the nearest multiple of the servers within the
    /// sampled range, or plainly rounded where the range holds none.
    #[test]
    fn the_optimum_is_a_multiple_of_the_servers() {
        assert_eq!(round_to_servers(11.0, 8, 4, 16), 8);
        assert_eq!(round_to_servers(12.5, 8, 4, 16), 16);
        assert_eq!(round_to_servers(174.2, 8, 8, 256), 176);
        assert_eq!(round_to_servers(300.0, 8, 8, 256), 256);
        assert_eq!(round_to_servers(2.0, 8, 4, 16), 8);
        assert_eq!(round_to_servers(5.4, 8, 2, 7), 5);
        assert_eq!(round_to_servers(19.4, 1, 1, 64), 19);
    }

    #[test]
    fn too_few_counts_have_no_fit() {
        assert_eq!(fit(&samples([1.0, 1.0, 1.0], &[8, 16, 8])), None);
    }
}
