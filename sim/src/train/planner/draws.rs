//! The token model's sizes, iteration by iteration, for the sparse
//! planner (`super::sparse`).
//!
//! A table under the token model ([`crate::workload::Rows::Tokens`]) has
//! each GPU draw its batch's words every iteration
//! ([`crate::workload::tokens::TokenModel::tokens`], keyed by the
//! scenario's seed, the layer, the GPU and the iteration). What travels
//! is a row per token unless something coalesces it: frameworks send an
//! embedding's gradient uncoalesced (TensorFlow's `IndexedSlices`, one
//! row per looked-up id; PyTorch's sparse gradients) and gather a row per
//! id, so Parallax's and EmbRace's densities are tokens over rows (their
//! Table 1 and §4.1.2 figures are the batches' token counts over the
//! vocabulary: docs/models.md §6.2). Coalescing happens where a method
//! sums rows: a machine's accumulator under Parallax's local aggregation
//! (its push carries the union of its GPUs' rows), and EmbRace's vertical
//! scheduling. From the draws this module sizes, for the parameter
//! servers, the rows each worker exchanges with each server and the
//! elements each partition aggregates, and for vertical scheduling each
//! GPU's coalesced and prior rows. GPU (rank) g draws as GPU g; the draws
//! do not depend on the method.
//!
//! Rows go to partitions as TensorFlow's `embedding_lookup` sends them by
//! default (`partition_strategy = "mod"`): row r to partition r mod P,
//! and partition k to server k mod S (round-robin, as
//! `super::sparse` places them), server j on machine j mod M. With words
//! numbered by frequency (the token model's row k is the (k+1)-th most
//! frequent word) "mod" spreads the frequent words over the partitions.

use super::super::TrainConfig;
use crate::workload::tokens::{RowBitmap, TokenModel, distinct_rows};
use rayon::prelude::*;

/// Each iteration of a parameter-server table under the token model,
/// sized by [`ps_iteration`] from every GPU's draws, for iterations
/// `0..warmup + measured`, and mapped by `f`.
///
/// The draws are taken a machine at a time and sized as they come, so
/// that a worker thread holds one machine's tokens at a time, not every
/// GPU's (until 2026-11-29 it held an iteration's: 8 bytes a token a GPU,
/// 0.9 GB for the LM's 28,672 tokens on 2,048 GPUs, twice over on two
/// threads). The iterations, and each iteration's machines, are drawn in
/// parallel on the caller's rayon pool (a sweep's `--jobs`, else every
/// core): each GPU's stream is keyed by its own (seed, table, GPU,
/// iteration), the sizes are whole counts summed in any order, and the
/// results come back in order, so they are the same on any number of
/// threads and the same as sizing all the draws at once.
#[allow(clippy::too_many_arguments)]
pub(super) fn each_ps_iteration<T: Send>(
    cfg: &TrainConfig,
    table: u32,
    tm: &TokenModel,
    vocab: u64,
    dim: u64,
    parts: u32,
    servers: u32,
    local: bool,
    f: impl Fn(PsIteration) -> T + Sync,
) -> Vec<T> {
    let gpn = cfg.cluster.gpus_per_node.max(1);
    let iters = (cfg.warmup_iterations + cfg.iterations).max(1);
    (0..iters)
        .into_par_iter()
        .map(|it| {
            let machines: Vec<PsIteration> = (0..cfg.cluster.nodes)
                .into_par_iter()
                .map(|m| {
                    let tokens: Vec<Vec<u64>> = (m * gpn..(m + 1) * gpn)
                        .map(|g| tm.tokens(cfg.seed, table, g, it))
                        .collect();
                    ps_iteration(&tokens, vocab, dim, parts, servers, gpn, local)
                })
                .collect();
            f(PsIteration::concat(machines, parts))
        })
        .collect()
}

