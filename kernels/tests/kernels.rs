//! Integration tests of the CPU kernels and the timing harness: agreement
//! with the references on many random inputs, the DCT-A1 message-size
//! accounting, and run-to-run timing stability.
//!
//! One test binary with topic modules (it links faster on two cores). Tests
//! that time things, or that would disturb a timing running beside them,
//! hold [`HEAVY`] so they never overlap in the parallel test runner.

use std::sync::{Mutex, MutexGuard};

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// Serialises the CPU-heavy tests so the timing test runs alone.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> MutexGuard<'static, ()> {
    HEAVY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Random inputs of several kinds, for agreement tests.
fn inputs(rng: &mut Xoshiro256PlusPlus, m: usize) -> Vec<Vec<f32>> {
    let normal = kernels::timing::random_gradient(m, rng.random());
    // Few distinct magnitudes, both signs: many ties.
    let ties: Vec<f32> = (0..m)
        .map(|_| rng.random_range(-3i32..=3) as f32 * 0.5)
        .collect();
    let negatives: Vec<f32> = normal.iter().map(|v| -v.abs()).collect();
    let all_equal = vec![-1.25f32; m];
    let zeros_mixed: Vec<f32> = normal
        .iter()
        .map(|&v| if v.abs() < 1.0 { 0.0 } else { v })
        .collect();
    vec![normal, ties, negatives, all_equal, zeros_mixed]
}

/// Sizes 1..=40 exhaustively, then a few larger, some odd.
fn sizes() -> Vec<usize> {
    (1..=40).chain([63, 64, 65, 257, 1000, 4099]).collect()
}

mod topk {
    use super::*;
    use kernels::cpu::{check_topk, check_topk_selected, topk, topk_reference, topk_with_scratch};

    #[test]
    fn agrees_with_reference_on_random_inputs() {
        let _g = heavy();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        for m in sizes() {
            for values in inputs(&mut rng, m) {
                let random_k = rng.random_range(0..=m);
                for k in [0, 1, 2, m / 64, m / 10, random_k, m - 1, m, m + 5] {
                    topk_with_scratch(&values, k, &mut scratch, &mut out);
                    assert_eq!(
                        out,
                        topk_reference(&values, k),
                        "m = {m}, k = {k}, {values:?}"
                    );
                    check_topk(&values, k, &out).unwrap();
                    // the CUDA backend's faster checker accepts the same
                    check_topk_selected(&values, k, &out).unwrap();
                }
            }
        }
    }

    #[test]
    fn output_is_sorted_distinct_and_of_length_min_k_m() {
        let values = kernels::timing::random_gradient(5000, 9);
        let mut out = Vec::new();
        for k in [0, 3, 77, 4999, 5000, 6000] {
            topk(&values, k, &mut out);
            assert_eq!(out.len(), k.min(values.len()));
            assert!(out.windows(2).all(|w| w[0] < w[1]));
            // Every kept magnitude ≥ every dropped one.
            let mut kept = vec![false; values.len()];
            out.iter().for_each(|&i| kept[i as usize] = true);
            let min_kept = out
                .iter()
                .map(|&i| values[i as usize].abs())
                .fold(f32::INFINITY, f32::min);
            let max_dropped = (0..values.len())
                .filter(|&i| !kept[i])
                .map(|i| values[i].abs())
                .fold(0.0, f32::max);
            assert!(k == 0 || k >= values.len() || min_kept >= max_dropped);
        }
    }

    #[test]
    fn a_wrong_topk_is_caught() {
        let values = kernels::timing::random_gradient(1000, 3);
        let mut out = Vec::new();
        topk(&values, 10, &mut out);
        // Swap one winner for the 11th-largest: a plausible off-by-one.
        let eleventh = topk_reference(&values, 11)
            .into_iter()
            .find(|i| !out.contains(i))
            .unwrap();
        let mut wrong: Vec<u32> = out[1..].iter().copied().chain([eleventh]).collect();
        wrong.sort_unstable();
        let err = check_topk(&values, 10, &wrong).unwrap_err();
        assert!(err.to_string().contains("kernel `topk` disagrees"), "{err}");
        // and the selection-based checker says the same, word for word
        assert_eq!(check_topk_selected(&values, 10, &wrong).unwrap_err(), err);
    }
}

mod threshold {
    use super::*;
    use kernels::cpu::{
        check_mask, check_threshold, mask, mask_reference, threshold_by_sort, threshold_rank,
        threshold_reference, topk,
    };

