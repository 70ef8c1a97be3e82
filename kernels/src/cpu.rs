//! CPU compression kernels: exact Top-k selection, the DCT-DP threshold by
//! sorting, and threshold masking, each beside a simple reference and a
//! checker.
//!
//! dtsim times these kernels to fit the compression cost model (time as a
//! function of `m` and `k`), so they must be both fast and right. Every fast
//! kernel here has a deliberately naive `*_reference` twin, and a `check_*`
//! function that compares a result against the reference; the timing harness
//! ([`crate::timing::time_kernels`]) calls the checkers on every timed run,
//! so a fast wrong kernel fails instead of being fitted. The checkers take
//! the result as a slice, so the CUDA kernels can be checked the same way.
//!
//! Two sparsifiers, two papers:
//!
//! ```text
//!  Top-k (gTop-k, Shi et al. 2019, §II-E, Alg. 1)   DCT-DP (Gupta et al. 2021, Alg. 1)
//!  every iteration:                                  every L iterations (life-span L):
//!    idx = k largest |g|   [topk]                      τ = Sort(|g|)[⌊N·η⌋]  [threshold_by_sort]
//!    send (idx, g[idx])                              every iteration:
//!                                                      send g where |g| ≥ τ  [mask]
//! ```
//!
//! # Conventions shared by all kernels
//!
//! * Magnitudes are compared in IEEE 754 total order on `|v|`
//!   ([`f32::total_cmp`]), so `-0.0` and `0.0` tie and a NaN is larger than
//!   every number: a NaN gradient is always selected by Top-k, which surfaces
//!   it instead of hiding it. [`mask`] instead uses the paper's plain
//!   comparison `|v| ≥ τ`, under which NaN is never kept.
//! * Indices are `u32` (the encoding the simulator declares for sparse
//!   messages), so inputs hold at most `u32::MAX` elements; longer inputs
//!   panic.
//! * Output index lists are sorted ascending.

use std::cmp::Ordering;
use std::fmt;

/// Order key of element `i` with value `v`: larger key means "selected
/// first". The high 32 bits are the bits of `|v|`, which for non-negative
/// floats (NaN included, sign cleared by `abs`) order exactly as
/// [`f32::total_cmp`]; the low 32 bits are `!i`, so that among equal
/// magnitudes the lower index wins. Keys are distinct, which makes the
/// selection deterministic whatever the selection algorithm does with ties.
#[inline]
fn key(i: usize, v: f32) -> u64 {
    (u64::from(v.abs().to_bits()) << 32) | u64::from(!(i as u32))
}

/// Panics if `values` is too long to index with `u32`.
fn check_len(values: &[f32]) {
    assert!(
        values.len() <= u32::MAX as usize,
        "kernels index elements with u32; {} elements is too many",
        values.len()
    );
}

/// Exact Top-k: the indices of the `k` largest `|values|`, sorted ascending.
///
/// This is the selection step of Top-k sparsification as defined in gTop-k
/// (Shi et al., "A Distributed Synchronous SGD Algorithm with Global Top-k
/// Sparsification for Low Bandwidth Networks", ICDCS 2019, §II-E and
/// Algorithm 1): each worker contributes only "the k largest absolute values
/// of gradients". Ties in `|v|` are broken by lower index, so the result is
/// unique and deterministic; see the module docs for `-0.0` and NaN.
///
/// `k = 0` gives an empty list; `k ≥ values.len()` gives every index.
/// `out` is cleared first and reused, so a caller in a loop does not
/// allocate for the output. This convenience form allocates an 8·m-byte
/// scratch buffer per call; use [`topk_with_scratch`] to reuse it.
///
/// Cost: O(m) worst case: one pass to build keys, a selection
/// ([`slice::select_nth_unstable`], introselect with a median-of-medians
/// fallback) and one pass (or a sort of the `k` winners when `k` is small)
/// to emit the indices in order. Not a full sort.
///
/// # Panics
/// If `values.len() > u32::MAX`.
pub fn topk(values: &[f32], k: usize, out: &mut Vec<u32>) {
    let mut scratch = Vec::new();
    topk_with_scratch(values, k, &mut scratch, out);
}

