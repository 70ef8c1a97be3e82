//! The timing harness: warm-up, repeats on fresh inputs, median and spread,
//! and every result checked against a reference.
//!
//! dtsim fits its compression cost model to these timings, so a timing is
//! only worth having if (a) it is stable run to run, which is why we report
//! the median and the relative inter-quartile range ([`Timing::spread`])
//! rather than a mean, (b) it times the kernel on a realistic input, which is
//! why every run gets a fresh gradient that is never all zeros (a warm cache
//! of last run's answer, or a degenerate input, would flatter the kernel),
//! and (c) the kernel is right: [`time_kernels`] checks every timed run
//! against the simple references in [`crate::cpu`] and panics on a
//! disagreement, so a fast wrong kernel fails instead of being fitted.
//!
//! ```
//! use kernels::timing::{measure, random_gradient};
//!
//! let t = measure(1, 5, || random_gradient(1000, 7), |g| g.iter().map(|v| v.abs()).sum::<f32>());
//! assert_eq!(t.repeats, 5);
//! assert!(t.min_s <= t.median_s && t.median_s <= t.max_s);
//! ```

use std::hint::black_box;
use std::time::Instant;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use crate::cpu;

/// Summary of repeated timings of one kernel on one input size, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Median time.
    pub median_s: f64,
    /// Fastest run.
    pub min_s: f64,
    /// Slowest run.
    pub max_s: f64,
    /// 25th percentile.
    pub p25_s: f64,
    /// 75th percentile.
    pub p75_s: f64,
    /// Number of timed runs (warm-up runs not included).
    pub repeats: u32,
}

impl Timing {
    /// Summarises raw samples (seconds, any order). Percentiles interpolate
    /// linearly between order statistics (Hyndman and Fan's type 7, numpy's
    /// default), so the median of an even count is the mean of the middle
    /// two.
    ///
    /// # Panics
    /// If `samples` is empty or holds a NaN.
    pub fn from_samples(samples: &[f64]) -> Timing {
        assert!(!samples.is_empty(), "no timing samples to summarise");
        assert!(samples.iter().all(|s| !s.is_nan()), "NaN timing sample");
        let mut s = samples.to_vec();
        s.sort_unstable_by(f64::total_cmp);
        let quantile = |p: f64| {
            let pos = p * (s.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
        };
        Timing {
            median_s: quantile(0.5),
            min_s: s[0],
            max_s: s[s.len() - 1],
            p25_s: quantile(0.25),
            p75_s: quantile(0.75),
            repeats: u32::try_from(s.len()).unwrap_or(u32::MAX),
        }
    }

    /// Relative inter-quartile range, `(p75 − p25) / median`: 0.05 means the
    /// middle half of the runs lies within 5% of the median. Zero when every
    /// run took the same time; infinite if the median is zero but the runs
    /// differ.
    pub fn spread(&self) -> f64 {
        let iqr = self.p75_s - self.p25_s;
        if iqr == 0.0 { 0.0 } else { iqr / self.median_s }
    }
}

/// Times `run` on `repeats` fresh inputs after `warmup` untimed runs.
///
/// Before every run, warm-up included, `setup()` builds a fresh input (not
/// timed); then `run(&mut input)` alone is timed with [`Instant`]. The
/// input and the result pass through [`black_box`], so the compiler can
/// neither precompute the run nor discard it. Inputs are dropped outside
/// the timed region.
///
/// # Panics
/// If `repeats` is zero.
pub fn measure<I, S, F, R>(warmup: u32, repeats: u32, setup: S, run: F) -> Timing
where
    S: FnMut() -> I,
    F: FnMut(&mut I) -> R,
{
    measure_checked(warmup, repeats, setup, run, |_, _| {})
}

/// [`measure`], then `check(&input, result)` after every run (warm-up
/// included), outside the timed region. `check` panics, or records, when a
/// result is wrong; [`time_kernels`] uses it to compare every run against a
/// reference.
///
/// # Panics
/// If `repeats` is zero, or if `check` panics.
pub fn measure_checked<I, S, F, R, C>(
    warmup: u32,
    repeats: u32,
    mut setup: S,
    mut run: F,
    mut check: C,
) -> Timing
where
    S: FnMut() -> I,
    F: FnMut(&mut I) -> R,
    C: FnMut(&I, R),
{
    assert!(repeats > 0, "at least one timed repeat is needed");
    let mut samples = Vec::with_capacity(repeats as usize);
    for i in 0..warmup + repeats {
        let mut input = setup();
        let start = Instant::now();
        let result = black_box(run(black_box(&mut input)));
        let elapsed = start.elapsed().as_secs_f64();
        if i >= warmup {
            samples.push(elapsed);
        }
        check(&input, result);
    }
    Timing::from_samples(&samples)
}

/// A synthetic gradient of `m` values drawn from the standard normal
/// distribution, deterministic per `seed`.
///
/// Normal draws come from the Box–Muller transform (Box and Muller, Ann.
/// Math. Statist. 29(2), 1958: `√(−2 ln u₁)·cos(2π u₂)` and the same with
/// `sin`) over uniforms from the Xoshiro256++ generator seeded with
/// [`SeedableRng::seed_from_u64`]; rand 0.10 has no normal distribution
/// of its own (that is in `rand_distr`). A named generator, rather than
/// `StdRng`, keeps the sequence fixed across rand releases that keep
/// Xoshiro256++.
///
/// The result is never all zeros for `m ≥ 1` (it is redrawn in that
/// vanishingly unlikely case), so a kernel is never timed on a degenerate
/// input. Magnitudes may tie (f32 has 24 bits of mantissa), which the
/// kernels must and do handle. `m = 0` gives an empty vector.
pub fn random_gradient(m: usize, seed: u64) -> Vec<f32> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = Vec::with_capacity(m);
    loop {
        g.clear();
        while g.len() < m {
            // u1 in (0, 1] so that ln(u1) is finite.
            let u1 = 1.0 - rng.random::<f64>();
            let u2 = rng.random::<f64>();
            let r = (-2.0 * u1.ln()).sqrt();
            let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
            g.push((r * c) as f32);
            if g.len() < m {
                g.push((r * s) as f32);
            }
        }
        if m == 0 || g.iter().any(|&v| v != 0.0) {
            return g;
        }
    }
}