    #[test]
    fn threshold_and_mask_agree_with_references() {
        let _g = heavy();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let (mut scratch, mut idx, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for m in sizes() {
            for values in inputs(&mut rng, m) {
                for eta in [0.0, 0.5, 0.75, 0.9, 0.95, 0.99, rng.random::<f64>() * 0.999] {
                    let tau = threshold_by_sort(&values, eta, &mut scratch);
                    assert_eq!(tau.to_bits(), threshold_reference(&values, eta).to_bits());
                    check_threshold(&values, eta, tau).unwrap();
                    let kept = mask(&values, tau, &mut idx, &mut vals);
                    let want = mask_reference(&values, tau);
                    assert_eq!(kept, want.len());
                    assert!(idx.iter().copied().eq(want.iter().map(|p| p.0)));
                    assert!(vals.iter().copied().eq(want.iter().map(|p| p.1)));
                    check_mask(&values, tau, &idx, &vals).unwrap();
                    // Ties can only add kept values, never remove them.
                    assert!(kept >= m - threshold_rank(m, eta), "m = {m}, η = {eta}");
                }
            }
        }
    }

    /// n distinct magnitudes 1..=n in random order with random signs.
    fn distinct(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut v: Vec<f32> = (1..=n).map(|i| i as f32).collect();
        for i in (1..n).rev() {
            v.swap(i, rng.random_range(0..=i));
        }
        v.iter()
            .map(|&x| if rng.random::<bool>() { -x } else { x })
            .collect()
    }

    /// CASES.md DCT-A1: kept values = n − floor(n·η) (ties ignored), and
    /// values-only compression 1/(1−η): 75% → 4×, 90% → 10×, 95% → 20×,
    /// 99% → 100×.
    #[test]
    fn dct_a1_kept_values_and_compression() {
        let (mut scratch, mut idx, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for (percent, factor) in [(75, 4), (90, 10), (95, 20), (99, 100)] {
            let eta = percent as f64 / 100.0;
            for n in [10_000, 12_345, 100, 7, 1] {
                let values = distinct(n, n as u64);
                let tau = threshold_by_sort(&values, eta, &mut scratch);
                let kept = mask(&values, tau, &mut idx, &mut vals);
                // floor(n·η) in exact integer arithmetic.
                assert_eq!(kept, n - n * percent / 100, "n = {n}, η = {eta}");
                if n % 100 == 0 {
                    assert_eq!(n / kept, factor, "n = {n}, η = {eta}");
                }
                // With distinct magnitudes the mask keeps exactly the Top-k set.
                let mut top = Vec::new();
                topk(&values, kept, &mut top);
                assert_eq!(idx, top, "n = {n}, η = {eta}");
            }
        }
    }
}

mod timing {
    use super::*;
    use kernels::cpu::topk_with_scratch;
    use kernels::timing::{Timing, measure, random_gradient, time_kernels};

    /// Median of ≥ 15 timed Top-k runs at k = m/1000, fresh input each run.
    fn time_topk(m: usize, repeats: u32, seed: u64) -> Timing {
        let k = m / 1000;
        let mut next = seed;
        let mut scratch = Vec::with_capacity(m);
        measure(
            3,
            repeats,
            || {
                next += 1;
                random_gradient(m, next)
            },
            |g| {
                let mut out = Vec::with_capacity(k);
                topk_with_scratch(g, k, &mut scratch, &mut out);
                out.len()
            },
        )
    }

    /// Nanoseconds this thread has spent runnable but waiting for a CPU
    /// (Linux `/proc/thread-self/schedstat`, second field); `None` where
    /// that file does not exist.
    fn run_queue_wait_ns() -> Option<u64> {
        let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        stat.split_whitespace().nth(1)?.parse().ok()
    }

    /// One timed Top-k measurement and the fraction of its wall time the
    /// thread spent waiting for a CPU (0 where unknown).
    fn time_topk_disturbance(m: usize, seed: u64) -> (Timing, f64) {
        let (wait0, start) = (run_queue_wait_ns(), std::time::Instant::now());
        let t = time_topk(m, 15, seed);
        let wall = start.elapsed().as_nanos() as f64;
        let waited = match (wait0, run_queue_wait_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64,
            _ => 0.0,
        };
        (t, waited / wall)
    }

    /// Two medians of the same measurement, taken back to back, agree
    /// within 25%.
    ///
    /// Observed on the 2-core CI machine, release build, m = 2^20,
    /// k = m/1000, 15 repeats per median (about 2.4 ms per Top-k):
    /// * idle machine, 42 runs: |Δ| mean 2.6%, maximum 14.1% (once; the
    ///   next largest 7.5%); spreads (relative IQR) 4–12%;
    /// * one core busy with another process, 8 runs: |Δ| at most 10.8%;
    /// * both cores busy (oversubscribed): spreads of 60–180%, and medians
    ///   up to 2.6× apart, sometimes with small spreads, because a
    ///   measurement can share its core with the other process from start
    ///   to end and be uniformly slow.
    ///
    /// So 25% is about twice the worst idle or half-loaded |Δ| seen, and
    /// still fails a harness that times input generation or skips warm-up
    /// (either moves the median by 2× or more, in every attempt). Two
    /// kinds of noise are not the harness's fault, so an attempt is
    /// repeated (up to 5 attempts) rather than failed at once:
    /// * a disturbed attempt: one with a spread above 50% (which the
    ///   harness itself would flag) or with more than 35% of its wall time
    ///   spent waiting for a CPU (Linux schedstat). With other builds
    ///   running, undisturbed-looking attempts waited 0–30% and their
    ///   medians agreed within 13%; uniformly slowed ones waited 55–70%;
    /// * an undisturbed attempt whose medians still differ by more than
    ///   25%: seen once in CI, debug build (then m = 2^16, unoptimised),
    ///   spreads 28% and 25%, medians 27.5% apart with 0.2% CPU wait (15 repeats with a 25% IQR leave
    ///   the median uncertain by about that much).
    ///
    /// The test fails only if no attempt agrees within 25%: a systematic
    /// error repeats in every attempt, noise does not (one attempt in 42
    /// exceeded 14% on an idle machine, so five in a row above 25% is not
    /// noise). Where every attempt is disturbed, the least disturbed one is
    /// the one reported. Test builds use m = 2^20 too: the kernels crate
    /// is built optimised in every profile (the workspace's Cargo.toml);
    /// until 2026-11-28 debug builds timed unoptimised code at m = 2^16
    /// (about 3 ms per run) to stay within the test-time budget.
    #[test]
    fn topk_medians_are_stable_run_to_run() {
        let _g = heavy();
        let m = 1 << 20;
        // An attempt: two measurements, the larger of their CPU-wait
        // fractions, and the relative difference of their medians.
        struct Attempt {
            a: Timing,
            b: Timing,
            wait: f64,
            diff: f64,
        }
        let disturbed = |x: &Attempt| x.a.spread().max(x.b.spread()) > 0.5 || x.wait > 0.35;
        let mut attempts: Vec<Attempt> = Vec::new();
        for attempt in 1..=5u64 {
            let (a, wait_a) = time_topk_disturbance(m, 100 * attempt);
            let (b, wait_b) = time_topk_disturbance(m, 100 * attempt + 50);
            let (lo, hi) = (a.median_s.min(b.median_s), a.median_s.max(b.median_s));
            let diff = (hi - lo) / lo;
            eprintln!(
                "topk m = {m}, attempt {attempt}: medians {:.3e} s and {:.3e} s (Δ {:.1}%), \
                 spreads {:.1}% and {:.1}%, waiting for a CPU {:.1}% and {:.1}%",
                a.median_s,
                b.median_s,
                100.0 * diff,
                100.0 * a.spread(),
                100.0 * b.spread(),
                100.0 * wait_a,
                100.0 * wait_b,
            );
            assert!(a.repeats >= 15 && b.repeats >= 15);
            let x = Attempt {
                a,
                b,
                wait: wait_a.max(wait_b),
                diff,
            };
            let done = !disturbed(&x) && x.diff <= 0.25;
            attempts.push(x);
            if done {
                break;
            }
        }
        let calm: Vec<&Attempt> = attempts.iter().filter(|x| !disturbed(x)).collect();
        let (best, note) = if calm.is_empty() {
            (
                attempts
                    .iter()
                    .min_by(|x, y| x.wait.total_cmp(&y.wait))
                    .unwrap(),
                " (every attempt was disturbed: the machine is oversubscribed; \
                 reported the least disturbed)",
            )
        } else {
            let best = calm
                .into_iter()
                .min_by(|x, y| x.diff.total_cmp(&y.diff))
                .unwrap();
            (best, "")
        };
        assert!(
            best.diff <= 0.25,
            "in {} attempts no two medians agreed within 25%; the closest: {:.3e} s and \
             {:.3e} s, {:.1}% apart{note}",
            attempts.len(),
            best.a.median_s,
            best.b.median_s,
            100.0 * best.diff
        );
    }

    #[test]
    fn time_kernels_reports_every_kernel_size_and_density() {
        let _g = heavy();
        let t = time_kernels(&[1, 1000, 4096], &[0.01, 0.05, 1.0], 3);
        assert_eq!(t.len(), 3 * 3 * 5);
        let names: Vec<&str> = t.iter().take(5).map(|r| r.kernel).collect();
        assert_eq!(
            names,
            [
                "topk",
                "threshold_sort",
                "threshold_select",
                "mask",
                "merge"
            ]
        );
        let kept = |m, d| {
            t.iter()
                .find(|r| r.m == m && r.density == d)
                .unwrap()
                .k_or_kept
        };
        // the merge's input is the 2k candidates of two sets of k
        for r in t.iter().filter(|r| r.kernel == "merge") {
            assert_eq!(r.m, 2 * r.k_or_kept);
        }
        assert_eq!(kept(1000, 0.05), 50);
        assert_eq!(kept(1000, 0.01), 10);
        assert_eq!(kept(4096, 1.0), 4096);
        assert_eq!(kept(1, 0.01), 1);
        for r in &t {
            assert_eq!(r.timing.repeats, 3);
            assert!(r.timing.min_s >= 0.0 && r.timing.min_s <= r.timing.max_s);
        }
    }
}
