//! The token model of an embedding table: which rows each GPU's batch
//! touches, drawn word by word.
//!
//! Each GPU's batch holds `tokens` tokens per iteration, each (but the
//! padding below) a word, an independent draw from a Zipf law over the
//! table's `vocab` rows with
//! exponent `s` (row k, 0-based, the (k+1)-th most frequent word, has
//! probability ∝ (k + 1)^−s; `rand_distr::Zipf`, whose algorithm at s = 1
//! dtsim writes out without its powers, drawing the same values). Words follow Zipf's law
//! in natural-language corpora with s close to 1 (Zipf 1932; Piantadosi,
//! "Zipf's word frequency law in natural language", Psychon. Bull. Rev.
//! 2014). From the draws, per iteration:
//!
//! * `touched`: tokens per GPU, duplicates included (an uncoalesced
//!   sparse gradient has a row per token);
//! * `unique`: distinct rows per GPU (after coalescing duplicates, EmbRace
//!   §4.2.2 and Table 3);
//! * `node_union`: distinct rows of each machine's GPUs together (what a
//!   machine's aggregated push carries);
//! * `union`: distinct rows of all GPUs (what the servers update);
//! * `next_overlap`: rows of a GPU's batch that its next batch touches
//!   again (EmbRace's "prior" rows, Algorithm 1).
//!
//! **Padding.** A batch of sequences padded to one length looks up its
//! padding token's row once per padded position (BERT's `[PAD]`, id 0):
//! `padding` of a batch's tokens are that one row, the table's last
//! ([`TokenModel::pad_row`]), and the other `tokens − padding` are words
//! drawn over the other `vocab − 1` rows. They count as tokens (a lookup
//! returns a row per position, an uncoalesced gradient holds one) and
//! coalesce into one row. Without padding the words are drawn over all
//! `vocab` rows, as before it was modelled.
//!
//! A GPU's draw in an iteration is a function of (seed, table, GPU,
//! iteration) alone, from its own generator (as the compute jitter's), so
//! it does not depend on the cluster's size or on the order of asking.

use crate::seed::mix;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Zipf};

/// `rand_distr::Zipf`'s `t` for `n` rows at exponent 1: 1 + ln n.
fn zipf1_t(n: f64) -> f64 {
    1.0 + n.ln()
}

/// One draw of `rand_distr::Zipf` (0.6) at exponent s = 1 (`zipf`, of
/// `t` = 1 + ln n), the same value from the same generator, without the
/// two `powf` calls its step makes at s = 1 (x^−1 and b^1), which were a
/// quarter of a 48-GPU token-model run's time (docs/benchmarks.md,
/// 2026-11-28, fourth session). Each attempt is `rand_distr`'s rejection-
/// inversion step for step, its acceptance ratio computed as 1 / x times
/// b: within a few ulps of `rand_distr`'s x.powf(−1) times b.powf(1)
/// (`pow` is within an ulp of the exact power; its x^−1 is not always the
/// correctly rounded 1 / x, the first whole x where it is not being
/// 1,923). Where the uniform it is compared with falls within 10^−14 of
/// the ratio (about 45 ulps), the attempt is run again by `rand_distr`
/// itself from the generator's state before it, so that every draw is
/// `rand_distr`'s whatever its `pow`. The floor is a cast (b + 1 is in
/// [1, n + 1], n < 2^53, where truncation is the floor). Tests
/// `zipf1_draws_rand_distrs_values` (4 million draws) and
/// `zipf1_takes_rand_distrs_ratio_at_a_near_tie` (a constructed draw
/// where 1 / x would accept and `rand_distr` rejects).
///
/// The state before an attempt is not kept (a copy of it every attempt
/// cost 5% of the run's instructions): the attempt's two uniforms are,
/// and `rand_distr` runs from a generator that returns their words again
/// ([`Replay`]) and then the real one's, which is the state before.
fn zipf1_sample<R: rand::Rng>(zipf: &Zipf<f64>, t: f64, rng: &mut R) -> f64 {
    use rand::RngExt;
    use rand::distr::StandardUniform;
    loop {
        let p: f64 = rng.sample(StandardUniform);
        let pt = p * t;
        let inv_b = if pt <= 1.0 { pt } else { (pt - 1.0).exp() };
        let x = ((inv_b + 1.0) as u64) as f64;
        let mut ratio = 1.0 / x;
        if x > 1.0 {
            ratio *= inv_b;
        }
        let y: f64 = rng.sample(StandardUniform);
        if (y - ratio).abs() <= 1e-14 {
            // a near tie: `rand_distr` decides, from this attempt on
            let mut replay = Replay {
                words: [Replay::<R>::word(p), Replay::<R>::word(y)],
                next: 0,
                rng,
            };
            return zipf.sample(&mut replay);
        }
        if y < ratio {
            return x;
        }
    }
}