/// Untimed warm-up runs before the repeats in [`time_kernels`]: the first
/// run pays for code and branch-predictor warm-up, which a training loop
/// pays once.
pub const WARMUP: u32 = 2;

/// One kernel's timing at one size and density, from [`time_kernels`].
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTiming {
    /// The kernel: "topk" ([`cpu::topk_with_scratch`]), "threshold_sort"
    /// ([`cpu::threshold_by_sort`]), "threshold_select"
    /// ([`cpu::threshold_by_select`]), "mask" ([`cpu::mask`]) or "merge"
    /// ([`cpu::merge`]; its `m` is the 2k candidates).
    pub kernel: &'static str,
    /// Number of input elements.
    pub m: usize,
    /// For "topk", k; for "threshold_sort" and "mask", the nominal number
    /// of kept values `m − ⌊m·η⌋` with η = 1 − density (more are kept
    /// when magnitudes tie with the threshold).
    pub k_or_kept: usize,
    /// Requested density, the kept fraction (1 − η).
    pub density: f64,
    /// The timing, over fresh inputs.
    pub timing: Timing,
}

/// A vector with `n` elements of capacity whose pages have been written,
/// so the first timed write into it does not pay for page faults.
fn prefaulted<T: Copy>(n: usize, fill: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, fill);
    black_box(&mut v);
    v.clear();
    v
}

/// Input of one timed Top-k run.
struct TopkInput {
    values: Vec<f32>,
    scratch: Vec<u64>,
    out: Vec<u32>,
}

/// Input of one timed threshold run.
struct ThresholdInput {
    values: Vec<f32>,
    scratch: Vec<f32>,
}

/// Input of one timed mask run.
struct MaskInput {
    values: Vec<f32>,
    threshold: f32,
    idx: Vec<u32>,
    vals: Vec<f32>,
}

