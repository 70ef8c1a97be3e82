// GPU compression kernels of dtsim, compiled at run time by NVRTC for the
// architecture of the device they run on (see enabled.rs, which launches
// them and documents what each launch times).
//
// Everything here uses only what NVRTC provides without any #include
// (unsigned int, unsigned long long, float4, atomicAdd, __syncthreads,
// __float_as_uint, __uint_as_float, fabsf), so no CUDA headers are needed
// at run time.
//
// Conventions, identical to crate::cpu (kernels/src/cpu.rs):
//  * A magnitude is compared by the bits of |v| (the float bits with the
//    sign cleared). For non-negative floats, NaN included, the unsigned
//    order of these bits is IEEE 754 total order, which is what
//    cpu::topk uses (f32::total_cmp on |v|): -0.0 and 0.0 tie, and NaN is
//    larger than +inf.
//  * Top-k ties in |v| go to the lower index, so the selection is unique.
//  * Masking uses the plain comparison fabsf(v) >= tau (NaN never kept).
//  * Output indices are ascending and are u32 (inputs have at most 2^32 - 1
//    elements).
//
// Top-k is a radix select followed by an order-preserving compaction:
//
//   topk_init                       state = {prefix 0, mask 0, k}, hist = 0
//   4 x (topk_histogram,            256-bin histogram of one 8-bit digit of
//        topk_select_digit)         |v| among the elements that match the
//                                   digits chosen so far, then the digit
//                                   that holds the k-th largest magnitude
//   -> state = {T, 0xFFFFFFFF, r}:  T is the k-th largest magnitude, and
//                                   the k winners are all elements with
//                                   |v| > T plus the r lowest-indexed
//                                   elements with |v| == T
//   topk_count                      per tile of TILE elements: how many
//                                   are > T and how many == T
//   topk_scan                       exclusive scans over tiles: rank of
//                                   each tile's first "== T" element, and
//                                   output position of each tile's first
//                                   winner
//   topk_scatter                    each tile writes its winners in index
//                                   order
//
// T is also the DCT-DP threshold: with k = n - floor(n*eta), the k-th
// largest magnitude is element floor(n*eta) of the magnitudes sorted
// ascending (cpu::threshold_by_sort).
//
// Every tile kernel (topk_histogram, topk_count, topk_scatter, mask_count,
// mask_scatter) must be launched with BLOCK threads per block and one block
// per tile; topk_scan and scan_counts with SCAN_THREADS threads and one
// block. __launch_bounds__ makes the compiler keep their register use low
// enough for those block sizes.

#define BLOCK 256u
#define ITEMS 16u
#define TILE (BLOCK * ITEMS)
#define SCAN_THREADS 1024u
// Marks a tile slot past the end of the input: never a magnitude (those
// have bit 31 clear), so never > T (checked explicitly) nor == T.
#define PAST_END 0xFFFFFFFFu

typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ u32 magnitude_bits(float v) {
    return __float_as_uint(v) & 0x7FFFFFFFu;
}

__device__ __forceinline__ u32 umin32(u32 a, u32 b) { return a < b ? a : b; }

// How many of a run of `count` elements equal to T, whose first has rank
// `before` among all elements equal to T, are among the r that are taken.
__device__ __forceinline__ u32 taken(u32 r, u32 before, u32 count) {
    return r > before ? umin32(r - before, count) : 0u;
}

// Exclusive prefix sum of one value per thread over the block (Hillis and
// Steele). `sh` holds blockDim.x values. Every thread of the block must
// call it; it may be called again with the same `sh`.
__device__ u32 block_exclusive_scan(u32 v, u32* sh) {
    const u32 t = threadIdx.x;
    __syncthreads();  // earlier readers of sh are done
    sh[t] = v;
    __syncthreads();
    for (u32 offset = 1u; offset < blockDim.x; offset <<= 1) {
        const u32 add = t >= offset ? sh[t - offset] : 0u;
        __syncthreads();
        sh[t] += add;
        __syncthreads();
    }
    return sh[t] - v;
}

// state[0]: prefix of T found so far; state[1]: mask of the digits found;
// state[2]: how many winners remain to be found among the elements that
// match the prefix; state[3]: 0, or 1 if a digit could not be selected (a
// bug: k was 0 or larger than the input).
extern "C" __global__ void topk_init(u32* state, u32* hist, u32 k) {
    for (u32 i = threadIdx.x; i < 4u * 256u; i += blockDim.x) hist[i] = 0u;
    if (threadIdx.x == 0u) {
        state[0] = 0u;
        state[1] = 0u;
        state[2] = k;
        state[3] = 0u;
    }
}