/// A generator that returns `words` from `next_u64` first, then what
/// `rng` returns: `rng`'s state before it drew them, where `words` give
/// the uniforms it gave (`StandardUniform`'s f64 is a word's 53 high bits
/// over 2^53, so [`Replay::word`] of such a uniform gives it again).
struct Replay<'a, R> {
    words: [u64; 2],
    next: usize,
    rng: &'a mut R,
}

impl<R> Replay<'_, R> {
    /// A word from which `StandardUniform` makes the f64 `u` (a multiple
    /// of 2^−53 in [0, 1)).
    fn word(u: f64) -> u64 {
        ((u * (1u64 << 53) as f64) as u64) << 11
    }
}

impl<R: rand::Rng> rand::TryRng for Replay<'_, R> {
    type Error = std::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.rng.next_u32())
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(match self.words.get(self.next) {
            Some(&w) => {
                self.next += 1;
                w
            }
            None => self.rng.next_u64(),
        })
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.rng.fill_bytes(dst);
        Ok(())
    }
}

/// Most tokens one GPU's batch may hold per iteration.
pub const MAX_TOKENS: u64 = 1 << 40;

/// Row statistics of one iteration of one table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IterationRows {
    /// Tokens per GPU, duplicates included.
    pub touched: Vec<u64>,
    /// Distinct rows per GPU.
    pub unique: Vec<u64>,
    /// Distinct rows of each machine's GPUs.
    pub node_union: Vec<u64>,
    /// Distinct rows of all GPUs.
    pub union: u64,
    /// Per GPU, its distinct rows that its next iteration touches again.
    pub next_overlap: Vec<u64>,
}

/// The token model of one table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenModel {
    /// Rows of the table.
    pub vocab: u64,
    /// Tokens per GPU per iteration, padding included.
    pub tokens: u64,
    /// Zipf exponent s > 0.
    pub zipf: f64,
    /// Of `tokens`, those on the padding row ([`TokenModel::pad_row`]);
    /// 0 where the batch has none. Below `tokens`, and `vocab` at least
    /// 2 where it is not 0 (scenarios refuse the rest).
    pub padding: u64,
}

impl TokenModel {
    /// Words per GPU per iteration: the tokens that are not padding.
    pub fn words(&self) -> u64 {
        self.tokens - self.padding
    }

    /// The rows the words are drawn over: all of them, or all but the
    /// padding row.
    fn word_rows(&self) -> u64 {
        if self.padding > 0 {
            self.vocab - 1
        } else {
            self.vocab
        }
    }

    /// The padding row, the table's last (`[PAD]` is BERT's id 0; no
    /// count of rows depends on which, but under a PS its index decides
    /// its partition, r mod P, and so its server), where the batch has
    /// padding.
    pub fn pad_row(&self) -> Option<u64> {
        (self.padding > 0).then(|| self.vocab - 1)
    }