/// [`topk`] with a caller-owned scratch buffer (grown to `values.len()`
/// keys of 8 bytes and kept), so repeated calls do not allocate.
///
/// # Panics
/// If `values.len() > u32::MAX`.
pub fn topk_with_scratch(values: &[f32], k: usize, scratch: &mut Vec<u64>, out: &mut Vec<u32>) {
    check_len(values);
    out.clear();
    let m = values.len();
    if k == 0 {
        return;
    }
    if k >= m {
        out.extend(0..m as u32);
        return;
    }
    scratch.clear();
    scratch.extend(values.iter().enumerate().map(|(i, &v)| key(i, v)));
    // After this, scratch[m - k..] holds exactly the k largest keys and
    // scratch[m - k] is the smallest of them.
    let (_, &mut kth, winners) = scratch.select_nth_unstable(m - k);
    out.reserve(k);
    // Emitting sorted indices: sorting the k winners costs O(k log k), a
    // second pass over the input costs O(m); pick the cheaper. Keys are
    // distinct, so the pass keeps exactly k elements.
    if k.saturating_mul(usize::BITS as usize) < m {
        out.push(!(kth as u32));
        out.extend(winners.iter().map(|&w| !(w as u32)));
        out.sort_unstable();
    } else {
        out.extend(
            values
                .iter()
                .enumerate()
                .filter(|&(i, &v)| key(i, v) >= kth)
                .map(|(i, _)| i as u32),
        );
    }
    debug_assert_eq!(out.len(), k);
}

/// Reference Top-k: a full sort by `|v|` descending (total order), ties by
/// lower index, then the first `k` indices sorted ascending. O(m log m);
/// for checking [`topk`] and other Top-k kernels, not for timing.
///
/// # Panics
/// If `values.len() > u32::MAX`.
pub fn topk_reference(values: &[f32], k: usize) -> Vec<u32> {
    check_len(values);
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (va, vb) = (values[a as usize].abs(), values[b as usize].abs());
        vb.total_cmp(&va).then(a.cmp(&b))
    });
    order.truncate(k);
    order.sort_unstable();
    order
}

/// The rank ⌊n·η⌋ at which DCT-DP reads its threshold from the sorted
/// magnitudes, so that `n − threshold_rank(n, η)` values are kept.
///
/// Computed in `f64`; a product within a relative 1e-12 of an integer is
/// taken as that integer, because binary floating point would otherwise
/// floor `100 × 0.29 = 28.999999999999996` to 28 where the user meant 29.
/// (The rounding error of the product is a few parts in 1e16, so 1e-12
/// snaps only products that are integers up to that error, even for
/// n near `u32::MAX`.)
///
/// # Panics
/// If `sparsity` is not in `[0, 1)`.
pub fn threshold_rank(n: usize, sparsity: f64) -> usize {
    assert!(
        (0.0..1.0).contains(&sparsity),
        "sparsity η must be in [0, 1), got {sparsity}"
    );
    let p = n as f64 * sparsity;
    let nearest = p.round();
    let rank = if (p - nearest).abs() <= 1e-12 * nearest.max(1.0) {
        nearest
    } else {
        p.floor()
    };
    (rank as usize).min(n.saturating_sub(1))
}