// Pass p (0..3) counts digit p, bits 24-8p .. 31-8p, of |v| over the
// elements whose higher digits match state[0] under state[1].
extern "C" __global__ void __launch_bounds__(BLOCK)
topk_histogram(const float* __restrict__ x, u32 m,
               const u32* __restrict__ state,
               u32* __restrict__ hist, u32 pass) {
    __shared__ u32 local[256];
    for (u32 i = threadIdx.x; i < 256u; i += blockDim.x) local[i] = 0u;
    __syncthreads();
    const u32 prefix = state[0];
    const u32 mask = state[1];
    const u32 shift = 24u - 8u * pass;
    const u64 start = (u64)blockIdx.x * TILE;
    for (u32 j = threadIdx.x; j < TILE; j += blockDim.x) {
        const u64 i = start + j;
        if (i < m) {
            const u32 u = magnitude_bits(x[i]);
            if ((u & mask) == prefix) atomicAdd(&local[(u >> shift) & 0xFFu], 1u);
        }
    }
    __syncthreads();
    u32* h = hist + 256u * pass;
    for (u32 i = threadIdx.x; i < 256u; i += blockDim.x) {
        if (local[i] != 0u) atomicAdd(&h[i], local[i]);
    }
}

// One thread: walks pass p's histogram from the largest digit down to the
// digit d at which the count reaches the k still to be found, appends d to
// the prefix, and subtracts the elements above d from k.
extern "C" __global__ void topk_select_digit(u32* state, const u32* hist, u32 pass) {
    if (threadIdx.x != 0u || blockIdx.x != 0u) return;
    const u32* h = hist + 256u * pass;
    const u32 shift = 24u - 8u * pass;
    const u32 k = state[2];
    u32 above = 0u;  // at most m, so no overflow
    for (int d = 255; d >= 0; --d) {
        const u32 c = h[d];
        if (above + c >= k) {
            state[0] |= (u32)d << shift;
            state[1] |= 0xFFu << shift;
            state[2] = k - above;
            return;
        }
        above += c;
    }
    state[3] = 1u;
}

// Per tile: elements with |v| > T and with |v| == T.
extern "C" __global__ void __launch_bounds__(BLOCK)
topk_count(const float* __restrict__ x, u32 m,
           const u32* __restrict__ state,
           u32* __restrict__ gt_count,
           u32* __restrict__ eq_count) {
    __shared__ u32 gt;
    __shared__ u32 eq;
    if (threadIdx.x == 0u) {
        gt = 0u;
        eq = 0u;
    }
    __syncthreads();
    const u32 t = state[0];
    const u64 start = (u64)blockIdx.x * TILE;
    u32 my_gt = 0u, my_eq = 0u;
    for (u32 j = threadIdx.x; j < TILE; j += blockDim.x) {
        const u64 i = start + j;
        if (i < m) {
            const u32 u = magnitude_bits(x[i]);
            my_gt += u > t ? 1u : 0u;
            my_eq += u == t ? 1u : 0u;
        }
    }
    if (my_gt != 0u) atomicAdd(&gt, my_gt);
    if (my_eq != 0u) atomicAdd(&eq, my_eq);
    __syncthreads();
    if (threadIdx.x == 0u) {
        gt_count[blockIdx.x] = gt;
        eq_count[blockIdx.x] = eq;
    }
}

// One block of SCAN_THREADS threads over the nb tiles: eq_base[b] is the
// number of "== T" elements in tiles before b; sel_base[b] the number of
// winners in tiles before b (its output position).
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
topk_scan(const u32* __restrict__ gt_count,
          const u32* __restrict__ eq_count, u32 nb,
          const u32* __restrict__ state,
          u32* __restrict__ eq_base,
          u32* __restrict__ sel_base) {
    __shared__ u32 sh[SCAN_THREADS];
    const u32 r = state[2];
    const u32 per = (nb + blockDim.x - 1u) / blockDim.x;
    const u32 lo = umin32(threadIdx.x * per, nb);
    const u32 hi = umin32(lo + per, nb);

    u32 sum = 0u;
    for (u32 b = lo; b < hi; ++b) sum += eq_count[b];
    u32 before = block_exclusive_scan(sum, sh);
    for (u32 b = lo; b < hi; ++b) {
        eq_base[b] = before;
        before += eq_count[b];
    }

    sum = 0u;
    for (u32 b = lo; b < hi; ++b) sum += gt_count[b] + taken(r, eq_base[b], eq_count[b]);
    before = block_exclusive_scan(sum, sh);
    for (u32 b = lo; b < hi; ++b) {
        sel_base[b] = before;
        before += gt_count[b] + taken(r, eq_base[b], eq_count[b]);
    }
}

