//! Kernel cost fits on real CPU measurements, and the kept-count rule
//! that the simulator and the kernels share.

use calibration::calibrate::kernel_model;
use kernels::timing::{KernelTiming, time_kernels};

/// Every kernel the CPU backend times, fitted in its form, leaves a median
/// relative residual under 25% over sizes 2^12 … 2^19 at two densities;
/// and the two thresholds, whose forms differ by a factor log2 m that
/// moves 12 → 19 over these sizes, each fit their own form no worse than
/// the other's (the sort m·log m, the selection m). Timings on a shared
/// 2-core machine are noisy (a scheduler hiccup can double one median):
/// an attempt that misses is repeated, up to three times.
#[test]
fn cpu_kernels_fit_their_forms() {
    let mut last = String::new();
    for _attempt in 0..3 {
        let timings = time_kernels(
            &[1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20],
            &[0.01, 0.1],
            3,
        );
        let mut names: Vec<&str> = timings.iter().map(|t| t.kernel).collect();
        names.sort();
        names.dedup();
        assert_eq!(
            names,
            [
                "mask",
                "merge",
                "threshold_select",
                "threshold_sort",
                "topk"
            ]
        );
        let of =
            |k: &str| -> Vec<&KernelTiming> { timings.iter().filter(|t| t.kernel == k).collect() };
        let fits: Vec<_> = names
            .iter()
            .map(|k| kernel_model(k, "cpu", &of(k)).expect("fitted"))
            .collect();
        // each threshold's timings fitted as if they were the other's
        let sort_as_linear =
            kernel_model("threshold_select", "cpu", &of("threshold_sort")).unwrap();
        let select_as_sort =
            kernel_model("threshold_sort", "cpu", &of("threshold_select")).unwrap();
        let residual =
            |k: &str| fits[names.iter().position(|n| *n == k).unwrap()].median_abs_residual;
        if fits.iter().all(|f| f.median_abs_residual < 0.25)
            && residual("threshold_sort") <= sort_as_linear.median_abs_residual
            && residual("threshold_select") <= select_as_sort.median_abs_residual
        {
            return;
        }
        last = format!(
            "{fits:#?}\nsort as linear: {sort_as_linear:?}\nselect as sort: {select_as_sort:?}"
        );
    }
    panic!("a form misfits in three attempts: {last}");
}

/// DCT's kept count is one rule in two crates: the simulator's
/// `dct::kept` and the kernels' n − `threshold_rank` (the crates do not
/// depend on each other; this crate sees both).
#[test]
fn the_kept_count_is_the_kernels() {
    for n in [1usize, 2, 7, 100, 129, 1040, 7168, 131_328, 1_000_000] {
        for eta in [0.0, 0.25, 0.29, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999] {
            let kernels = n - kernels::cpu::threshold_rank(n, eta);
            assert_eq!(
                sim::train::planner::dct::kept(n as u64, eta),
                kernels as u64,
                "n = {n}, η = {eta}"
            );
        }
    }
}
