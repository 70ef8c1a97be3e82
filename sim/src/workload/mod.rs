//! The workload: a model as an ordered list of layers with their
//! parameters and compute times.
//!
//! Built-in presets ([`preset_data`]) carry per-layer parameter counts and
//! forward multiply-accumulates, and measured single-GPU training
//! throughputs. A preset becomes layer times on a given GPU and batch size
//! by [`Model::from_preset`]: the measured time per sample is split over
//! the layers in proportion to their MACs, one third forward and two thirds
//! backward (backward ≈ 2 × forward), or, where the GPU's entries were
//! timed (the H200's ImageNet models), in their measured shares. The time scales linearly with the
//! batch, or, where the GPU was measured at several batches, follows the
//! measured step times between them ([`preset_data::GpuThroughput::iteration_s`]).
//! Sources and the limits of this model are in `docs/models.md`.

pub mod gpus;
pub mod kernels;
pub mod preset_data;
pub mod sparse;
pub mod tokens;
pub mod variables;

pub use sparse::{Embedding, Rows, TablePlacement};

use crate::time::SimTime;

/// The number format gradients travel in (`model.gradient_precision`).
///
/// 16-bit gradients halve the bytes of fp32. They are what a job sends
/// when it synchronises gradients in fp16 or bf16: PyTorch DDP's
/// `fp16_compress_hook` and `bf16_compress_hook` (which cast fp32
/// gradients for the AllReduce), or training whose gradients are 16-bit
/// themselves (Micikevicius et al., "Mixed Precision Training", ICLR 2018,
/// §3, keep fp16 gradients and an fp32 master copy). Automatic mixed
/// precision as PyTorch's autocast runs it keeps fp32 gradients: that is
/// `fp32`. Sparse methods send
/// each selected value in this format and its index as a 4-byte integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    /// 4 bytes per element (the default).
    #[default]
    Fp32,
    /// bfloat16: 2 bytes.
    Bf16,
    /// IEEE half: 2 bytes.
    Fp16,
}

impl Precision {
    /// Bytes of one element.
    pub fn bytes(self) -> u64 {
        match self {
            Precision::Fp32 => 4,
            Precision::Bf16 | Precision::Fp16 => 2,
        }
    }
}

impl crate::names::Named for Precision {
    const ALL: &'static [Precision] = &[Precision::Fp32, Precision::Bf16, Precision::Fp16];
    const WHAT: &'static str = "gradient precision";
    fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
        }
    }
}

/// One layer (or block) of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// Name, for traces and tables.
    pub name: String,
    /// Dense parameters.
    pub params: u64,
    /// Forward time at the model's batch size.
    pub forward: SimTime,
    /// Backward time at the model's batch size.
    pub backward: SimTime,
    /// Output activation bytes per iteration (model parallelism).
    pub activation_bytes: u64,
    /// The layer's sparse part, if it has one (an embedding table,
    /// synchronised by `strategy.sparse`); `params` counts the dense
    /// part only.
    pub embedding: Option<Embedding>,
    /// The dense variables (tensors) the layer's parameters are in, their
    /// elements in creation order, adding up to `params`: what a
    /// parameter server holding whole variables places and receives one
    /// by one (`strategy.ps_placement = "whole"`). Empty: one variable of
    /// `params`.
    pub variables: Vec<u64>,
}

impl Layer {
    /// The elements of each dense variable: [`Layer::variables`], or
    /// `params` as one (none without parameters).
    pub fn variable_sizes(&self) -> Vec<u64> {
        if !self.variables.is_empty() {
            self.variables.clone()
        } else if self.params > 0 {
            vec![self.params]
        } else {
            Vec::new()
        }
    }

    /// Gradient bytes of the layer in `precision`.
    pub fn grad_bytes(&self, precision: Precision) -> u64 {
        self.params * precision.bytes()
    }
}