// Per tile: stages the tile's magnitudes in shared memory (padded by one
// word every ITEMS, so that thread t reading its ITEMS consecutive
// elements does not conflict on banks), gives each thread ITEMS
// consecutive elements, and writes the winners in index order.
extern "C" __global__ void __launch_bounds__(BLOCK)
topk_scatter(const float* __restrict__ x, u32 m,
             const u32* __restrict__ state,
             const u32* __restrict__ eq_base,
             const u32* __restrict__ sel_base,
             u32* __restrict__ out) {
    __shared__ u32 tile[TILE + TILE / ITEMS];
    __shared__ u32 sh[BLOCK];
    const u32 t = state[0];
    const u32 r = state[2];
    const u64 start = (u64)blockIdx.x * TILE;
    for (u32 j = threadIdx.x; j < TILE; j += blockDim.x) {
        const u64 i = start + j;
        tile[j + j / ITEMS] = i < m ? magnitude_bits(x[i]) : PAST_END;
    }
    __syncthreads();

    const u32 first = threadIdx.x * ITEMS;
    u32 gt = 0u, eq = 0u;
    for (u32 j = first; j < first + ITEMS; ++j) {
        const u32 u = tile[j + j / ITEMS];
        gt += (u != PAST_END && u > t) ? 1u : 0u;
        eq += u == t ? 1u : 0u;
    }
    const u32 eq_before = eq_base[blockIdx.x] + block_exclusive_scan(eq, sh);
    const u32 sel = gt + taken(r, eq_before, eq);
    u32 pos = sel_base[blockIdx.x] + block_exclusive_scan(sel, sh);
    u32 e = eq_before;
    for (u32 j = first; j < first + ITEMS; ++j) {
        const u32 u = tile[j + j / ITEMS];
        const u32 i = (u32)(start + j);
        if (u == t) {
            if (e < r) out[pos++] = i;
            ++e;
        } else if (u != PAST_END && u > t) {
            out[pos++] = i;
        }
    }
}

// Per tile: elements with fabsf(v) >= tau.
extern "C" __global__ void __launch_bounds__(BLOCK)
mask_count(const float* __restrict__ x, u32 m, float tau,
           u32* __restrict__ count) {
    __shared__ u32 kept;
    if (threadIdx.x == 0u) kept = 0u;
    __syncthreads();
    const u64 start = (u64)blockIdx.x * TILE;
    u32 mine = 0u;
    for (u32 j = threadIdx.x; j < TILE; j += blockDim.x) {
        const u64 i = start + j;
        if (i < m) mine += fabsf(x[i]) >= tau ? 1u : 0u;
    }
    if (mine != 0u) atomicAdd(&kept, mine);
    __syncthreads();
    if (threadIdx.x == 0u) count[blockIdx.x] = kept;
}

// One block of SCAN_THREADS threads: base[b] = sum of count[0..b), and
// *total = sum of all counts.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
scan_counts(const u32* __restrict__ count, u32 nb,
            u32* __restrict__ base, u32* __restrict__ total) {
    __shared__ u32 sh[SCAN_THREADS];
    const u32 per = (nb + blockDim.x - 1u) / blockDim.x;
    const u32 lo = umin32(threadIdx.x * per, nb);
    const u32 hi = umin32(lo + per, nb);
    u32 sum = 0u;
    for (u32 b = lo; b < hi; ++b) sum += count[b];
    u32 before = block_exclusive_scan(sum, sh);
    for (u32 b = lo; b < hi; ++b) {
        base[b] = before;
        before += count[b];
    }
    if (threadIdx.x == blockDim.x - 1u) *total = before;
}