    /// The rows of the words GPU `gpu`'s batch draws in iteration `iter`
    /// of table `table`, one per token, duplicates included, in the order
    /// drawn, then the padding row once per padded position.
    ///
    /// # Panics
    /// If the model is invalid (scenarios refuse it first).
    pub fn tokens(&self, seed: u64, table: u32, gpu: u32, iter: u32) -> Vec<u64> {
        let key = mix(mix(mix(seed ^ 0x746f_6b65_6e73) ^ table as u64) ^ gpu as u64) ^ iter as u64;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(key));
        let vocab = self.word_rows();
        let row = |k: f64| (k as u64).clamp(1, vocab) - 1;
        let zipf = Zipf::new(vocab as f64, self.zipf).expect("a valid Zipf law");
        let mut rows: Vec<u64> = if self.zipf == 1.0 {
            let t = zipf1_t(vocab as f64);
            (0..self.words())
                .map(|_| row(zipf1_sample(&zipf, t, &mut rng)))
                .collect()
        } else {
            (0..self.words())
                .map(|_| row(zipf.sample(&mut rng)))
                .collect()
        };
        if let Some(pad) = self.pad_row() {
            rows.resize(self.tokens as usize, pad);
        }
        rows
    }

    /// The distinct rows GPU `gpu` touches in iteration `iter` of table
    /// `table`, sorted: its [`TokenModel::tokens`] coalesced.
    pub fn rows(&self, seed: u64, table: u32, gpu: u32, iter: u32) -> Vec<u64> {
        distinct_rows(self.tokens(seed, table, gpu, iter), self.vocab)
    }

    /// The statistics of iterations `0..iters` on `gpus` GPUs of
    /// `gpus_per_node` each.
    pub fn iterations(
        &self,
        seed: u64,
        table: u32,
        gpus: u32,
        gpus_per_node: u32,
        iters: u32,
    ) -> Vec<IterationRows> {
        let draw = |iter: u32| -> Vec<Vec<u64>> {
            (0..gpus).map(|g| self.rows(seed, table, g, iter)).collect()
        };
        let mut out = Vec::with_capacity(iters as usize);
        let mut this = draw(0);
        for iter in 0..iters {
            let next = draw(iter + 1);
            let union_of = |sets: &[Vec<u64>]| {
                let mut all: Vec<u64> = sets.iter().flatten().copied().collect();
                all.sort_unstable();
                all.dedup();
                all.len() as u64
            };
            out.push(IterationRows {
                touched: vec![self.tokens; gpus as usize],
                unique: this.iter().map(|s| s.len() as u64).collect(),
                node_union: this
                    .chunks(gpus_per_node.max(1) as usize)
                    .map(union_of)
                    .collect(),
                union: union_of(&this),
                next_overlap: this
                    .iter()
                    .zip(&next)
                    .map(|(a, b)| intersection(a, b))
                    .collect(),
            });
            this = next;
        }
        out
    }

    /// The expected distinct rows of `k` GPUs' batches together,
    /// Σ_rows 1 − (1 − p_row)^(k·words), plus the padding row: the closed
    /// form the draws are tested against.
    pub fn expected_distinct(&self, k: u64) -> f64 {
        self.expected(|hit| hit(k))
    }

    /// The expected prior rows of one GPU under EmbRace's vertical
    /// scheduling with `gpus` GPUs: its distinct rows that some GPU's next
    /// batch touches, Σ_rows (1 − (1 − p)^words)·(1 − (1 − p)^(gpus·words)),
    /// plus the padding row (in every batch).
    pub fn expected_prior(&self, gpus: u64) -> f64 {
        self.expected(|hit| hit(1) * hit(gpus))
    }

    /// Σ over the rows of `f(hit)`, `hit(k)` being the probability that
    /// k batches touch the row (1 for the padding row, in every batch).
    fn expected(&self, f: impl Fn(&dyn Fn(u64) -> f64) -> f64) -> f64 {
        let rows = self.word_rows();
        let h: f64 = (1..=rows).map(|r| (r as f64).powf(-self.zipf)).sum();
        let words: f64 = (1..=rows)
            .map(|r| {
                let p = (r as f64).powf(-self.zipf) / h;
                let hit = |k: u64| 1.0 - ((k * self.words()) as f64 * (-p).ln_1p()).exp();
                f(&hit)
            })
            .sum();
        let pad = if self.padding > 0 { f(&|_| 1.0) } else { 0.0 };
        words + pad
    }
}

/// The distinct rows of `tokens` (each below `vocab`), sorted: through a
/// bitmap of the vocabulary where scanning it costs less than sorting the
/// tokens (a word per 64 rows against log2(tokens) comparisons per
/// token), else by sorting.
pub fn distinct_rows(tokens: Vec<u64>, vocab: u64) -> Vec<u64> {
    let bitmap = vocab.div_ceil(64) <= (tokens.len() as u64).saturating_mul(8);
    distinct(tokens, vocab, bitmap)
}