/// Each iteration's distinct rows per GPU beside the next iteration's
/// (EmbRace's prefetched next batch), mapped by `f`: the iterations in
/// turn (each draw serves two), each iteration's GPUs drawn in parallel
/// on the caller's pool, as in [`each_ps_iteration`].
pub(super) fn each_iteration_and_next<T>(
    cfg: &TrainConfig,
    table: u32,
    tm: &TokenModel,
    mut f: impl FnMut(&[Vec<u64>], &[Vec<u64>]) -> T,
) -> Vec<T> {
    let gpus = cfg.cluster.gpus();
    let iters = (cfg.warmup_iterations + cfg.iterations).max(1);
    let draw = |it: u32| -> Vec<Vec<u64>> {
        (0..gpus)
            .into_par_iter()
            .map(|g| tm.rows(cfg.seed, table, g, it))
            .collect()
    };
    let mut this = draw(0);
    let mut out = Vec::with_capacity(iters as usize);
    for it in 0..iters {
        let next = draw(it + 1);
        out.push(f(&this, &next));
        this = next;
    }
    out
}

/// EmbRace's Algorithm 1 (lines 3–5) for every GPU: of its distinct rows
/// `this[g]`, how many the next batch of any GPU touches (`i_prior` = D_u
/// ∩ D_next, D_next gathered over the GPUs); the rest are delayed. Every
/// row is below `vocab`. D_next is a bitmap of the vocabulary where that
/// takes no more words than the next batches have rows (since 2026-11-29:
/// gathering and sorting every GPU's rows was half of an analytical run
/// of the LM with vertical scheduling on 256 GPUs), else their sorted
/// union; the same counts either way.
pub(super) fn prior_rows(this: &[Vec<u64>], next: &[Vec<u64>], vocab: u64) -> Vec<u64> {
    let listed: u64 = next.iter().map(|r| r.len() as u64).sum();
    if vocab.div_ceil(64) <= listed {
        let mut wanted = RowBitmap::new(vocab);
        for &r in next.iter().flatten() {
            wanted.insert(r);
        }
        return this
            .iter()
            .map(|rows| rows.iter().filter(|&&r| wanted.contains(r)).count() as u64)
            .collect();
    }
    let wanted = union(next);
    this.iter()
        .map(|rows| {
            rows.iter()
                .filter(|r| wanted.binary_search(r).is_ok())
                .count() as u64
        })
        .collect()
}

/// The distinct rows of several sorted row lists together, sorted.
pub(super) fn union(lists: &[Vec<u64>]) -> Vec<u64> {
    let mut all: Vec<u64> = lists.iter().flatten().copied().collect();
    // stable sort: it merges the sorted runs rather than starting over
    all.sort();
    all.dedup();
    all
}

/// The distinct rows of several GPUs' tokens together, sorted.
fn union_of_tokens(tokens: &[Vec<u64>], vocab: u64) -> Vec<u64> {
    distinct_rows(tokens.iter().flatten().copied().collect(), vocab)
}

/// What one iteration of a parameter-server table amounts to.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PsIteration {
    /// Rows worker w pushes to server j, at `w·servers + j`: a GPU's
    /// tokens, or with local aggregation its machine's distinct rows.
    pub rows: Vec<u64>,
    /// Rows GPU g pulls from server j, at `g·servers + j`: a row per token
    /// (each GPU's lookup gathers its ids, aggregated pushes or not).
    pub gpu_rows: Vec<u64>,
    /// Elements pushed into each partition (rows × dim, over the workers).
    pub partition_elements: Vec<u64>,
    /// With local aggregation: elements each machine's accumulator of
    /// each partition sums (its GPUs' tokens × dim), at `node·P + k`.
    pub local_elements: Vec<u64>,
}

impl PsIteration {
    /// The iteration of machines' parts in machine order: their workers'
    /// and GPUs' rows one after the other, their partitions' elements
    /// summed.
    fn concat(machines: Vec<PsIteration>, parts: u32) -> PsIteration {
        let mut out = PsIteration {
            rows: Vec::new(),
            gpu_rows: Vec::new(),
            partition_elements: vec![0; parts as usize],
            local_elements: Vec::new(),
        };
        for m in machines {
            out.rows.extend(m.rows);
            out.gpu_rows.extend(m.gpu_rows);
            for (a, b) in out.partition_elements.iter_mut().zip(m.partition_elements) {
                *a += b;
            }
            out.local_elements.extend(m.local_elements);
        }
        out
    }
}