/// DCT-DP's threshold: the magnitude below which a fraction η (the
/// sparsity) of `values` lies.
///
/// From DCT (Gupta et al., "Training Recommender Systems at Scale:
/// Communication-Efficient Model and Data Parallelism", KDD 2021),
/// Algorithm 1, lines 3–5: every L iterations (the threshold life-span,
/// "generally in thousands") the trainer sorts `|W_grad|` and sets
/// `τ = w_⌊N×η⌋`; in between it reuses τ and only [`mask`]s. This kernel is
/// that recomputation: it copies `|v|` into `scratch` (the copy the paper
/// names as the expensive part, §2.1), sorts it (total order), and returns
/// the element at **0-based** index `⌊n·η⌋` ([`threshold_rank`]).
///
/// Convention: with 0-based indexing, exactly `n − ⌊n·η⌋` elements are
/// `≥ τ` when magnitudes are distinct (more when values tie with τ), which
/// is the count in CASES.md DCT-A1 and gives the compression `1/(1−η)`:
/// 95% → 20×. The paper writes `w_⌊N×η⌋` without fixing the index origin;
/// read 1-based it would keep one element more and be undefined for
/// `⌊N·η⌋ = 0`.
///
/// An empty input returns `+∞`, so that [`mask`] keeps nothing (`0 = n − 0`
/// kept). Cost: O(n log n) for the sort plus the O(n) copy.
///
/// # Panics
/// If `sparsity` is not in `[0, 1)`.
pub fn threshold_by_sort(values: &[f32], sparsity: f64, scratch: &mut Vec<f32>) -> f32 {
    let rank = threshold_rank(values.len(), sparsity);
    if values.is_empty() {
        return f32::INFINITY;
    }
    scratch.clear();
    scratch.extend(values.iter().map(|v| v.abs()));
    scratch.sort_unstable_by(f32::total_cmp);
    scratch[rank]
}

/// Reference for [`threshold_by_sort`] by a different route: selection of
/// the element of rank `⌊n·η⌋` among the magnitudes instead of a full sort.
///
/// # Panics
/// If `sparsity` is not in `[0, 1)`.
pub fn threshold_reference(values: &[f32], sparsity: f64) -> f32 {
    let rank = threshold_rank(values.len(), sparsity);
    if values.is_empty() {
        return f32::INFINITY;
    }
    let mut mags: Vec<f32> = values.iter().map(|v| v.abs()).collect();
    *mags.select_nth_unstable_by(rank, f32::total_cmp).1
}

/// DCT-DP's threshold by selection instead of a sort: the same τ as
/// [`threshold_by_sort`] (the magnitude of 0-based rank `⌊n·η⌋`), found by
/// a selection ([`slice::select_nth_unstable_by`]) over the copied
/// magnitudes. O(n): the form a selection-based threshold is fitted with
/// (`calibration::calibrate::kernel_model`), where the sort's is
/// O(n log n). The CUDA backend's `threshold_select` is the radix-select
/// counterpart.
///
/// # Panics
/// If `sparsity` is not in `[0, 1)`.
pub fn threshold_by_select(values: &[f32], sparsity: f64, scratch: &mut Vec<f32>) -> f32 {
    let rank = threshold_rank(values.len(), sparsity);
    if values.is_empty() {
        return f32::INFINITY;
    }
    scratch.clear();
    scratch.extend(values.iter().map(|v| v.abs()));
    *scratch.select_nth_unstable_by(rank, f32::total_cmp).1
}