/// A model at a batch size on a GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Name (preset key or "custom").
    pub name: String,
    /// GPU the compute times are for.
    pub gpu: String,
    /// Samples per GPU per iteration.
    pub batch_per_gpu: u32,
    /// Layers in forward order.
    pub layers: Vec<Layer>,
    /// Coefficient of variation of each GPU's compute time per iteration
    /// (stragglers); 0 = every GPU identical. See `sim::train` for the
    /// distribution.
    pub compute_jitter: f64,
    /// The format gradients are synchronised in.
    pub gradient_precision: Precision,
    /// Words or tokens the throughput counts per sample (1 where it
    /// counts samples).
    pub words_per_sample: f64,
    /// Unit of the throughput: "samples/s", or "words/s" or "tokens/s"
    /// for the NLP presets, as their papers count.
    pub throughput_unit: String,
    /// What the kernels a compressed method inserts cost on `gpu`
    /// (Top-k selection, gTop-k's merge): [`kernels::KernelCosts::preset`]
    /// by default.
    pub kernels: kernels::KernelCosts,
}

/// Why a preset could not be instantiated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PresetError {
    /// No preset of that name.
    #[error("{0}")]
    UnknownModel(String),
    /// The preset has no compute figures for that GPU.
    #[error("model `{model}` has no compute-time table for GPU `{gpu}` (known: {known})")]
    UnknownGpu {
        /// Model.
        model: String,
        /// Requested GPU.
        gpu: String,
        /// GPUs it has.
        known: String,
    },
}

impl preset_data::GpuThroughput {
    /// Every measured (batch, samples per second): the curve's, then the
    /// row's own, ascending by batch.
    pub fn measured(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.by_batch
            .iter()
            .copied()
            .chain([(self.batch, self.samples_per_s)])
    }

    /// Seconds one GPU's training iteration of `batch` samples takes
    /// (forward, backward and update). With one measured batch, `batch /
    /// samples_per_s`: the rate holds at every batch. Where the GPU was
    /// measured at several batches (`by_batch`), the step time is
    /// interpolated linearly in the batch between the two measured batches
    /// around it; beyond the largest it runs at the largest's rate, and
    /// below the smallest at the smallest's (an upper bound on the rate:
    /// measured rates fall as the batch shrinks). docs/models.md §4.
    pub fn iteration_s(&self, batch: u32) -> f64 {
        let b = batch as f64;
        let (Some(&(first, first_rate)), false) = (self.by_batch.first(), batch >= self.batch)
        else {
            return b / self.samples_per_s;
        };
        if batch <= first {
            return b / first_rate;
        }
        let (lo, hi) = self
            .measured()
            .zip(self.measured().skip(1))
            .find(|&(_, (hi, _))| batch <= hi)
            .expect("below the row's batch, a measured batch lies above");
        let time = |(at, rate): (u32, f64)| at as f64 / rate;
        let along = (b - lo.0 as f64) / (hi.0 - lo.0) as f64;
        time(lo) + (time(hi) - time(lo)) * along
    }
}

/// Names of the built-in models.
pub fn preset_names() -> Vec<&'static str> {
    all_presets().map(|p| p.name).collect()
}

fn all_presets() -> impl Iterator<Item = &'static preset_data::PresetModel> {
    preset_data::PRESETS
        .iter()
        .chain(preset_data::EXTRA_PRESETS.iter())
}