/// The distinct values of `draws` (each below `vocab`), sorted: through a
/// bitmap of the vocabulary or by sorting, the same rows either way.
fn distinct(mut draws: Vec<u64>, vocab: u64, bitmap: bool) -> Vec<u64> {
    if !bitmap {
        draws.sort_unstable();
        draws.dedup();
        return draws;
    }
    let mut seen = RowBitmap::new(vocab);
    for &r in &draws {
        seen.insert(r);
    }
    seen.rows()
}

/// A set of rows of a table of `vocab` rows, one bit a row: what
/// [`distinct_rows`] and EmbRace's prior rows (vertical scheduling) test
/// rows against where a word per 64 rows costs less than sorting.
#[derive(Debug, Clone)]
pub struct RowBitmap {
    words: Vec<u64>,
}

impl RowBitmap {
    /// The empty set of a table of `vocab` rows.
    pub fn new(vocab: u64) -> RowBitmap {
        RowBitmap {
            words: vec![0; vocab.div_ceil(64) as usize],
        }
    }

    /// Adds row `r` (below the table's `vocab`).
    pub fn insert(&mut self, r: u64) {
        self.words[(r / 64) as usize] |= 1 << (r % 64);
    }

    /// Whether row `r` (below the table's `vocab`) is in the set.
    pub fn contains(&self, r: u64) -> bool {
        self.words[(r / 64) as usize] >> (r % 64) & 1 == 1
    }

    /// The rows in the set, sorted.
    pub fn rows(&self) -> Vec<u64> {
        let mut rows = Vec::new();
        for (w, &bits) in self.words.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                rows.push(w as u64 * 64 + b.trailing_zeros() as u64);
                b &= b - 1;
            }
        }
        rows
    }
}

