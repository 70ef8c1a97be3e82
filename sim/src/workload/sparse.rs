//! Sparse variables: the embedding part of a layer, and what one
//! iteration's rows of it amount to.
//!
//! An embedding table has `vocab` rows of `dim` values. An iteration reads
//! (forward) and updates (backward) only the rows of the words its batch
//! holds, so its gradient is sparse: a list of rows, each with its values
//! and its row index (TensorFlow's `IndexedSlices`, PyTorch's sparse COO
//! gradient; Parallax §2.2). How many rows that is decides how sparse
//! methods compare (Parallax §3.1, EmbRace Table 2).
//!
//! With a fixed density α ([`Rows::Density`]) every GPU's gradient holds
//! ⌊α·vocab⌉ distinct rows (EmbRace's α, "the average density of
//! embedding gradients", §4.1.2). Where rows of several GPUs meet (a
//! machine's local aggregation, a parameter server's shard) the simulator
//! would need how many of them are distinct; with only α given, each
//! GPU's rows as an independent uniform draw, k GPUs together touch
//! vocab·(1 − (1 − α)^k) rows in expectation ([`Embedding::union_rows`]).
//! That is an assumption (real words are Zipf-distributed, so GPUs share
//! more rows than uniform draws do, and the union is smaller), and no
//! method uses it: under the density model the sparse PS sends every
//! GPU's own rows (see `sim::train::planner::sparse`).
//!
//! With the token model ([`Rows::Tokens`], `sim::workload::tokens`) each
//! GPU draws its batch's words from a Zipf law every iteration; the
//! planner sizes every sparse message of every iteration from the draws
//! (each GPU's distinct rows, a machine's union for local aggregation,
//! the rows each server holds), so sizes differ per GPU and per
//! iteration. [`Embedding::rows_per_gpu`] is then an upper bound of a
//! GPU's distinct rows (every word a new row, and the padding row), and
//! [`Embedding::lookups_per_gpu`] its rows as sent uncoalesced, a row a
//! token, which validation sizes the messages by.
//!
//! **Bytes.** A sparse gradient travels as its values (`dim` elements of
//! the gradient precision per row) plus one 4-byte row index per row
//! ([`INDEX_BYTES`]; TensorFlow and PyTorch index embedding rows with
//! 32- or 64-bit integers; we count 32, as Horovod's sparse AllGather of
//! an `int32` index tensor sends). Parallax's Table 3 counts values only;
//! the tests check its byte counts on the values.

use super::Precision;

/// Bytes of one row index in a sparse gradient.
pub const INDEX_BYTES: u64 = 4;

/// How an iteration picks the rows it touches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rows {
    /// A fixed fraction α ∈ (0, 1] of the rows, per GPU and iteration
    /// (distinct rows, after coalescing duplicates).
    Density(f64),
    /// Each GPU's batch holds `tokens` tokens per iteration: `padding` of
    /// them one padding row, the rest words drawn from a Zipf law of
    /// exponent `zipf` over the other rows (`sim::workload::tokens`).
    Tokens {
        /// Tokens per GPU per iteration, padding included.
        tokens: u64,
        /// Zipf exponent s > 0.
        zipf: f64,
        /// Of `tokens`, those on the table's padding row (the positions a
        /// batch padded to one length fills; 0: none).
        padding: u64,
    },
}

/// Where a table, its lookups and its update live
/// (`model.embedding_placement`, or `placement` in
/// `[model.layers.embedding]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TablePlacement {
    /// In each GPU's memory (the default): the lookup and the update run
    /// on the GPU and are folded into the layer's forward and backward
    /// times.
    #[default]
    Gpu,
    /// In host memory, as EmbRace §5.3 had to place the LM's tables on its
    /// 8 GB RTX 2080s: the lookup and the update run on the host's CPU,
    /// and the looked-up rows and their gradients cross the GPU's PCIe
    /// link (`sim::train::planner::sparse`, docs/research/host-tables.md).
    Host,
}

impl crate::names::Named for TablePlacement {
    const ALL: &'static [TablePlacement] = &[TablePlacement::Gpu, TablePlacement::Host];
    const WHAT: &'static str = "table placement";
    fn name(self) -> &'static str {
        match self {
            TablePlacement::Gpu => "gpu",
            TablePlacement::Host => "host",
        }
    }
}

/// The embedding (sparse) part of a layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Rows of the table.
    pub vocab: u64,
    /// Values per row.
    pub dim: u64,
    /// Which rows an iteration touches.
    pub rows: Rows,
    /// Where the table lives.
    pub placement: TablePlacement,
}

impl Embedding {
    /// Parameters of the whole table.
    pub fn params(&self) -> u64 {
        self.vocab * self.dim
    }

    /// The fraction of rows one GPU touches per iteration (under the token
    /// model, the bound of [`Embedding::rows_per_gpu`]).
    pub fn density(&self) -> f64 {
        match self.rows {
            Rows::Density(a) => a,
            Rows::Tokens { .. } => self.rows_per_gpu() as f64 / self.vocab as f64,
        }
    }