// A scan too long for one block: the radix sort's 256 counts a tile (a
// million at 16 Mi elements, which scan_counts, one block reading each
// thread's run of counts, took 2 ms a pass for on an H200). Three launches:
//   scan_span_sums   block g sums count[g*SPAN, (g+1)*SPAN), reading
//                    coalesced, into sums[g]
//   scan_counts      over the sums: each span's start, and the total
//   scan_span_apply  block g scans its span in chunks of SCAN_THREADS
//                    (coalesced), from its start, into base
// Both span kernels take SCAN_THREADS threads a block, one block a span.
#define SPAN (SCAN_THREADS * 16u)

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
scan_span_sums(const u32* __restrict__ count, u32 n, u32* __restrict__ sums) {
    __shared__ u32 sh[SCAN_THREADS];
    const u64 lo = (u64)blockIdx.x * SPAN;
    u32 mine = 0u;
    for (u32 j = threadIdx.x; j < SPAN; j += blockDim.x) {
        const u64 i = lo + j;
        if (i < n) mine += count[i];
    }
    const u32 before = block_exclusive_scan(mine, sh);
    if (threadIdx.x == blockDim.x - 1u) sums[blockIdx.x] = before + mine;
}

extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
scan_span_apply(const u32* __restrict__ count, u32 n, const u32* __restrict__ starts,
                u32* __restrict__ base) {
    __shared__ u32 sh[SCAN_THREADS];
    __shared__ u32 carry;  // where the next chunk starts
    if (threadIdx.x == 0u) carry = starts[blockIdx.x];
    const u64 lo = (u64)blockIdx.x * SPAN;
    for (u32 c = 0u; c < SPAN; c += blockDim.x) {
        const u64 i = lo + c + threadIdx.x;
        const u32 v = i < n ? count[i] : 0u;
        // begins with __syncthreads: the last write of carry is seen
        const u32 before = block_exclusive_scan(v, sh);
        if (i < n) base[i] = carry + before;
        __syncthreads();  // every thread has read carry
        if (threadIdx.x == blockDim.x - 1u) carry += before + v;
    }
}

// Per tile: writes the kept (index, value) pairs in index order. Slots
// past the end hold NaN, which is never kept.
extern "C" __global__ void __launch_bounds__(BLOCK)
mask_scatter(const float* __restrict__ x, u32 m, float tau,
             const u32* __restrict__ base,
             u32* __restrict__ idx, float* __restrict__ vals) {
    __shared__ float tile[TILE + TILE / ITEMS];
    __shared__ u32 sh[BLOCK];
    const u64 start = (u64)blockIdx.x * TILE;
    for (u32 j = threadIdx.x; j < TILE; j += blockDim.x) {
        const u64 i = start + j;
        tile[j + j / ITEMS] = i < m ? x[i] : __uint_as_float(0x7FC00000u);
    }
    __syncthreads();
    const u32 first = threadIdx.x * ITEMS;
    u32 mine = 0u;
    for (u32 j = first; j < first + ITEMS; ++j) mine += fabsf(tile[j + j / ITEMS]) >= tau ? 1u : 0u;
    u32 pos = base[blockIdx.x] + block_exclusive_scan(mine, sh);
    for (u32 j = first; j < first + ITEMS; ++j) {
        const float v = tile[j + j / ITEMS];
        if (fabsf(v) >= tau) {
            idx[pos] = (u32)(start + j);
            vals[pos] = v;
            ++pos;
        }
    }
}

// Device-to-device copy of m floats, 16 bytes per access where it can
// (device allocations are at least 256-byte aligned), for the memory
// bandwidth measurement. Grid-stride loop.
extern "C" __global__ void copy_f32(const float* __restrict__ src, float* __restrict__ dst,
                                    u64 m) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 n4 = m / 4u;
    const float4* s4 = (const float4*)src;
    float4* d4 = (float4*)dst;
    for (u64 i = t; i < n4; i += stride) d4[i] = s4[i];
    for (u64 i = n4 * 4u + t; i < m; i += stride) dst[i] = src[i];
}

// ---------------------------------------------------------------------------
// DCT-DP's threshold by sorting: |v| copied as keys (their bits, see
// magnitude_bits) and sorted ascending by a stable LSD radix sort of four
// 8-bit passes; the threshold is the key at rank floor(n*eta)
// (cpu::threshold_by_sort). Each pass:
//
//   radix_histogram   per tile, the 256 digit counts, digit-major:
//                     counts[d * nb + tile]
//   scan_span_sums, scan_counts, scan_span_apply
//                     exclusive scan of the 256 * nb counts, over blocks
//                     (below): where each tile's elements of each digit
//                     start
//   radix_scatter     per tile, each element to its place, in index order
//                     within its digit (stable)
//
// radix_scatter takes a tile in rounds of BLOCK elements, one a thread:
// each warp finds the lanes that share a thread's digit with eight ballots
// (one a bit), a thread's rank among them is the lanes below it, and the
// warps before it add their counts of the digit (shared memory); a running
// count per digit carries the rounds. BLOCK must be 256, one thread a
// digit.
// ---------------------------------------------------------------------------