/// gTop-k's merge of two sparse sets (gTop-k, Shi et al. ICDCS 2019,
/// Algorithm 2, lines 10–12): the sum of the two sets, as sparse vectors
/// of the same model, and of that sum the k elements of largest magnitude
/// (ties by lower index), as (index, value) pairs in index order.
///
/// Each set is given as indices in ascending order and their values (what
/// [`topk`] and [`mask`] produce). One merge-join adds the values of
/// indices both sets hold (at most 2k candidates), a selection keeps k
/// (O(k)), and a sort puts those k back in index order (O(k log k)). `out_idx` and `out_val` are
/// cleared first; `scratch` holds the candidates and is kept between calls.
///
/// # Panics
/// If an index list and its value list differ in length.
#[allow(clippy::too_many_arguments)]
pub fn merge(
    a_idx: &[u32],
    a_val: &[f32],
    b_idx: &[u32],
    b_val: &[f32],
    k: usize,
    scratch: &mut Vec<(u32, f32)>,
    out_idx: &mut Vec<u32>,
    out_val: &mut Vec<f32>,
) {
    assert_eq!(a_idx.len(), a_val.len(), "first set: indices and values");
    assert_eq!(b_idx.len(), b_val.len(), "second set: indices and values");
    scratch.clear();
    let (mut i, mut j) = (0, 0);
    while i < a_idx.len() || j < b_idx.len() {
        let take_a = j == b_idx.len() || (i < a_idx.len() && a_idx[i] <= b_idx[j]);
        let take_b = i == a_idx.len() || (j < b_idx.len() && b_idx[j] <= a_idx[i]);
        if take_a && take_b {
            scratch.push((a_idx[i], a_val[i] + b_val[j]));
            i += 1;
            j += 1;
        } else if take_a {
            scratch.push((a_idx[i], a_val[i]));
            i += 1;
        } else {
            scratch.push((b_idx[j], b_val[j]));
            j += 1;
        }
    }
    out_idx.clear();
    out_val.clear();
    if k == 0 {
        return;
    }
    if k < scratch.len() {
        scratch.select_nth_unstable_by(k - 1, merge_order);
        scratch.truncate(k);
        scratch.sort_unstable_by_key(|&(i, _)| i);
    }
    out_idx.extend(scratch.iter().map(|&(i, _)| i));
    out_val.extend(scratch.iter().map(|&(_, v)| v));
}

/// Larger magnitude first (total order), then lower index: the order
/// [`merge`] keeps its k by.
fn merge_order(a: &(u32, f32), b: &(u32, f32)) -> Ordering {
    b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0))
}

/// Reference for [`merge`]: the sum accumulated index by index in a map,
/// a full sort of the candidates, the first k, in index order.
pub fn merge_reference(a: (&[u32], &[f32]), b: (&[u32], &[f32]), k: usize) -> Vec<(u32, f32)> {
    let mut sum = std::collections::BTreeMap::new();
    for (idx, val) in [a, b] {
        for (&i, &v) in idx.iter().zip(val) {
            *sum.entry(i).or_insert(0.0f32) += v;
        }
    }
    let mut all: Vec<(u32, f32)> = sum.into_iter().collect();
    all.sort_by(merge_order);
    all.truncate(k);
    all.sort_by_key(|&(i, _)| i);
    all
}

/// Threshold masking: keep every element with `|v| ≥ threshold`, as
/// (index, value) pairs in index order; returns how many were kept.
///
/// This is DCT-DP's per-iteration compression (Gupta et al., KDD 2021,
/// Algorithm 1, lines 9–10: `M = I(|W_grad| ≥ τ)`, `Ŵ_grad = W_grad ⊙ M`),
/// with the sparse result encoded as indices plus values, the form that is
/// sent. `idx` and `vals` are cleared first and reused. The comparison is
/// IEEE `>=`, so NaN elements are never kept. One pass, O(n), with no
/// per-element branch.
///
/// # Panics
/// If `values.len() > u32::MAX`.
pub fn mask(values: &[f32], threshold: f32, idx: &mut Vec<u32>, vals: &mut Vec<f32>) -> usize {
    check_len(values);
    idx.clear();
    vals.clear();
    // Per chunk of 64: first a branch-free "keeps anything?" test, which
    // vectorises and skips chunks that keep nothing (about half of them at
    // η = 99%, nearly all at 99.9%); then the
    // comparisons as a bit mask, visiting only the set bits. A branch per
    // element instead mispredicts about half the time at density ½.
    // Measured at m = 2^20 (release, this 2-core machine): 0.19 ms at
    // density 0.1%, 0.8 ms at 5%, 1.2 ms at 50%, against 0.56, 0.96 and
    // 4.3 ms for the per-element branch.
    for (c, chunk) in values.chunks(64).enumerate() {
        if !chunk
            .iter()
            .fold(false, |any, v| any | (v.abs() >= threshold))
        {
            continue;
        }
        let mut bits = chunk
            .iter()
            .enumerate()
            .fold(0u64, |b, (j, v)| b | (u64::from(v.abs() >= threshold) << j));
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            idx.push((c * 64 + j) as u32);
            vals.push(chunk[j]);
        }
    }
    idx.len()
}