impl Model {
    /// Instantiates a preset on `gpu` at `batch` samples per GPU.
    pub fn from_preset(name: &str, gpu: &str, batch: u32) -> Result<Model, PresetError> {
        let p = all_presets().find(|p| p.name == name).ok_or_else(|| {
            PresetError::UnknownModel(crate::names::unknown("model preset", name, &preset_names()))
        })?;
        let tp =
            p.throughputs
                .iter()
                .find(|t| t.gpu == gpu)
                .ok_or_else(|| PresetError::UnknownGpu {
                    model: name.into(),
                    gpu: gpu.into(),
                    known: p
                        .throughputs
                        .iter()
                        .map(|t| t.gpu)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
        let total_macs: u64 = p.layers.iter().map(|l| l.fwd_macs).sum();
        let iter_s = tp.iteration_s(batch);
        // measured shares of each pass where the GPU has them, one pair an
        // entry (each column normalised to sum to 1), else both in
        // proportion to the MACs; a table that is not one pair an entry
        // with positive columns (the generated tables are, tested) is not
        // used
        let sum = |col: fn(&(f64, f64)) -> f64| tp.entry_shares.iter().map(col).sum::<f64>();
        let (forward_sum, backward_sum) = (sum(|s| s.0), sum(|s| s.1));
        let measured =
            tp.entry_shares.len() == p.layers.len() && forward_sum > 0.0 && backward_sum > 0.0;
        debug_assert!(measured || tp.entry_shares.is_empty(), "{name} on {gpu}");
        let layers = p
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let share = l.fwd_macs as f64 / total_macs as f64;
                let (f, b) = match tp.entry_shares.get(i) {
                    Some(&(f, b)) if measured => (f / forward_sum, b / backward_sum),
                    _ => (share, share),
                };
                let (forward, backward) = match tp.forward_fraction {
                    Some(phi) => (iter_s * phi * f, iter_s * (1.0 - phi) * b),
                    None => (iter_s * f / 3.0, iter_s * b * 2.0 / 3.0),
                };
                Layer {
                    name: l.name.to_string(),
                    params: l.params,
                    variables: if l.params > 0 {
                        variables::split(name, l.name, l.params)
                    } else {
                        Vec::new()
                    },
                    forward: SimTime::from_secs(forward),
                    backward: SimTime::from_secs(backward),
                    activation_bytes: l.activation_elems * batch as u64 * 4,
                    embedding: l.embedding.map(|t| Embedding {
                        placement: TablePlacement::Gpu,
                        vocab: t.vocab,
                        dim: t.dim,
                        rows: Rows::Density(if p.density > 0.0 {
                            p.density
                        } else {
                            // no measured density: the batch's rows, each
                            // counted distinct (an upper bound)
                            let rows = batch as f64 * t.tokens_per_sample + t.sampled as f64;
                            (rows / t.vocab as f64).clamp(f64::MIN_POSITIVE, 1.0)
                        }),
                    }),
                }
            })
            .collect();
        Ok(Model {
            name: name.into(),
            gpu: gpu.into(),
            batch_per_gpu: batch,
            layers,
            compute_jitter: 0.0,
            gradient_precision: Precision::Fp32,
            words_per_sample: p.words_per_sample,
            throughput_unit: p.throughput_unit.into(),
            kernels: kernels::KernelCosts::preset(gpu),
        })
    }

    /// The same model with every embedding table touched at density
    /// `alpha` (`model.embedding_density`; the caller checks α ∈ (0, 1]).
    pub fn with_density(mut self, alpha: f64) -> Model {
        for e in self.layers.iter_mut().filter_map(|l| l.embedding.as_mut()) {
            e.rows = Rows::Density(alpha);
        }
        self
    }

    /// The same model with every embedding table in `placement`
    /// (`model.embedding_placement`).
    pub fn with_placement(mut self, placement: TablePlacement) -> Model {
        for e in self.layers.iter_mut().filter_map(|l| l.embedding.as_mut()) {
            e.placement = placement;
        }
        self
    }

    /// The same preset with every embedding table under the token model
    /// (`model.embedding_zipf`): each GPU's batch holds
    /// `batch × tokens_per_sample + sampled` tokens per table and
    /// iteration (the preset's figures, docs/models.md §6.2), of which
    /// `batch × padding_per_sample` are the padding row (BERT-base's
    /// sequences padded to 384) and the rest words drawn from a Zipf law
    /// of exponent `zipf` (the caller checks zipf > 0). A model that is
    /// not a preset, or a preset without tables, comes back unchanged.
    pub fn with_token_model(mut self, zipf: f64) -> Model {
        let Some(p) = all_presets().find(|p| p.name == self.name) else {
            return self;
        };
        let batch = self.batch_per_gpu as f64;
        for (layer, pl) in self.layers.iter_mut().zip(p.layers) {
            if let (Some(e), Some(t)) = (layer.embedding.as_mut(), pl.embedding) {
                let tokens = ((batch * t.tokens_per_sample).round() as u64 + t.sampled).max(1);
                // at least one word in a batch
                let padding = ((batch * t.padding_per_sample).round() as u64).min(tokens - 1);
                e.rows = Rows::Tokens {
                    tokens,
                    zipf,
                    padding,
                };
            }
        }
        self
    }

