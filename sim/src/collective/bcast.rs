//! Open MPI's broadcasts as member-index arithmetic: which member sends
//! what to whom in which step, for a broadcast from member 0 of a group
//! of `s` members (Open MPI shifts every rank by the root; dtsim's root
//! is member 0).
//!
//! Read off Open MPI's `ompi/mca/coll/base/coll_base_topo.c` (the trees)
//! and `coll_base_bcast.c` (the algorithms), 4.1 to 5.0; coll tuned's
//! fixed decision in 4.1.4 (`ompi_coll_tuned_bcast_intra_dec_fixed`,
//! checked against the compiled library) passes them no segment size, so
//! they run unsegmented unless the algorithm is forced with
//! `coll_tuned_bcast_algorithm_segmentsize`.
//!
//! * Trees through `ompi_coll_base_bcast_intra_generic` (binomial,
//!   k-nomial, binary, chains; and `basic_linear`, which is the same as a
//!   tree of one level): a member posts a send of a segment to every child
//!   at once and waits for them all before the next segment
//!   ([`BcastTree`]; [`super::program::Phase::TreeBcastAll`]).
//! * The split binary tree (`split_bintree`): each half of the buffer goes
//!   down one subtree of the binary tree, a member sending to one child
//!   after the other (blocking sends), then each member swaps halves with
//!   its pair in the other subtree ([`split_send`]).
//! * Scatter and allgather (`scatter_allgather`, `scatter_allgather_ring`):
//!   a binomial scatter of the buffer's blocks ([`scatter_send`]), then a
//!   recursive-doubling allgather whose missing partners, on a count that
//!   is not a power of two, are served by recursive halving
//!   ([`doubling_send`]), or a ring.

/// The tree a broadcast from member 0 goes down, as Open MPI builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BcastTree {
    /// `build_bmtree`: member i's children are i + 2^j for every 2^j > i
    /// (below s); member i is at depth popcount(i).
    Binomial,
    /// `build_kmtree` of radix k ≥ 2: member i's children are i + r·k^j
    /// for r in 1..k and every k^j below i's lowest nonzero base-k digit
    /// (every k^j below s for the root); member i is at the depth of its
    /// nonzero base-k digits.
    Knomial(u32),
    /// `build_tree` of fanout k ≥ 2, level by level: member i of level L
    /// (the levels hold 1, k, k², … members in order) has children
    /// i + k^L·(r + 1) for r < k.
    Kary(u32),
    /// `build_chain` of `fanout` chains (as Open MPI takes it: at least
    /// 1, at most its `MAXTREEFANOUT`, 32, and s − 1): the members
    /// below the root in that many runs of consecutive members, the first
    /// (s − 1) mod fanout runs one longer; the root sends to each run's
    /// head, and a member to the next of its run.
    Chain(u32),
    /// `basic_linear`: the root sends to every other member.
    Flat,
}

impl BcastTree {
    /// The radix or fanout of a k-nomial or k-ary tree, which must be at
    /// least 2 (a tree of radix 1 would never branch; Open MPI refuses
    /// it).
    fn k(k: u32) -> u32 {
        assert!(k >= 2, "a k-nomial or k-ary tree needs k ≥ 2, not {k}");
        k
    }

    /// The steps before member `idx` of `s` has the (first segment of
    /// the) buffer: its depth, 0 for the root.
    ///
    /// # Panics
    /// For a [`BcastTree::Knomial`] or [`BcastTree::Kary`] of k < 2, as
    /// [`BcastTree::children`] and [`BcastTree::height`] do.
    pub fn depth(self, s: u32, idx: u32) -> u32 {
        match self {
            _ if idx == 0 => 0,
            BcastTree::Binomial => idx.count_ones(),
            BcastTree::Knomial(k) => {
                let k = Self::k(k);
                let (mut i, mut d) = (idx, 0);
                while i > 0 {
                    d += (i % k != 0) as u32;
                    i /= k;
                }
                d
            }
            BcastTree::Kary(k) => kary_level(Self::k(k), idx),
            BcastTree::Chain(f) => {
                let (head, _) = chain_run(s, f, idx);
                idx - head + 1
            }
            BcastTree::Flat => 1,
        }
    }