#define WARPS (BLOCK / 32u)
#define FULL_MASK 0xFFFFFFFFu

// keys[i] = the bits of |x[i]|. Grid-stride loop.
extern "C" __global__ void magnitudes(const float* __restrict__ x, u32 m, u32* __restrict__ keys) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        keys[i] = magnitude_bits(x[i]);
    }
}

// Per tile: how many of its keys have each value of the digit at `shift`;
// written digit-major, counts[d * nb + tile], so that one exclusive scan
// gives every (digit, tile) its first output position.
extern "C" __global__ void __launch_bounds__(BLOCK)
radix_histogram(const u32* __restrict__ keys, u32 m, u32 shift, u32 nb,
                u32* __restrict__ counts) {
    __shared__ u32 local[256];
    for (u32 i = threadIdx.x; i < 256u; i += blockDim.x) local[i] = 0u;
    __syncthreads();
    const u64 start = (u64)blockIdx.x * TILE;
    for (u32 j = threadIdx.x; j < TILE; j += blockDim.x) {
        const u64 i = start + j;
        if (i < m) atomicAdd(&local[(keys[i] >> shift) & 0xFFu], 1u);
    }
    __syncthreads();
    for (u32 d = threadIdx.x; d < 256u; d += blockDim.x) counts[d * nb + blockIdx.x] = local[d];
}

// Per tile: every key to out[base[d * nb + tile] + its rank among the
// tile's keys of digit d that come before it].
extern "C" __global__ void __launch_bounds__(BLOCK)
radix_scatter(const u32* __restrict__ keys, u32 m, u32 shift, u32 nb,
              const u32* __restrict__ base, u32* __restrict__ out) {
    __shared__ u32 next[256];          // next output position of each digit
    __shared__ u32 warp_count[WARPS][256];
    const u32 t = threadIdx.x;
    const u32 lane = t & 31u;
    const u32 warp = t >> 5;
    next[t] = base[t * nb + blockIdx.x];
    const u64 start = (u64)blockIdx.x * TILE;
    for (u32 round = 0u; round < ITEMS; ++round) {
        const u64 i = start + (u64)round * BLOCK + t;
        const bool valid = i < m;
        const u32 key = valid ? keys[i] : 0u;
        const u32 d = (key >> shift) & 0xFFu;
        for (u32 w = 0u; w < WARPS; ++w) warp_count[w][t] = 0u;
        __syncthreads();
        // the lanes of this warp with a valid key of the same digit
        u32 peers = __ballot_sync(FULL_MASK, valid);
        for (u32 b = 0u; b < 8u; ++b) {
            const u32 bit = (d >> b) & 1u;
            const u32 ones = __ballot_sync(FULL_MASK, bit != 0u);
            peers &= bit ? ones : ~ones;
        }
        const u32 below = __popc(peers & ((1u << lane) - 1u));
        // the lowest of the peers writes the warp's count of the digit
        if (valid && below == 0u) warp_count[warp][d] = __popc(peers);
        __syncthreads();
        if (valid) {
            u32 before = 0u;
            for (u32 w = 0u; w < warp; ++w) before += warp_count[w][d];
            out[next[d] + before + below] = key;
        }
        __syncthreads();
        u32 all = 0u;
        for (u32 w = 0u; w < WARPS; ++w) all += warp_count[w][t];
        next[t] += all;
        __syncthreads();
    }
}

// out[0] = keys[rank]: the threshold's bits once the keys are sorted.
extern "C" __global__ void pick_rank(const u32* __restrict__ keys, u32 rank, u32* __restrict__ out) {
    if (threadIdx.x == 0u && blockIdx.x == 0u) out[0] = keys[rank];
}

// ---------------------------------------------------------------------------
// gTop-k's merge of two sparse sets (cpu::merge): the sum of two sets of
// (index, value) pairs, indices ascending and distinct within a set, and
// of that sum the k pairs of largest magnitude (ties to the lower index),
// in index order.
//
//   merge_place      every pair to its place in the merge of the two
//                    sequences (a's pair first where both hold an index);
//                    a's pair takes the sum, b's copy is flagged dropped
//   flag_count       per tile, the pairs kept
//   scan_counts      where each tile's kept pairs start; the union's size
//   flag_scatter     the union, in index order
//   (the Top-k kernels over the union's values, if it holds more than k)
//   gather_pairs     the winners' (index, value) pairs
// ---------------------------------------------------------------------------