/// Sizes one iteration of a parameter-server table of `vocab` rows of
/// `dim` columns split into `parts` partitions on `servers` servers, from
/// each GPU's `rows` (its tokens); the workers are the GPUs, or with
/// `local` each machine of `gpus_per_node` GPUs (pushing the union of its
/// GPUs' rows).
#[allow(clippy::too_many_arguments)]
pub(super) fn ps_iteration(
    rows: &[Vec<u64>],
    vocab: u64,
    dim: u64,
    parts: u32,
    servers: u32,
    gpus_per_node: u32,
    local: bool,
) -> PsIteration {
    let (p, s) = (parts as u64, servers as usize);
    let workers: Vec<Vec<u64>> = if local {
        rows.chunks(gpus_per_node.max(1) as usize)
            .map(|m| union_of_tokens(m, vocab))
            .collect()
    } else {
        rows.to_vec()
    };
    // row r: partition r mod P, on server (r mod P) mod S
    let server_of: Vec<usize> = (0..p).map(|k| (k % servers as u64) as usize).collect();
    let mut gpu_rows = vec![0; rows.len() * s];
    let mut out = PsIteration {
        rows: vec![0; workers.len() * s],
        gpu_rows: Vec::new(),
        partition_elements: vec![0; parts as usize],
        local_elements: Vec::new(),
    };
    if local {
        out.local_elements = vec![0; workers.len() * parts as usize];
    }
    let per_node = gpus_per_node.max(1) as usize;
    for (g, list) in rows.iter().enumerate() {
        for &r in list {
            let k = (r % p) as usize;
            gpu_rows[g * s + server_of[k]] += 1;
            if local {
                out.local_elements[(g / per_node) * parts as usize + k] += dim;
            }
        }
    }
    out.gpu_rows = gpu_rows;
    for (w, list) in workers.iter().enumerate() {
        for &r in list {
            let k = (r % p) as usize;
            out.rows[w * s + server_of[k]] += 1;
            out.partition_elements[k] += dim;
        }
    }
    out
}