    /// Calls `each` with every child of member `idx` of `s`.
    pub fn children(self, s: u32, idx: u32, mut each: impl FnMut(u32)) {
        let s64 = s as u64;
        let mut push = |c: u64| {
            if c < s64 {
                each(c as u32)
            }
        };
        match self {
            BcastTree::Binomial => {
                let first = 32 - idx.leading_zeros();
                for j in first..32 {
                    let c = idx as u64 + (1u64 << j);
                    if c >= s64 {
                        break;
                    }
                    push(c);
                }
            }
            BcastTree::Knomial(k) => {
                let k = Self::k(k) as u64;
                // the lowest nonzero digit's place (past s for the root)
                let mut mask = 1u64;
                while mask < s64 && (idx as u64).is_multiple_of(k * mask) {
                    mask *= k;
                }
                if idx == 0 {
                    while mask < s64 {
                        mask *= k;
                    }
                }
                mask /= k;
                while mask > 0 {
                    // a radix past the members stops at the last
                    for r in 1..k {
                        let c = idx as u64 + mask * r;
                        if c >= s64 {
                            break;
                        }
                        push(c);
                    }
                    mask /= k;
                }
            }
            BcastTree::Kary(k) => {
                let k = Self::k(k);
                let delta = (k as u64).pow(kary_level(k, idx));
                for r in 1..=k as u64 {
                    push(idx as u64 + delta * r);
                }
            }
            BcastTree::Chain(f) => {
                if s <= 1 {
                    return;
                }
                if idx == 0 {
                    let (f, len, mark) = chain_shape(s, f);
                    for c in 0..f {
                        push(1 + c as u64 * len as u64 - c.saturating_sub(mark) as u64);
                    }
                } else {
                    let (head, len) = chain_run(s, f, idx);
                    if idx + 1 < head + len {
                        push(idx as u64 + 1);
                    }
                }
            }
            BcastTree::Flat => {
                if idx == 0 {
                    for c in 1..s64 {
                        push(c);
                    }
                }
            }
        }
    }

    /// The largest depth of a member of `s`: the steps of the
    /// unsegmented broadcast.
    pub fn height(self, s: u32) -> u32 {
        if s <= 1 {
            return 0;
        }
        match self {
            // the most nonzero digits below s: all of s − 1's digits where
            // the number of ones of that length fits, one fewer otherwise
            BcastTree::Binomial | BcastTree::Knomial(_) => {
                let k = match self {
                    BcastTree::Knomial(k) => Self::k(k) as u64,
                    _ => 2,
                };
                let top = (s - 1) as u64;
                let (mut digits, mut p) = (0u32, 1u64);
                while p <= top {
                    digits += 1;
                    p *= k;
                }
                let ones = (p - 1) / (k - 1);
                if top >= ones { digits } else { digits - 1 }
            }
            BcastTree::Kary(k) => kary_level(Self::k(k), s - 1),
            BcastTree::Chain(f) => chain_shape(s, f).1,
            BcastTree::Flat => 1,
        }
    }
}

/// Open MPI's `MAXTREEFANOUT` (`coll_base_topo.h`): the most chains
/// `build_chain` makes.
const MAX_TREE_FANOUT: u32 = 32;

/// Open MPI's `calculate_level`: the level of member `idx` in a k-ary
/// tree filled level by level (level L holds k^L members).
fn kary_level(k: u32, idx: u32) -> u32 {
    let (mut level, mut filled, mut width) = (0u32, 1u64, 1u64);
    while filled <= idx as u64 {
        level += 1;
        width *= k as u64;
        filled += width;
    }
    level
}

/// `build_chain`'s shape on `s` members: the chains (fanout, forced into
/// 1..=32 and at most s − 1, as Open MPI forces it), the longest chain's
/// length, and how many chains have that length (`mark`: all of them
/// when they are equal, stored as fanout + 1 as Open MPI does).
fn chain_shape(s: u32, fanout: u32) -> (u32, u32, u32) {
    let f = fanout.clamp(1, MAX_TREE_FANOUT).min((s - 1).max(1));
    let len = (s - 1).div_ceil(f);
    let mark = if !(s - 1).is_multiple_of(f) {
        (s - 1) % f
    } else {
        f + 1
    };
    (f, len, mark)
}