// The first position in sorted `v` of n whose value is >= x (strict:
// > x with `strict`).
__device__ __forceinline__ u32 search(const u32* __restrict__ v, u32 n, u32 x, bool strict) {
    u32 lo = 0u, hi = n;
    while (lo < hi) {
        const u32 mid = lo + (hi - lo) / 2u;
        const bool left = strict ? v[mid] <= x : v[mid] < x;
        if (left) lo = mid + 1u; else hi = mid;
    }
    return lo;
}

// One thread a pair of either set (na + nb threads in all): a[i] goes to
// i + (b's indices below it), b[j] to j + (a's indices up to it), so the
// places are a permutation of 0 .. na + nb and equal indices are adjacent,
// a's first. keep[p] is 0 for b's copy of an index a holds.
extern "C" __global__ void merge_place(const u32* __restrict__ a_idx, const float* __restrict__ a_val, u32 na,
                                       const u32* __restrict__ b_idx, const float* __restrict__ b_val, u32 nb,
                                       u32* __restrict__ m_idx, float* __restrict__ m_val,
                                       u32* __restrict__ keep) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < na) {
        const u32 x = a_idx[t];
        const u32 lb = search(b_idx, nb, x, false);
        const bool both = lb < nb && b_idx[lb] == x;
        const u32 p = (u32)t + lb;
        m_idx[p] = x;
        m_val[p] = both ? a_val[t] + b_val[lb] : a_val[t];
        keep[p] = 1u;
    } else if (t < (u64)na + nb) {
        const u32 j = (u32)(t - na);
        const u32 x = b_idx[j];
        const u32 ub = search(a_idx, na, x, true);
        const bool both = ub > 0u && a_idx[ub - 1u] == x;
        const u32 p = j + ub;
        m_idx[p] = x;
        m_val[p] = b_val[j];
        keep[p] = both ? 0u : 1u;
    }
}

// Per tile: the kept places.
extern "C" __global__ void __launch_bounds__(BLOCK)
flag_count(const u32* __restrict__ keep, u32 n, u32* __restrict__ count) {
    __shared__ u32 kept;
    if (threadIdx.x == 0u) kept = 0u;
    __syncthreads();
    const u64 start = (u64)blockIdx.x * TILE;
    u32 mine = 0u;
    for (u32 j = threadIdx.x; j < TILE; j += blockDim.x) {
        const u64 i = start + j;
        if (i < n) mine += keep[i];
    }
    if (mine != 0u) atomicAdd(&kept, mine);
    __syncthreads();
    if (threadIdx.x == 0u) count[blockIdx.x] = kept;
}

// Per tile: the kept pairs, in order, from base[tile] on. Each thread
// takes ITEMS consecutive places.
extern "C" __global__ void __launch_bounds__(BLOCK)
flag_scatter(const u32* __restrict__ keep, const u32* __restrict__ m_idx,
             const float* __restrict__ m_val, u32 n, const u32* __restrict__ base,
             u32* __restrict__ u_idx, float* __restrict__ u_val) {
    __shared__ u32 sh[BLOCK];
    const u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;
    u32 mine = 0u;
    for (u32 j = 0u; j < ITEMS; ++j) {
        const u64 i = first + j;
        if (i < n) mine += keep[i];
    }
    u32 pos = base[blockIdx.x] + block_exclusive_scan(mine, sh);
    for (u32 j = 0u; j < ITEMS; ++j) {
        const u64 i = first + j;
        if (i < n && keep[i] != 0u) {
            u_idx[pos] = m_idx[i];
            u_val[pos] = m_val[i];
            ++pos;
        }
    }
}

// out[j] = the pair at union place pos[j], for j < k. Grid-stride loop.
extern "C" __global__ void gather_pairs(const u32* __restrict__ pos, u32 k,
                                        const u32* __restrict__ u_idx, const float* __restrict__ u_val,
                                        u32* __restrict__ out_idx, float* __restrict__ out_val) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < k; j += stride) {
        const u32 p = pos[j];
        out_idx[j] = u_idx[p];
        out_val[j] = u_val[p];
    }
}