    /// The name of layer `l`, or "layer l" for an index the model does not
    /// have (a task of a plan that belongs to no model layer).
    pub fn layer_name(&self, l: u32) -> String {
        self.layers
            .get(l as usize)
            .map_or_else(|| format!("layer {l}"), |x| x.name.clone())
    }

    /// Gradient bytes of layer `layer` in the model's precision.
    pub fn grad_bytes(&self, layer: &Layer) -> u64 {
        layer.grad_bytes(self.gradient_precision)
    }

    /// Total dense parameters.
    pub fn params(&self) -> u64 {
        self.layers.iter().map(|l| l.params).sum()
    }

    /// Whether any layer has a sparse (embedding) part.
    pub fn has_sparse(&self) -> bool {
        self.layers.iter().any(|l| l.embedding.is_some())
    }

    /// Forward plus backward time of one iteration on one GPU.
    pub fn compute_time(&self) -> SimTime {
        self.layers
            .iter()
            .fold(SimTime::ZERO, |t, l| t + l.forward + l.backward)
    }

    /// Parameters of the embedding tables (the sparse variables).
    pub fn sparse_params(&self) -> u64 {
        self.layers
            .iter()
            .filter_map(|l| l.embedding.as_ref())
            .map(Embedding::params)
            .sum()
    }