/// Times the five CPU kernels at every size and density, checking every
/// run against its reference.
///
/// For each `m` in `sizes` and each density `d` in `densities`, with
/// η = 1 − d and `kept = m − ⌊m·η⌋` ([`cpu::threshold_rank`]), in this
/// order:
/// * "topk": [`cpu::topk_with_scratch`] with k = kept, checked with
///   [`cpu::check_topk`];
/// * "threshold_sort": [`cpu::threshold_by_sort`] at sparsity η, checked
///   with [`cpu::check_threshold`];
/// * "threshold_select": [`cpu::threshold_by_select`] at sparsity η,
///   checked against the sort with [`cpu::check_threshold_select`];
/// * "mask": [`cpu::mask`] at the threshold of that input (computed
///   untimed), checked with [`cpu::check_mask`];
/// * "merge": [`cpu::merge`] of two Top-k sets of `kept` elements drawn
///   from two gradients of m (timed with m = 2·kept candidates), checked
///   with [`cpu::check_merge`].
///
/// Each kernel gets [`WARMUP`] untimed runs and `repeats` timed runs, each
/// on a fresh [`random_gradient`] (seeds 0, 1, 2, … over the whole call, so
/// a call is reproducible) with pre-faulted output and scratch buffers.
/// The references are full sorts, so a call takes a few times longer than
/// the timings it reports.
///
/// # Panics
/// If a density is not in `(0, 1]`, if `repeats` is zero, or if a kernel
/// disagrees with its reference (the message names the kernel, the size and
/// the first differing position): a fast wrong kernel must not be fitted.
pub fn time_kernels(sizes: &[usize], densities: &[f64], repeats: u32) -> Vec<KernelTiming> {
    for &d in densities {
        assert!(d > 0.0 && d <= 1.0, "density must be in (0, 1], got {d}");
    }
    let mut seed = 0u64;
    let mut next_gradient = |m: usize| {
        seed += 1;
        random_gradient(m, seed - 1)
    };
    let mut timings = Vec::with_capacity(sizes.len() * densities.len() * 5);
    for &m in sizes {
        for &density in densities {
            let sparsity = 1.0 - density;
            let kept = m - cpu::threshold_rank(m, sparsity);
            let row = |kernel, timing| KernelTiming {
                kernel,
                m,
                k_or_kept: kept,
                density,
                timing,
            };

            let topk = measure_checked(
                WARMUP,
                repeats,
                || TopkInput {
                    values: next_gradient(m),
                    scratch: prefaulted(m, 0),
                    out: prefaulted(kept, 0),
                },
                |inp| cpu::topk_with_scratch(&inp.values, kept, &mut inp.scratch, &mut inp.out),
                |inp, ()| {
                    if let Err(e) = cpu::check_topk(&inp.values, kept, &inp.out) {
                        panic!("{e}");
                    }
                },
            );
            timings.push(row("topk", topk));

            let threshold = measure_checked(
                WARMUP,
                repeats,
                || ThresholdInput {
                    values: next_gradient(m),
                    scratch: prefaulted(m, 0.0),
                },
                |inp| cpu::threshold_by_sort(&inp.values, sparsity, &mut inp.scratch),
                |inp, tau| {
                    if let Err(e) = cpu::check_threshold(&inp.values, sparsity, tau) {
                        panic!("{e}");
                    }
                },
            );
            timings.push(row("threshold_sort", threshold));

            let select = measure_checked(
                WARMUP,
                repeats,
                || ThresholdInput {
                    values: next_gradient(m),
                    scratch: prefaulted(m, 0.0),
                },
                |inp| cpu::threshold_by_select(&inp.values, sparsity, &mut inp.scratch),
                |inp, tau| {
                    if let Err(e) = cpu::check_threshold_select(&inp.values, sparsity, tau) {
                        panic!("{e}");
                    }
                },
            );
            timings.push(row("threshold_select", select));

            let mut scratch = Vec::new();
            let mask = measure_checked(
                WARMUP,
                repeats,
                || {
                    let values = next_gradient(m);
                    let threshold = cpu::threshold_by_sort(&values, sparsity, &mut scratch);
                    MaskInput {
                        values,
                        threshold,
                        idx: prefaulted(m, 0),
                        vals: prefaulted(m, 0.0),
                    }
                },
                |inp| cpu::mask(&inp.values, inp.threshold, &mut inp.idx, &mut inp.vals),
                |inp, count| {
                    let checked = if count == inp.idx.len() {
                        cpu::check_mask(&inp.values, inp.threshold, &inp.idx, &inp.vals)
                    } else {
                        Err(cpu::KernelMismatch {
                            kernel: "mask",
                            detail: format!("returned {count} but wrote {}", inp.idx.len()),
                        })
                    };
                    if let Err(e) = checked {
                        panic!("{e}");
                    }
                },
            );
            timings.push(row("mask", mask));

            // two Top-k sets of `kept` out of m, as gTop-k's receivers get
            // them; the merge's input is their 2·kept candidates
            let mut topk_scratch = Vec::new();
            let mut set = |m: usize| {
                let g = next_gradient(m);
                let mut idx = Vec::new();
                cpu::topk_with_scratch(&g, kept, &mut topk_scratch, &mut idx);
                let val: Vec<f32> = idx.iter().map(|&i| g[i as usize]).collect();
                (idx, val)
            };
            let merge = measure_checked(
                WARMUP,
                repeats,
                || MergeInput {
                    a: set(m),
                    b: set(m),
                    scratch: prefaulted(2 * kept, (0, 0.0)),
                    idx: prefaulted(kept, 0),
                    vals: prefaulted(kept, 0.0),
                },
                |inp| {
                    cpu::merge(
                        &inp.a.0,
                        &inp.a.1,
                        &inp.b.0,
                        &inp.b.1,
                        kept,
                        &mut inp.scratch,
                        &mut inp.idx,
                        &mut inp.vals,
                    )
                },
                |inp, ()| {
                    let (a, b) = ((&inp.a.0[..], &inp.a.1[..]), (&inp.b.0[..], &inp.b.1[..]));
                    if let Err(e) = cpu::check_merge(a, b, kept, &inp.idx, &inp.vals) {
                        panic!("{e}");
                    }
                },
            );
            timings.push(KernelTiming {
                kernel: "merge",
                m: 2 * kept,
                k_or_kept: kept,
                density,
                timing: merge,
            });
        }
    }
    timings
}