/// The chains Open MPI's chain builder makes on `s` ≥ 2 members for a
/// fanout of `fanout`: at least 1, at most its `MAXTREEFANOUT` (32) and
/// s − 1; 0 on fewer members.
pub fn chains(s: u32, fanout: u32) -> u32 {
    if s < 2 { 0 } else { chain_shape(s, fanout).0 }
}

/// The head and length of the chain member `idx` ≥ 1 of `s` is on.
fn chain_run(s: u32, fanout: u32, idx: u32) -> (u32, u32) {
    let (_, len, mark) = chain_shape(s, fanout);
    if ((idx - 1) as u64) < mark as u64 * len as u64 {
        (1 + (idx - 1) / len * len, len)
    } else {
        let column = mark + (idx - 1 - mark * len) / (len - 1);
        (mark * len + 1 + (column - mark) * (len - 1), len - 1)
    }
}

/// Steps of the split binary tree's descent on `s` members: member v
/// (level L, at position q of its level) has its half after L + popcount(q)
/// steps, since a member sends to its second child a step after its
/// first and the second child's place in its level is its parent's plus
/// 2^(L−1).
pub fn split_descent(s: u32) -> u32 {
    if s <= 1 {
        return 0;
    }
    let last = kary_level(2, s - 1);
    // full levels above the last reach 2L; the last level's positions run
    // to s − 1 − (2^L − 1)
    let full = 2 * last.saturating_sub(1);
    let q_max = s - 1 - ((1u32 << last) - 1);
    full.max(last + BcastTree::Binomial.height(q_max + 1))
}

/// The step in which member `v` ≥ 1 of the split binary tree receives its
/// half: L + popcount(q) − 1.
fn split_arrival(v: u32) -> u32 {
    let level = kary_level(2, v);
    level + (v + 1 - (1u32 << level)).count_ones() - 1
}

/// Steps of the split binary tree's descent on `s` members in
/// `segments` segments a half: [`split_descent`], and two more for each
/// segment after the first (a member sends each segment to its first
/// child, then to its second, a step each).
pub fn split_steps(s: u32, segments: u32) -> u32 {
    if s <= 1 {
        return 0;
    }
    split_descent(s) + 2 * (segments.max(1) - 1)
}

/// Member `idx`'s sends in step `k` of Open MPI's split binary tree on
/// `s` members (`ompi_coll_base_bcast_intra_split_bintree`), each half in
/// `segments` segments (1: unsegmented): `each(receiver, swap)`, `swap`
/// for a whole half of the last step, else a segment. Steps before
/// [`split_steps`] go down the binary tree: member v sends segment j to
/// its first child in step a(v) + 1 + 2j and to its second in the next,
/// a(v) the step it receives segment 0 in (the root: a(0) = −1, the first
/// half to member 1, the second to member 2), so that each segment
/// arrives two steps after the last, as its parent sends it (blocking
/// sends, one child at a time; a member with one child, or the root of
/// two members, idles every other step, which costs nothing); in the last
/// step the left subtree's members (odd) swap halves with the next
/// member, and on an even count the root sends the second half to the
/// last member, which has no pair.
pub fn split_send(s: u32, idx: u32, k: u32, segments: u32, mut each: impl FnMut(u32, bool)) {
    if s <= 1 {
        return;
    }
    let descent = split_steps(s, segments);
    if k < descent {
        let start = if idx == 0 { 0 } else { split_arrival(idx) + 1 };
        if k >= start {
            let (j, r) = ((k - start) / 2, (k - start) % 2);
            let delta = 1u64 << kary_level(2, idx);
            let child = idx as u64 + delta * (r as u64 + 1);
            if j < segments.max(1) && child < s as u64 {
                each(child as u32, false);
            }
        }
    } else if k == descent {
        if idx == 0 {
            if s.is_multiple_of(2) {
                each(s - 1, true);
            }
        } else if idx % 2 == 1 {
            if idx + 1 < s {
                each(idx + 1, true);
            }
        } else {
            each(idx - 1, true);
        }
    }
}

/// Messages member `idx` receives in step `k` of the split binary tree
/// in `segments` segments a half ([`split_send`]).
pub fn split_recvs(s: u32, idx: u32, k: u32, segments: u32) -> u32 {
    if s <= 1 || idx == 0 {
        return 0;
    }
    let descent = split_steps(s, segments);
    (if k < descent {
        let a = split_arrival(idx);
        k >= a && (k - a).is_multiple_of(2) && (k - a) / 2 < segments.max(1)
    } else {
        k == descent
    }) as u32
}