    /// Samples per second on one GPU with no communication.
    pub fn single_gpu_throughput(&self) -> f64 {
        self.batch_per_gpu as f64 / self.compute_time().as_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The NLP presets have the sizes their papers' Table 1 give: Parallax
    /// counts elements in millions to one decimal (exact after rounding);
    /// EmbRace gives MiB of fp32 to 0.1 MiB (our structures match within
    /// 0.05%: Transformer-big's LayerNorms and padding leave 0.03%, stated
    /// in docs/models.md).
    #[test]
    fn nlp_presets_have_their_papers_sizes() {
        let m = |name: &str, gpu: &str| Model::from_preset(name, gpu, 128).unwrap();
        let lm = m("lm", "titan-xp");
        assert_eq!((lm.params(), lm.sparse_params()), (9_445_376, 813_306_750));
        let nmt = m("nmt", "titan-xp");
        assert_eq!(
            (nmt.params(), nmt.sparse_params()),
            (94_100_000, 74_850_304)
        );
        assert_eq!(((nmt.sparse_params() as f64 / 1e5).round()), 749.0);
        let mib = |e: u64| e as f64 * 4.0 / (1u64 << 20) as f64;
        for (name, model_mib, emb_mib) in [
            ("gnmt8", 739.1, 252.5),
            ("transformer", 1067.5, 263.4),
            ("bert_base", 417.7, 89.4),
        ] {
            let x = m(name, "rtx3090");
            let total = mib(x.params() + x.sparse_params());
            let emb = mib(x.sparse_params());
            assert!(
                (total - model_mib).abs() <= 5e-4 * model_mib,
                "{name}: {total} MiB"
            );
            assert!(
                (emb - emb_mib).abs() <= 0.05,
                "{name}: embeddings {emb} MiB"
            );
        }
        // every table of a preset carries the preset's density
        let alphas: Vec<f64> = lm
            .layers
            .iter()
            .filter_map(|l| l.embedding.as_ref())
            .map(Embedding::density)
            .collect();
        assert_eq!(alphas, [8.4e-3, 8.4e-3]);
        assert_eq!(
            (lm.words_per_sample, lm.throughput_unit.as_str()),
            (20.0, "words/s")
        );
        // Parallax's single-GPU LM: 277k words/s on 48 GPUs / 9.4x
        let wps = lm.single_gpu_throughput() * lm.words_per_sample;
        assert!((wps - 277_000.0 / 9.4).abs() < 0.01 * 20.0, "{wps}");
        // the CNN presets still count samples
        let r = Model::from_preset("resnet50", "titan-xp", 64).unwrap();
        assert_eq!(
            (r.words_per_sample, r.throughput_unit.as_str()),
            (1.0, "samples/s")
        );
        assert!(!r.has_sparse());
        // `with_density` sets every table
        let thin = lm.with_density(0.003);
        assert!(
            thin.layers
                .iter()
                .filter_map(|l| l.embedding.as_ref())
                .all(|e| e.density() == 0.003)
        );
    }

    /// The H200's step time between, at and beyond the batches measured:
    /// ResNet-50 at 64 and 128 samples took 33.64 and 60.85 ms (1902.4 and
    /// 2103.7 samples/s), so 96 samples take their mean, 47.24 ms (the
    /// straight line between them); at a measured batch the measurement;
    /// beyond the largest (1280) and below the smallest (32) the nearest
    /// one's rate. A row of one batch keeps one rate everywhere.
    #[test]
    fn measured_batches_set_the_step_time_between_them() {
        let p = all_presets().find(|p| p.name == "resnet50").unwrap();
        let at = |gpu: &str| *p.throughputs.iter().find(|t| t.gpu == gpu).unwrap();
        let h200 = at("h200");
        let t = |b: u32| h200.iteration_s(b);
        let (t64, t128) = (64.0 / 1902.4, 128.0 / 2103.7);
        assert!((t(96) - (t64 + t128) / 2.0).abs() < 1e-15, "{}", t(96));
        assert!((t(96) - 47.24e-3).abs() < 0.01e-3, "{}", t(96));
        assert_eq!(t(64), t64);
        assert_eq!(t(1280), 1280.0 / 2247.2);
        assert_eq!(t(4096), 4096.0 / 2247.2);
        assert_eq!(t(16), 16.0 / 1294.8);
        // the rate rises with the batch, as measured
        let rates: Vec<f64> = [16, 32, 48, 64, 100, 128, 200, 256, 640, 1000, 1280, 2000]
            .map(|b| b as f64 / t(b))
            .to_vec();
        assert!(rates.windows(2).all(|w| w[1] >= w[0]), "{rates:?}");
        // one measured batch: one rate
        let v100 = at("v100");
        assert!(v100.by_batch.is_empty());
        for b in [1, 64, 192, 4096] {
            assert_eq!(v100.iteration_s(b), b as f64 / 432.0);
        }
        // every curve lies below its row's batch, ascending, with a step
        // time that grows with the batch
        for p in all_presets() {
            for t in p.throughputs {
                let points: Vec<(u32, f64)> = t.measured().collect();
                assert!(
                    points.windows(2).all(
                        |w| w[0].0 < w[1].0 && w[0].0 as f64 / w[0].1 <= w[1].0 as f64 / w[1].1
                    ),
                    "{} on {}: {points:?}",
                    p.name,
                    t.gpu
                );
            }
        }
    }

    /// The interpolation predicts a measured batch it was not given: each
    /// H200 batch between two others, held out of its curve, from the
    /// rest. At 128 samples and more the ImageNet models' steps come
    /// within 1% (two machines' medians differ by up to 0.5% there), the
    /// CIFAR models', whose steps at these sizes are partly the host's
    /// kernel launches, within 11%; at 64 samples, between 32 and 128,
    /// where the step time bends most, within 16% (AlexNet's 15.3%). The
    /// rule it replaced, the largest batch's rate at every batch, misses
    /// every held-out batch by more but one (ResNet-20 at 512, 5.1%
    /// against 10.7%: its step from 256 to 1,024 samples is not a straight
    /// line), and by 50% or more for AlexNet at 64 and the CIFAR models at
    /// 256 and below. The data are fixed (two machines' medians, their mean
    /// where both timed a batch, so a curve can mix them), and the bounds
    /// are the worst errors observed rounded up to a whole percent: the
    /// test pins the rule and the tables generated from the measurements
    /// (a rule that predicts worse fails), not a property of GPUs. The
    /// floor under them is the machines' spread: 0.5% at 128 samples and
    /// more, up to 12% at 32 and 64.
    #[test]
    fn interpolation_predicts_held_out_batches() {
        for p in all_presets() {
            let Some(row) = p
                .throughputs
                .iter()
                .find(|t| t.gpu == "h200" && !t.by_batch.is_empty())
            else {
                continue;
            };
            let points: Vec<(u32, f64)> = row.measured().collect();
            let cifar = p.input.contains("CIFAR");
            for i in 1..points.len() - 1 {
                let (b, rate) = points[i];
                let rest: Vec<(u32, f64)> = [&points[..i], &points[i + 1..]].concat();
                let held = preset_data::GpuThroughput {
                    by_batch: Vec::leak(rest[..rest.len() - 1].to_vec()),
                    ..*row
                };
                let err = b as f64 / held.iteration_s(b) / rate - 1.0;
                let bound = match (b, cifar) {
                    (..128, _) => 0.16,
                    (_, true) => 0.11,
                    (_, false) => 0.01,
                };
                assert!(err.abs() < bound, "{} at {b}: {err}", p.name);
                let linear = row.samples_per_s / rate - 1.0;
                if (p.name, b) == ("resnet20", 512) {
                    assert!(linear.abs() < err.abs(), "{linear} against {err}");
                } else {
                    assert!(
                        linear > err.abs(),
                        "{} at {b}: {linear} against {err}",
                        p.name
                    );
                }
                if b <= 64 && p.name == "alexnet" || cifar && b <= 256 {
                    assert!(linear > 0.5, "{} at {b}: {linear}", p.name);
                }
            }
        }
    }

    /// Where the H200's entries were timed, their forward and backward
    /// times are the measured shares, and each entry's gradients are ready
    /// when PyTorch had them: ResNet-50's `layer2.1` 45.2% of the way
    /// through the backward pass (34.5 of 76.2 ms at 256 samples, the two
    /// runs' mean), where the MAC shares put it at 71.7%; the forward pass
    /// is 34.0% of the step (the MAC rule's third: 33.3%). The whole step
    /// is still the measured rate's (36 durations of whole picoseconds
    /// add to it within 18 ps). The CIFAR models, whose timing cost
    /// a quarter of their step, and GPUs without timing keep the MAC
    /// shares.
    #[test]
    fn measured_entry_shares_place_the_gradients() {
        let m = Model::from_preset("resnet50", "h200", 256).unwrap();
        let total = m.compute_time().as_secs();
        assert!((total - 256.0 / 2202.0).abs() < 36.0 * 0.5e-12, "{total}");
        let backward: f64 = m.layers.iter().map(|l| l.backward.as_secs()).sum();
        let forward = total - backward;
        assert!(
            (forward / total - 0.3397).abs() < 1e-6,
            "{}",
            forward / total
        );
        // readiness: the backward runs from the last entry to the first
        let i = m.layers.iter().position(|l| l.name == "layer2.1").unwrap();
        let ready: f64 = m.layers[i..].iter().map(|l| l.backward.as_secs()).sum();
        assert!(
            (ready / backward - 0.452).abs() < 0.001,
            "{}",
            ready / backward
        );
        // the stem's forward: 14.3% measured against 2.9% of the MACs
        let stem = m.layers[0].forward.as_secs() / forward;
        assert!((stem - 0.1434).abs() < 0.001, "{stem}");
        // the MAC rule elsewhere, to the bit: the H200's ResNet-20, the
        // V100's ResNet-50
        for (preset, gpu) in [("resnet20", "h200"), ("resnet50", "v100")] {
            let m = Model::from_preset(preset, gpu, 128).unwrap();
            let p = all_presets().find(|p| p.name == preset).unwrap();
            let t = p.throughputs.iter().find(|t| t.gpu == gpu).unwrap();
            let iter_s = t.iteration_s(128);
            let macs: u64 = p.layers.iter().map(|l| l.fwd_macs).sum();
            for (l, pl) in m.layers.iter().zip(p.layers) {
                let share = pl.fwd_macs as f64 / macs as f64;
                assert_eq!(l.forward, SimTime::from_secs(iter_s * share / 3.0));
                assert_eq!(l.backward, SimTime::from_secs(iter_s * share * 2.0 / 3.0));
            }
        }
        // every measured table has one pair an entry, each column summing to 1
        for p in all_presets() {
            for t in p.throughputs.iter().filter(|t| !t.entry_shares.is_empty()) {
                assert_eq!(t.entry_shares.len(), p.layers.len(), "{}", p.name);
                assert!(t.forward_fraction.is_some());
                let f: f64 = t.entry_shares.iter().map(|s| s.0).sum();
                let b: f64 = t.entry_shares.iter().map(|s| s.1).sum();
                assert!(
                    (f - 1.0).abs() < 1e-5 && (b - 1.0).abs() < 1e-5,
                    "{}: {f} {b}",
                    p.name
                );
            }
        }
    }

    /// The GPU compute presets of one family (NVIDIA data-centre GPUs, by
    /// generation) are ordered: on every built-in model a later GPU is
    /// never slower at the same batch. The tables mix measurements and R1
    /// derivations (docs/models.md §3), so this checks the derivations do
    /// not invert a generation. At 256 samples: the Hopper GPUs' rates are
    /// measured (and derived) batch by batch, and at small batches they
    /// fall (the H200 runs ResNet-20 at 8,939 samples/s at 64, 22,500 at
    /// 256), where the V100's and A100's single rates, each measured at
    /// one batch (or derived for the CIFAR models), are kept at every
    /// batch (docs/models.md §4); at 64 the two Hopper GPUs keep their
    /// order (by construction: D8 makes the H100 0.8486 of the H200 at
    /// every batch). The margin is thin where two derivations meet:
    /// `vgg16_cifar` at 256 on the H100 (23,762 samples/s, D8) and the
    /// A100 (23,744 at every batch, D6' from the P102-100, which the H200
    /// shows overstates these models); at 64 the A100's ResNet-20 (16,594)
    /// runs 2.2 times the H100's (7,585), an inversion of the derived
    /// tables this test does not look at.
    #[test]
    fn newer_data_centre_gpus_are_never_slower() {
        const FAMILY: [&str; 4] = ["v100", "a100", "h100", "h200"];
        let has_family = |m: &&str| {
            all_presets().find(|p| p.name == *m).is_some_and(|p| {
                FAMILY
                    .iter()
                    .all(|g| p.throughputs.iter().any(|t| t.gpu == *g))
            })
        };
        let hopper = FAMILY[2..].iter().map(|g| (g, 64));
        for model in preset_names().into_iter().filter(has_family) {
            for pair in [
                FAMILY.iter().map(|g| (g, 256)).collect::<Vec<_>>(),
                hopper.clone().collect(),
            ] {
                let times: Vec<f64> = pair
                    .iter()
                    .map(|&(gpu, batch)| {
                        Model::from_preset(model, gpu, batch)
                            .unwrap()
                            .compute_time()
                            .as_secs()
                    })
                    .collect();
                for (i, w) in times.windows(2).enumerate() {
                    assert!(
                        w[1] < w[0],
                        "{model}: {} takes {} s a batch of {}, {} takes {} s",
                        pair[i + 1].0,
                        w[1],
                        pair[i].1,
                        pair[i].0,
                        w[0]
                    );
                }
            }
        }
    }
}