    /// Distinct rows one GPU's gradient holds per iteration: α·vocab
    /// rounded to the nearest row, at least one; under the token model an
    /// upper bound, min(words + 1 padding row if any, vocab) (each
    /// iteration's draws give the real counts).
    pub fn rows_per_gpu(&self) -> u64 {
        match self.rows {
            Rows::Density(a) => ((a * self.vocab as f64).round() as u64).clamp(1, self.vocab),
            Rows::Tokens {
                tokens, padding, ..
            } => (tokens - padding + u64::from(padding > 0)).min(self.vocab),
        }
    }

    /// Rows each GPU's batch looks up per iteration, one per token under
    /// the token model (duplicates included: a lookup returns a row per
    /// token, an uncoalesced gradient holds one), its distinct rows under
    /// the density model.
    pub fn lookups_per_gpu(&self) -> u64 {
        match self.rows {
            Rows::Density(_) => self.rows_per_gpu(),
            Rows::Tokens { tokens, .. } => tokens,
        }
    }

    /// The table's token model, if its rows are drawn.
    pub fn token_model(&self) -> Option<super::tokens::TokenModel> {
        match self.rows {
            Rows::Density(_) => None,
            Rows::Tokens {
                tokens,
                zipf,
                padding,
            } => Some(super::tokens::TokenModel {
                vocab: self.vocab,
                tokens,
                zipf,
                padding,
            }),
        }
    }

    /// Expected distinct rows among `k` GPUs' gradients, each an
    /// independent uniform draw of [`Embedding::rows_per_gpu`] rows (the
    /// density model's stand-in for a union; no method of this version
    /// aggregates sparse rows, see `sim::train::planner::sparse`):
    /// vocab·(1 − (1 − r/vocab)^k), rounded (exactly r for k = 1, the
    /// table for a density of 1).
    pub fn union_rows(&self, k: u32) -> u64 {
        let r = self.rows_per_gpu();
        if k <= 1 || r == self.vocab {
            return r;
        }
        let v = self.vocab as f64;
        let miss = (1.0 - r as f64 / v).powi(k as i32);
        ((v * (1.0 - miss)).round() as u64).clamp(r, self.vocab)
    }

    /// Bytes of a sparse gradient of `rows` rows: values plus indices.
    pub fn sparse_bytes(&self, rows: u64, precision: Precision) -> u64 {
        rows * (self.dim * precision.bytes() + INDEX_BYTES)
    }

    /// Bytes of `rows` rows' values alone (lookup results, pulled rows).
    pub fn value_bytes(&self, rows: u64, precision: Precision) -> u64 {
        rows * self.dim * precision.bytes()
    }

    /// Bytes of the whole table's gradient held dense.
    pub fn dense_bytes(&self, precision: Precision) -> u64 {
        self.params() * precision.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(vocab: u64, dim: u64, a: f64) -> Embedding {
        Embedding {
            placement: TablePlacement::Gpu,
            vocab,
            dim,
            rows: Rows::Density(a),
        }
    }

    #[test]
    fn rows_round_and_stay_in_the_table() {
        assert_eq!(table(1000, 8, 0.0104).rows_per_gpu(), 10);
        assert_eq!(table(1000, 8, 0.0106).rows_per_gpu(), 11);
        assert_eq!(table(1000, 8, 1e-9).rows_per_gpu(), 1);
        assert_eq!(table(1000, 8, 1.0).rows_per_gpu(), 1000);
    }

    /// Uniform independent draws: k GPUs of density α touch
    /// 1 − (1 − α)^k of the table; one GPU its own rows; a full table
    /// stays full.
    #[test]
    fn union_of_independent_draws() {
        let e = table(1_000_000, 4, 0.01);
        assert_eq!(e.union_rows(1), 10_000);
        // 1 − 0.99^6 = 0.058519850599
        assert_eq!(e.union_rows(6), 58_520);
        assert!(e.union_rows(48) < 48 * 10_000);
        assert_eq!(table(100, 4, 1.0).union_rows(8), 100);
        // never fewer than one GPU's rows, never more than the table
        for k in 1..200 {
            let u = table(97, 3, 0.3).union_rows(k);
            assert!((29..=97).contains(&u), "{k}: {u}");
        }
    }

    #[test]
    fn bytes_count_values_and_indices() {
        let e = table(1000, 512, 0.01);
        assert_eq!(e.sparse_bytes(10, Precision::Fp32), 10 * (2048 + 4));
        assert_eq!(e.sparse_bytes(10, Precision::Bf16), 10 * (1024 + 4));
        assert_eq!(e.value_bytes(10, Precision::Fp32), 10 * 2048);
        assert_eq!(e.dense_bytes(Precision::Fp32), 1000 * 512 * 4);
    }
}