/// Spreads per-partition work over hosts and runs every host's i-th
/// largest piece as CPU task i: the duration of task i is the largest
/// i-th piece over the hosts (the representative host does as much as the
/// busiest; the pull waits for the last). `pieces` gives each host's
/// pieces; the result has as many tasks as the host with the most.
pub(super) fn envelope(pieces: &[Vec<u64>]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for host in pieces {
        let mut sorted = host.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        if out.len() < sorted.len() {
            out.resize(sorted.len(), 0);
        }
        for (i, v) in sorted.into_iter().enumerate() {
            out[i] = out[i].max(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows go to partition r mod P and server (r mod P) mod S; with local
    /// aggregation a machine pushes its GPUs' union, while its
    /// accumulators sum every GPU's rows.
    #[test]
    fn ps_rows_follow_the_mod_strategy() {
        // 2 machines × 2 GPUs, 4 partitions on 2 servers, 3 columns
        let rows = vec![vec![0, 1, 5], vec![1, 2], vec![3], vec![3, 4, 7]];
        let naive = ps_iteration(&rows, 8, 3, 4, 2, 2, false);
        // GPU 0: rows 0 (k0, s0), 1 (k1, s1), 5 (k1, s1)
        assert_eq!(naive.rows, [1, 2, 1, 1, 0, 1, 1, 2]);
        assert_eq!(naive.gpu_rows, naive.rows);
        // partition k: rows ≡ k mod 4 over the GPUs, × 3 columns
        assert_eq!(naive.partition_elements, [2 * 3, 3 * 3, 3, 3 * 3]);
        assert!(naive.local_elements.is_empty());
        let local = ps_iteration(&rows, 8, 3, 4, 2, 2, true);
        // machine 0 pushes {0, 1, 2, 5}, machine 1 {3, 4, 7}
        assert_eq!(local.rows, [2, 2, 1, 2]);
        // each GPU still pulls its own rows
        assert_eq!(local.gpu_rows, naive.rows);
        assert_eq!(local.partition_elements, [2 * 3, 2 * 3, 3, 2 * 3]);
        // machine 0's accumulators: k0 {0}, k1 {1, 5, 1}, k2 {2}
        assert_eq!(local.local_elements, [3, 9, 3, 0, 3, 0, 0, 9]);
        // tokens travel uncoalesced: GPU 0 drawing word 5 twice pushes and
        // pulls it twice, while its machine pushes it once
        let twice = vec![vec![0, 5, 5], vec![1, 2], vec![3], vec![3, 4, 7]];
        let naive = ps_iteration(&twice, 8, 3, 4, 2, 2, false);
        assert_eq!(naive.rows[..2], [1, 2]);
        assert_eq!(naive.partition_elements[1], 3 * 3);
        let local = ps_iteration(&twice, 8, 3, 4, 2, 2, true);
        assert_eq!(local.rows[..2], [2, 2]);
        assert_eq!(local.gpu_rows[..2], [1, 2]);
    }

    /// Drawn and sized a machine at a time, an iteration is what sizing
    /// every GPU's draws at once gives (3 machines of 2 GPUs, 3
    /// iterations, partitions that do not split evenly over the servers,
    /// with and without local aggregation).
    #[test]
    fn machine_by_machine_is_all_at_once() {
        let text = "warmup_iterations = 1\niterations = 2\n[cluster]\nnodes = 3\ngpus_per_node = 2\nnetwork = \"ib-edr-100g\"\n[model]\nbatch_per_gpu = 8\n[[model.layers]]\nname = \"emb\"\nparams = 0\nforward = \"1ms\"\nbackward = \"1ms\"\n[model.layers.embedding]\nvocab = 5000\ndim = 4\ntokens_per_batch = 700\nzipf = 1.0\n[strategy]\nsparse = \"ps\"\n";
        let cfg = crate::scenario::load_str(text, "f.toml", "f").unwrap()[0]
            .config
            .clone();
        let tm = TokenModel {
            vocab: 5000,
            tokens: 700,
            zipf: 1.0,
            padding: 0,
        };
        for local in [false, true] {
            let streamed = each_ps_iteration(&cfg, 0, &tm, 5000, 4, 7, 3, local, |it| it);
            assert_eq!(streamed.len(), 3);
            for (it, got) in streamed.iter().enumerate() {
                let all: Vec<Vec<u64>> = (0..6)
                    .map(|g| tm.tokens(cfg.seed, 0, g, it as u32))
                    .collect();
                let want = ps_iteration(&all, 5000, 4, 7, 3, 2, local);
                assert_eq!(*got, want, "iteration {it}, local {local}");
            }
        }
    }

    /// A row is prior when any GPU's next batch touches it.
    #[test]
    fn prior_rows_are_those_the_next_batches_touch() {
        let this = vec![vec![1, 4, 9], vec![2, 3]];
        let next = vec![vec![9, 10], vec![1, 3]];
        // GPU 0: 1 and 9 are wanted again; GPU 1: 3
        // by the sorted union (a vocabulary of 1,000 rows is 16 words,
        // more than the 4 rows listed) and by a bitmap (64 rows, 1 word)
        for vocab in [1000, 64] {
            assert_eq!(prior_rows(&this, &next, vocab), [2, 1]);
            assert_eq!(prior_rows(&this, &[vec![], vec![]], vocab), [0, 0]);
        }
        // the two ways agree on drawn batches (a bitmap of 8 words here,
        // the union of 16 lists of about 40 rows past 64·8)
        let tm = TokenModel {
            vocab: 500,
            tokens: 60,
            zipf: 1.0,
            padding: 0,
        };
        let draw = |it| -> Vec<Vec<u64>> { (0..16).map(|g| tm.rows(7, 0, g, it)).collect() };
        let (this, next) = (draw(0), draw(1));
        let by_bitmap = prior_rows(&this, &next, 500);
        let wanted = union(&next);
        let by_union: Vec<u64> = this
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter(|r| wanted.binary_search(r).is_ok())
                    .count() as u64
            })
            .collect();
        assert_eq!(by_bitmap, by_union);
        assert!(by_bitmap.iter().any(|&p| p > 0));
    }

    #[test]
    fn the_envelope_takes_each_rank_of_the_busiest_host() {
        assert_eq!(envelope(&[vec![1, 5, 3], vec![4, 4]]), [5, 4, 1]);
        assert!(envelope(&[]).is_empty());
    }
}