/// Reference for [`mask`]: the kept (index, value) pairs, built one
/// element at a time from the definition.
pub fn mask_reference(values: &[f32], threshold: f32) -> Vec<(u32, f32)> {
    check_len(values);
    (0..values.len())
        .filter(|&i| values[i].abs() >= threshold)
        .map(|i| (i as u32, values[i]))
        .collect()
}

/// A kernel's result disagrees with its reference on one input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("kernel `{kernel}` disagrees with its reference: {detail}")]
pub struct KernelMismatch {
    /// The kernel that was checked: "topk", "threshold_sort" or "mask".
    pub kernel: &'static str,
    /// What differed, with the first differing position.
    pub detail: String,
}

impl KernelMismatch {
    fn new(kernel: &'static str, detail: impl fmt::Display) -> Self {
        Self {
            kernel,
            detail: detail.to_string(),
        }
    }
}

/// Position of the first difference between two sequences, if any.
fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// Checks a Top-k result (indices, ascending) against [`topk_reference`].
///
/// # Errors
/// [`KernelMismatch`] naming the first differing position.
pub fn check_topk(values: &[f32], k: usize, got: &[u32]) -> Result<(), KernelMismatch> {
    compare_topk(values.len(), k, got, &topk_reference(values, k))
}

/// Checks a Top-k result (indices, ascending) against [`topk`], the O(m)
/// selection, rather than the reference's O(m log m) sort: the same
/// unique answer (ties by lower index), itself checked against
/// [`topk_reference`] by this crate's tests. The CUDA backend checks its
/// kernels with it: at 16 Mi elements the reference's sort took seconds
/// per check on the host and ran a calibration past its time limit on an
/// H200 (2026-11-26), where the GPU kernel takes 0.4 ms.
///
/// # Errors
/// [`KernelMismatch`] naming the first differing position.
pub fn check_topk_selected(values: &[f32], k: usize, got: &[u32]) -> Result<(), KernelMismatch> {
    let mut want = Vec::new();
    topk(values, k, &mut want);
    compare_topk(values.len(), k, got, &want)
}

/// `got` against `want`, as [`check_topk`] reports a difference.
fn compare_topk(m: usize, k: usize, got: &[u32], want: &[u32]) -> Result<(), KernelMismatch> {
    match first_difference(got, want) {
        None => Ok(()),
        Some(p) => Err(KernelMismatch::new(
            "topk",
            format_args!(
                "m = {m}, k = {k}: got {} indices, want {}; first difference at position {p} \
                 (got {:?}, want {:?})",
                got.len(),
                want.len(),
                got.get(p),
                want.get(p)
            ),
        )),
    }
}

/// Checks a DCT-DP threshold against [`threshold_reference`] (bit-exact:
/// both read an element of the input).
///
/// # Errors
/// [`KernelMismatch`] with both values.
pub fn check_threshold(values: &[f32], sparsity: f64, got: f32) -> Result<(), KernelMismatch> {
    let want = threshold_reference(values, sparsity);
    if got.total_cmp(&want) == Ordering::Equal {
        Ok(())
    } else {
        Err(KernelMismatch::new(
            "threshold_sort",
            format_args!(
                "n = {}, η = {sparsity}: got τ = {got:e}, want {want:e}",
                values.len()
            ),
        ))
    }
}