/// Size of the intersection of two sorted, distinct lists.
fn intersection(a: &[u64], b: &[u64]) -> u64 {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    const LM: TokenModel = TokenModel {
        vocab: 100_000,
        tokens: 2_560,
        zipf: 1.0,
        padding: 0,
    };

    /// Both ways of removing duplicates give the same sorted rows, at the
    /// edges of a word of the bitmap too.
    #[test]
    fn bitmap_and_sort_agree() {
        let draws = vec![129, 0, 63, 64, 5, 63, 199, 0, 128, 127];
        let want = vec![0, 5, 63, 64, 127, 128, 129, 199];
        assert_eq!(distinct(draws.clone(), 200, true), want);
        assert_eq!(distinct(draws, 200, false), want);
        // a model on each side of the switch: sorted, distinct, at most
        // one row per token
        let wide = TokenModel {
            vocab: 1 << 30,
            tokens: 300,
            zipf: 1.1,
            padding: 0,
        };
        for tm in [LM, wide] {
            let rows = tm.rows(3, 1, 2, 0);
            assert!(rows.windows(2).all(|w| w[0] < w[1]));
            assert!(!rows.is_empty() && rows.len() as u64 <= tm.tokens);
        }
    }

    /// The exponent-1 sampler draws what `rand_distr::Zipf` draws, value
    /// for value, from the same generator: 4 million draws over four
    /// vocabularies (one row, a power of two, the LM's, 2^40) and seeds.
    #[test]
    fn zipf1_draws_rand_distrs_values() {
        for (n, seed) in [
            (1.0, 1),
            (65_536.0, 2),
            (793_470.0, 3),
            ((1u64 << 40) as f64, 4),
        ] {
            let zipf = Zipf::new(n, 1.0).unwrap();
            let t = zipf1_t(n);
            let mut a = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut b = Xoshiro256PlusPlus::seed_from_u64(seed);
            for i in 0..1_000_000 {
                let want: f64 = zipf.sample(&mut a);
                let got = zipf1_sample(&zipf, t, &mut b);
                assert_eq!(got.to_bits(), want.to_bits(), "n {n}, draw {i}");
            }
        }
    }

    /// A generator that returns the given words, then zeros.
    struct Words(Vec<u64>);

    impl rand::TryRng for Words {
        type Error = std::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok(self.try_next_u64()? as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            Ok(if self.0.is_empty() {
                0
            } else {
                self.0.remove(0)
            })
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
            dst.fill(0);
            Ok(())
        }
    }

    /// A constructed near tie, LM vocabulary: the first uniform puts the
    /// draw at x = 1,923, whose x^−1 from glibc's `pow` is not the
    /// correctly rounded 1 / 1,923, and the second falls between the two
    /// ratios (with std's `pow`, 1 / x times b accepts and x.powf(−1)
    /// times b rejects). `rand_distr` takes its `pow` from std or from the
    /// `libm` crate, as the build's features fall (a test build of `sim`
    /// alone takes `libm`'s, which accepts here): the sampler hands the
    /// attempt to it from the generator's state before the attempt, and
    /// draws what it draws, leaving the generator where it leaves it.
    #[test]
    fn zipf1_takes_rand_distrs_ratio_at_a_near_tie() {
        let n = 793_470.0;
        // StandardUniform takes a word's 53 high bits
        let p_bits: u64 = 5_287_357_638_808_245;
        let y = f64::from_bits(0x3fef_fbbd_6ff5_5998);
        let y_bits = (y * (1u64 << 53) as f64) as u64;
        let words = vec![p_bits << 11, y_bits << 11, 7 << 11, 9 << 11];
        let t = zipf1_t(n);
        let inv_b = ((p_bits as f64 / (1u64 << 53) as f64) * t - 1.0).exp();
        let x = (inv_b + 1.0).floor();
        assert_eq!(x, 1923.0);
        // the case is a real one: std's ratios differ, y between them
        let (cheap, theirs) = (1.0 / x * inv_b, x.powf(-1.0) * inv_b.powf(1.0));
        assert!(theirs <= y && y < cheap, "{theirs} {y} {cheap}");
        assert!((y - cheap).abs() <= 1e-14);
        let zipf = Zipf::new(n, 1.0).unwrap();
        let (mut a, mut b) = (Words(words.clone()), Words(words));
        for _ in 0..3 {
            let want: f64 = zipf.sample(&mut a);
            let got = zipf1_sample(&zipf, t, &mut b);
            assert_eq!(got.to_bits(), want.to_bits());
            assert_eq!(a.0, b.0, "the words left");
        }
    }

    /// The draws are a function of (seed, table, GPU, iteration): the same
    /// on every call, different for another GPU or seed.
    #[test]
    fn draws_are_reproducible_and_independent() {
        assert_eq!(LM.rows(7, 0, 3, 5), LM.rows(7, 0, 3, 5));
        assert_ne!(LM.rows(7, 0, 3, 5), LM.rows(7, 0, 4, 5));
        assert_ne!(LM.rows(7, 0, 3, 5), LM.rows(8, 0, 3, 5));
        let a = LM.iterations(1, 0, 8, 4, 3);
        let b = LM.iterations(1, 0, 16, 4, 3);
        assert_eq!(a[2].unique[..], b[2].unique[..8]);
    }

    /// Distinct rows per GPU, per machine and over all GPUs match the
    /// closed form Σ 1 − (1 − p)^n: averaged over 8 GPUs × 10 iterations
    /// (80 draws) the mean of a count with standard deviation σ ≤ √mean
    /// (a sum of weakly dependent indicators) is within 3σ/√80 of the
    /// expectation; we allow 2% (3·√1500/√80 ≈ 13 rows of 1,500 is 0.9%).
    #[test]
    fn distinct_rows_match_the_closed_form() {
        let it = LM.iterations(42, 0, 8, 4, 10);
        let mean = |f: &dyn Fn(&IterationRows) -> Vec<u64>| {
            let v: Vec<u64> = it.iter().flat_map(f).collect();
            v.iter().sum::<u64>() as f64 / v.len() as f64
        };
        let close = |got: f64, want: f64, what: &str| {
            assert!((got - want).abs() / want < 0.02, "{what}: {got} vs {want}");
        };
        close(mean(&|r| r.unique.clone()), LM.expected_distinct(1), "GPU");
        close(
            mean(&|r| r.node_union.clone()),
            LM.expected_distinct(4),
            "node",
        );
        close(mean(&|r| vec![r.union]), LM.expected_distinct(8), "all");
        // coalescing saves: distinct < tokens, and unions grow less than
        // linearly (shared frequent words)
        let one = LM.expected_distinct(1);
        assert!(one < 0.7 * LM.tokens as f64, "{one}");
        assert!(LM.expected_distinct(8) < 0.8 * 8.0 * one);
    }

    /// A GPU's next batch shares rows with this one: for independent
    /// draws the expected overlap is Σ q_r², q_r = 1 − (1 − p_r)^n the
    /// chance row r is in a batch; the sample mean is within 2%.
    #[test]
    fn prior_rows_match_the_closed_form() {
        // 6 GPUs, 10 iterations: GPU 0's rows that any GPU's next batch
        // touches (60 draws of a count of ~1,000; 2% as above)
        let mut got = 0.0;
        for it in 0..10 {
            let mut wanted: Vec<u64> = (0..6).flat_map(|g| LM.rows(5, 0, g, it + 1)).collect();
            wanted.sort_unstable();
            wanted.dedup();
            for g in 0..6 {
                got += LM
                    .rows(5, 0, g, it)
                    .iter()
                    .filter(|r| wanted.binary_search(r).is_ok())
                    .count() as f64;
            }
        }
        let (got, want) = (got / 60.0, LM.expected_prior(6));
        assert!((got - want).abs() / want < 0.02, "{got} vs {want}");
    }

    /// A padded batch: its last `padding` tokens are the padding row,
    /// which no word draws; it coalesces into one row, so the distinct
    /// rows are the words' over the other rows plus one, exactly in the
    /// closed form and within 2% in the draws (as above: 80 draws of a
    /// count of ~2,000); it is in every batch, so always a prior row.
    #[test]
    fn padding_is_one_row_in_every_batch() {
        // BERT-base's table at 32 sequences of 384 positions, 60% padding
        let bert = TokenModel {
            vocab: 30_522,
            tokens: 12_288,
            zipf: 1.0,
            padding: 7_373,
        };
        let pad = bert.pad_row().unwrap();
        assert_eq!(pad, 30_521);
        let t = bert.tokens(3, 0, 1, 2);
        assert_eq!(t.len(), 12_288);
        assert!(t[..4_915].iter().all(|&r| r < pad));
        assert!(t[4_915..].iter().all(|&r| r == pad));
        let words = TokenModel {
            vocab: 30_521,
            tokens: 4_915,
            zipf: 1.0,
            padding: 0,
        };
        for k in [1, 4, 16] {
            let (a, b) = (bert.expected_distinct(k), words.expected_distinct(k) + 1.0);
            assert!((a - b).abs() <= 1e-9 * b, "{k}: {a} {b}");
        }
        assert!((bert.expected_prior(4) - words.expected_prior(4) - 1.0).abs() < 1e-6);
        let it = bert.iterations(11, 0, 8, 4, 10);
        let unique: u64 = it.iter().flat_map(|r| r.unique.clone()).sum();
        let (got, want) = (unique as f64 / 80.0, bert.expected_distinct(1));
        assert!((got - want).abs() / want < 0.02, "{got} vs {want}");
        assert!(it.iter().all(|r| r.touched.iter().all(|&n| n == 12_288)));
        // coalescing now takes away most of the batch: the padding and
        // the words' duplicates
        assert!(want < 0.2 * 12_288.0, "{want}");
        assert_eq!(bert.pad_row().is_some(), LM.pad_row().is_none());
    }

    #[test]
    fn next_batch_overlap_matches_independent_draws() {
        let it = LM.iterations(9, 1, 8, 8, 10);
        let got: f64 = it.iter().flat_map(|r| r.next_overlap.clone()).sum::<u64>() as f64 / 80.0;
        let h: f64 = (1..=LM.vocab).map(|r| 1.0 / r as f64).sum();
        let want: f64 = (1..=LM.vocab)
            .map(|r| {
                let p = 1.0 / (r as f64 * h);
                let q = 1.0 - (LM.tokens as f64 * (-p).ln_1p()).exp();
                q * q
            })
            .sum();
        assert!((got - want).abs() / want < 0.02, "{got} vs {want}");
    }
}