/// Input of one timed merge run: two sparse sets (indices ascending, their
/// values) and the buffers.
struct MergeInput {
    a: (Vec<u32>, Vec<f32>),
    b: (Vec<u32>, Vec<f32>),
    scratch: Vec<(u32, f32)>,
    idx: Vec<u32>,
    vals: Vec<f32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_linearly() {
        let t = Timing::from_samples(&[5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!(
            (t.min_s, t.p25_s, t.median_s, t.p75_s, t.max_s),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        assert_eq!(t.repeats, 5);
        assert!((t.spread() - 2.0 / 3.0).abs() < 1e-12);
        // Even count: median is the mean of the middle two; p25 at 0.75.
        let t = Timing::from_samples(&[4.0, 1.0, 2.0, 3.0]);
        assert_eq!(t.median_s, 2.5);
        assert_eq!(t.p25_s, 1.75);
        assert_eq!(t.p75_s, 3.25);
        let t = Timing::from_samples(&[0.5]);
        assert_eq!((t.median_s, t.spread()), (0.5, 0.0));
    }

    #[test]
    #[should_panic(expected = "no timing samples")]
    fn empty_samples_are_rejected() {
        Timing::from_samples(&[]);
    }

    #[test]
    fn every_run_gets_a_fresh_input_and_is_checked() {
        let mut made = 0u32;
        let mut seen = Vec::new();
        let mut checked = 0u32;
        let t = measure_checked(
            3,
            4,
            || {
                made += 1;
                made
            },
            |input: &mut u32| {
                seen.push(*input);
                *input * 10
            },
            |input, result| {
                assert_eq!(result, *input * 10);
                checked += 1;
            },
        );
        assert_eq!(t.repeats, 4);
        assert_eq!(seen, [1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(checked, 7);
    }

    #[test]
    fn random_gradient_is_deterministic_normal_and_nonzero() {
        let a = random_gradient(20_001, 42);
        assert_eq!(a.len(), 20_001);
        assert_eq!(a, random_gradient(20_001, 42));
        assert_ne!(a, random_gradient(20_001, 43));
        let n = a.len() as f64;
        let mean = a.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = a
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        // Standard errors: 1/√n ≈ 0.007 for the mean, √(2/n) ≈ 0.01 for the
        // variance; 5 standard errors of slack.
        assert!(mean.abs() < 0.035, "mean {mean}");
        assert!((var - 1.0).abs() < 0.05, "variance {var}");
        assert!(a.iter().all(|v| v.is_finite()));
        for m in 1..10 {
            assert!(random_gradient(m, m as u64).iter().any(|&v| v != 0.0));
        }
        assert!(random_gradient(0, 1).is_empty());
    }

    #[test]
    #[should_panic(expected = "density must be in (0, 1]")]
    fn zero_density_is_rejected() {
        time_kernels(&[10], &[0.0], 1);
    }
}