/// Checks a selection-based threshold against [`threshold_by_sort`] (a
/// different route to the same element; bit-exact).
///
/// # Errors
/// [`KernelMismatch`] with both values.
pub fn check_threshold_select(
    values: &[f32],
    sparsity: f64,
    got: f32,
) -> Result<(), KernelMismatch> {
    let want = threshold_by_sort(values, sparsity, &mut Vec::new());
    if got.total_cmp(&want) == Ordering::Equal {
        Ok(())
    } else {
        Err(KernelMismatch::new(
            "threshold_select",
            format_args!(
                "n = {}, η = {sparsity}: got τ = {got:e}, want {want:e}",
                values.len()
            ),
        ))
    }
}

/// Checks a merge result against [`merge_reference`] (values bit for
/// bit: both add the same two numbers).
///
/// # Errors
/// [`KernelMismatch`] naming the first differing position.
pub fn check_merge(
    a: (&[u32], &[f32]),
    b: (&[u32], &[f32]),
    k: usize,
    idx: &[u32],
    vals: &[f32],
) -> Result<(), KernelMismatch> {
    let want: Vec<(u32, u32)> = merge_reference(a, b, k)
        .iter()
        .map(|&(i, v)| (i, v.to_bits()))
        .collect();
    let got: Vec<(u32, u32)> = idx
        .iter()
        .zip(vals)
        .map(|(&i, v)| (i, v.to_bits()))
        .collect();
    match first_difference(&got, &want) {
        None if idx.len() == vals.len() => Ok(()),
        None => Err(KernelMismatch::new(
            "merge",
            format_args!("{} indices but {} values", idx.len(), vals.len()),
        )),
        Some(p) => Err(KernelMismatch::new(
            "merge",
            format_args!(
                "k = {k}: kept {}, want {}; first difference at position {p} (got {:?}, want {:?})",
                got.len(),
                want.len(),
                got.get(p),
                want.get(p)
            ),
        )),
    }
}