/// Steps of the binomial scatter on `s` members: ⌈log2 s⌉.
pub fn scatter_steps(s: u32) -> u32 {
    if s <= 1 {
        0
    } else {
        32 - (s - 1).leading_zeros()
    }
}

/// Member `idx`'s send in step `k` of the binomial scatter of Open MPI's
/// scatter-allgather broadcasts: (receiver, blocks). In step k the mask is
/// 2^(⌈log2 s⌉ − 1 − k); a member that holds blocks [idx, idx + 2·mask)
/// (a multiple of 2·mask) sends the upper half of them, those below s, to
/// idx + mask, one blocking send a step.
pub fn scatter_send(s: u32, idx: u32, k: u32) -> Option<(u32, u32)> {
    let steps = scatter_steps(s);
    if k >= steps {
        return None;
    }
    let mask = 1u32 << (steps - 1 - k);
    (idx.is_multiple_of(2 * mask) && idx + mask < s)
        .then(|| (idx + mask, (idx + 2 * mask).min(s) - idx - mask))
}

/// Whether member `idx` receives in step `k` of the binomial scatter.
pub fn scatter_recv(s: u32, idx: u32, k: u32) -> bool {
    let steps = scatter_steps(s);
    k < steps && idx > 0 && idx & (idx.wrapping_neg()) == 1u32 << (steps - 1 - k)
}

/// Steps of the scatter-allgather broadcast's recursive doubling on `s`
/// members: per mask 2^i (i < ⌈log2 s⌉) an exchange and i steps of
/// recursive halving that serve members whose partner does not exist (no
/// member sends in them on a power of two).
pub fn doubling_steps(s: u32) -> u32 {
    let l = scatter_steps(s);
    l + l * l.saturating_sub(1) / 2
}

/// The mask and the halving mask (0: the exchange) of step `k` of
/// [`doubling_steps`].
fn doubling_step(k: u32) -> (u32, u32) {
    let (mut i, mut left) = (0u32, k);
    while left > i {
        left -= i + 1;
        i += 1;
    }
    let halving = if left == 0 { 0 } else { 1u32 << (i - left) };
    (1u32 << i, halving)
}

/// Member `idx`'s send in step `k` of the allgather of Open MPI's
/// scatter-allgather broadcast (`ompi_coll_base_bcast_intra_scatter_allgather`):
/// (receiver, blocks). At mask m a member swaps with member idx ^ m (when
/// there is one) the blocks of its group of m, those below s; where the
/// other group has members past s, the members of a group that got its
/// blocks pass them on by recursive halving to those that did not.
pub fn doubling_send(s: u32, idx: u32, k: u32) -> Option<(u32, u32)> {
    let (m, half) = doubling_step(k);
    let root = idx & !(m - 1);
    if half == 0 {
        let to = idx ^ m;
        return (to < s).then(|| (to, (root + m).min(s) - root));
    }
    let (to, having) = halving(s, idx, m, half)?;
    (to > idx && idx < having && to >= having).then(|| (to, s - root - m))
}

/// Whether member `idx` receives in step `k` of [`doubling_send`].
pub fn doubling_recv(s: u32, idx: u32, k: u32) -> bool {
    let (m, half) = doubling_step(k);
    if half == 0 {
        return idx ^ m < s;
    }
    halving(s, idx, m, half)
        .is_some_and(|(from, having)| from < idx && from < having && idx >= having)
}

/// The partner of member `idx` in the halving step of mask `m` and
/// halving mask `half`, and the index below which members of its
/// 2·`half` block hold the other group's blocks (Open MPI's
/// `tree_root + nprocs_alldata`); `None` where its group's partner group
/// lies wholly inside s (nobody needs serving) or wholly past it (there
/// is nothing to serve).
fn halving(s: u32, idx: u32, m: u32, half: u32) -> Option<(u32, u32)> {
    let root = idx & !(m - 1);
    let other = root ^ m;
    if other + m <= s || root + m >= s || other < root {
        return None;
    }
    // members of the group that swapped with the partial partner group
    let alldata = s - root - m;
    let block = idx & !(2 * half - 1);
    Some((idx ^ half, block + alldata))
}