/// Checks a mask result (kept indices and values, in index order) against
/// [`mask_reference`] (values compared bit for bit).
///
/// # Errors
/// [`KernelMismatch`] naming the first differing position.
pub fn check_mask(
    values: &[f32],
    threshold: f32,
    idx: &[u32],
    vals: &[f32],
) -> Result<(), KernelMismatch> {
    if idx.len() != vals.len() {
        return Err(KernelMismatch::new(
            "mask",
            format_args!("{} indices but {} values", idx.len(), vals.len()),
        ));
    }
    let want = mask_reference(values, threshold);
    let got: Vec<(u32, u32)> = idx
        .iter()
        .zip(vals)
        .map(|(&i, v)| (i, v.to_bits()))
        .collect();
    let want_bits: Vec<(u32, u32)> = want.iter().map(|&(i, v)| (i, v.to_bits())).collect();
    match first_difference(&got, &want_bits) {
        None => Ok(()),
        Some(p) => Err(KernelMismatch::new(
            "mask",
            format_args!(
                "n = {}, τ = {threshold:e}: kept {}, want {}; first difference at position {p} \
                 (got {:?}, want {:?})",
                values.len(),
                got.len(),
                want.len(),
                idx.get(p).zip(vals.get(p)),
                want.get(p)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The merge adds the values of shared indices and keeps the k of
    /// largest magnitude in index order, ties to the lower index; empty
    /// and k = 0 edges.
    #[test]
    fn merge_adds_shared_indices_and_keeps_k() {
        let (mut scratch, mut idx, mut val) = (Vec::new(), Vec::new(), Vec::new());
        let a = ([1u32, 4, 7], [1.0f32, -5.0, 2.0]);
        let b = ([4u32, 6, 7], [1.0f32, 3.0, -2.0]);
        merge(&a.0, &a.1, &b.0, &b.1, 2, &mut scratch, &mut idx, &mut val);
        // sums: 1 → 1, 4 → −4, 6 → 3, 7 → 0
        assert_eq!((idx.clone(), val.clone()), (vec![4, 6], vec![-4.0, 3.0]));
        merge(&a.0, &a.1, &b.0, &b.1, 10, &mut scratch, &mut idx, &mut val);
        assert_eq!(idx, [1, 4, 6, 7]);
        merge(&a.0, &a.1, &[], &[], 0, &mut scratch, &mut idx, &mut val);
        assert!(idx.is_empty() && val.is_empty());
        // a tie between 1 (1.0) and 9 (−1.0) goes to the lower index
        merge(
            &[1],
            &[1.0],
            &[9],
            &[-1.0],
            1,
            &mut scratch,
            &mut idx,
            &mut val,
        );
        assert_eq!(idx, [1]);
        for seed in 0..5u64 {
            let g = crate::timing::random_gradient(4000, seed);
            let h = crate::timing::random_gradient(4000, seed + 100);
            let (mut ia, mut ib) = (Vec::new(), Vec::new());
            topk(&g, 300, &mut ia);
            topk(&h, 300, &mut ib);
            let va: Vec<f32> = ia.iter().map(|&i| g[i as usize]).collect();
            let vb: Vec<f32> = ib.iter().map(|&i| h[i as usize]).collect();
            merge(&ia, &va, &ib, &vb, 300, &mut scratch, &mut idx, &mut val);
            check_merge((&ia, &va), (&ib, &vb), 300, &idx, &val).unwrap();
        }
        assert!(check_merge((&[1], &[1.0]), (&[], &[]), 1, &[2], &[1.0]).is_err());
    }

    /// Selection and sort give the same threshold.
    #[test]
    fn threshold_by_select_agrees_with_the_sort() {
        let mut scratch = Vec::new();
        for (n, eta) in [(1usize, 0.0), (100, 0.29), (1000, 0.95), (4097, 0.999)] {
            let g = crate::timing::random_gradient(n, n as u64);
            let got = threshold_by_select(&g, eta, &mut scratch);
            check_threshold_select(&g, eta, got).unwrap();
        }
        assert_eq!(threshold_by_select(&[], 0.5, &mut scratch), f32::INFINITY);
        assert!(check_threshold_select(&[1.0, 2.0], 0.5, 1.0).is_err());
    }

    fn topk_vec(values: &[f32], k: usize) -> Vec<u32> {
        let mut out = vec![99];
        topk(values, k, &mut out);
        out
    }

    #[test]
    fn topk_by_magnitude_with_negatives() {
        let v = [0.5, -3.0, 2.0, -0.1, 1.0];
        assert_eq!(topk_vec(&v, 1), [1]);
        assert_eq!(topk_vec(&v, 2), [1, 2]);
        assert_eq!(topk_vec(&v, 3), [1, 2, 4]);
    }

    #[test]
    fn topk_ties_go_to_lower_index() {
        let v = [1.0, -2.0, 2.0, 1.0, -1.0, 2.0];
        assert_eq!(topk_vec(&v, 2), [1, 2]);
        assert_eq!(topk_vec(&v, 4), [0, 1, 2, 5]);
        assert_eq!(topk_vec(&[0.0, -0.0, 0.0], 2), [0, 1]);
    }

    #[test]
    fn topk_edge_sizes() {
        assert_eq!(topk_vec(&[], 0), Vec::<u32>::new());
        assert_eq!(topk_vec(&[], 3), Vec::<u32>::new());
        assert_eq!(topk_vec(&[1.0, 2.0], 0), Vec::<u32>::new());
        assert_eq!(topk_vec(&[1.0, 2.0], 2), [0, 1]);
        assert_eq!(topk_vec(&[1.0, 2.0], 7), [0, 1]);
        assert_eq!(topk_vec(&[-4.0], 1), [0]);
    }

    #[test]
    fn topk_nan_is_largest() {
        let v = [1.0, f32::NAN, f32::INFINITY, -5.0];
        assert_eq!(topk_vec(&v, 1), [1]);
        assert_eq!(topk_vec(&v, 2), [1, 2]);
        assert_eq!(topk_reference(&v, 2), [1, 2]);
    }

    #[test]
    fn topk_both_emit_paths_agree_with_reference() {
        // k·64 < m takes the sort-the-winners path, larger k the scan path.
        let v: Vec<f32> = (0..1000)
            .map(|i| ((i * 7919) % 1009) as f32 - 500.0)
            .collect();
        for k in [1, 5, 15, 16, 17, 100, 999] {
            assert_eq!(topk_vec(&v, k), topk_reference(&v, k), "k = {k}");
        }
    }

    #[test]
    fn rank_snaps_products_that_are_integers() {
        assert_eq!(threshold_rank(100, 0.29), 29);
        assert_eq!(threshold_rank(100, 0.95), 95);
        assert_eq!(threshold_rank(10, 0.95), 9);
        assert_eq!(threshold_rank(7, 0.5), 3);
        assert_eq!(threshold_rank(5, 0.0), 0);
        assert_eq!(threshold_rank(0, 0.9), 0);
    }

    #[test]
    #[should_panic(expected = "sparsity η must be in [0, 1)")]
    fn sparsity_one_is_rejected() {
        threshold_rank(10, 1.0);
    }

    #[test]
    fn threshold_reads_zero_based_rank() {
        // |v| sorted: 1 2 3 4 5 6 7 8 9 10; η = 0.7 → index 7 → 8.0,
        // and 10 − 7 = 3 elements (8, 9, 10) are ≥ it.
        let v: Vec<f32> = (1..=10)
            .map(|i| if i % 2 == 0 { i as f32 } else { -(i as f32) })
            .collect();
        let mut scratch = Vec::new();
        let t = threshold_by_sort(&v, 0.7, &mut scratch);
        assert_eq!(t, 8.0);
        assert_eq!(threshold_reference(&v, 0.7), 8.0);
        let (mut idx, mut vals) = (Vec::new(), Vec::new());
        assert_eq!(mask(&v, t, &mut idx, &mut vals), 3);
        assert_eq!(idx, [7, 8, 9]);
        assert_eq!(vals, [8.0, -9.0, 10.0]);
        assert_eq!(threshold_by_sort(&v, 0.0, &mut scratch), 1.0);
        assert_eq!(threshold_by_sort(&[], 0.5, &mut scratch), f32::INFINITY);
    }

    #[test]
    fn mask_keeps_ties_and_skips_nan() {
        let v = [2.0, -2.0, 1.0, f32::NAN, 3.0];
        let (mut idx, mut vals) = (vec![5], vec![5.0]);
        assert_eq!(mask(&v, 2.0, &mut idx, &mut vals), 3);
        assert_eq!(idx, [0, 1, 4]);
        assert_eq!(vals, [2.0, -2.0, 3.0]);
        assert!(check_mask(&v, 2.0, &idx, &vals).is_ok());
        assert_eq!(mask(&[], 0.0, &mut idx, &mut vals), 0);
    }

    #[test]
    fn checkers_reject_wrong_results() {
        let v = [3.0, -1.0, 2.0, 0.5];
        assert!(check_topk(&v, 2, &[0, 2]).is_ok());
        let e = check_topk(&v, 2, &[0, 1]).unwrap_err();
        assert_eq!(e.kernel, "topk");
        assert!(
            e.to_string().contains("first difference at position 1"),
            "{e}"
        );
        assert!(check_topk(&v, 2, &[0]).is_err());
        assert!(check_topk(&v, 2, &[2, 0]).is_err(), "order matters");
        assert!(check_threshold(&v, 0.5, 2.0).is_ok());
        assert!(check_threshold(&v, 0.5, 1.0).is_err());
        assert!(check_mask(&v, 2.0, &[0, 2], &[3.0, 2.0]).is_ok());
        assert!(check_mask(&v, 2.0, &[0, 2], &[3.0, -2.0]).is_err());
        assert!(check_mask(&v, 2.0, &[0], &[3.0]).is_err());
        assert!(check_mask(&v, 2.0, &[0, 2], &[3.0]).is_err());
    }
}
