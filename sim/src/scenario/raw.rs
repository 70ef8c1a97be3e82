//! The raw layer of a scenario file: its form, checked by serde.
//!
//! Every table denies unknown keys. Fields a sweep may supply are optional
//! here; whether a value is present and meaningful is the validated layer's
//! business ([`super::validate()`]), which can then name the key and line.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An integer, or a string with a unit (sizes: `fusion = 0` or `"64MiB"`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum IntOrText {
    /// A bare integer.
    Int(i64),
    /// A quantity with a unit.
    Text(String),
}

impl<'de> Deserialize<'de> for IntOrText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = IntOrText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "an integer, or a string: a size such as \"64MiB\" (`fusion`, `partition`), or \"auto\" (`ps_partitions`)",
                )
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<IntOrText, E> {
                Ok(IntOrText::Int(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<IntOrText, E> {
                i64::try_from(v)
                    .map(IntOrText::Int)
                    .map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<IntOrText, E> {
                exact_integer(v).map(IntOrText::Int)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<IntOrText, E> {
                Ok(IntOrText::Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A float that is an exact integer (ML users write `params = 1.3e9`) as
/// that integer; any other float is refused in the user's words.
fn exact_integer<E: serde::de::Error>(v: f64) -> Result<i64, E> {
    // 2^63 is the first float beyond i64
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 2f64.powi(63) {
        Ok(v as i64)
    } else if v.is_finite() && v.fract() == 0.0 {
        // whole, but past any count a scenario holds (a review: 1e20
        // was called not whole)
        Err(E::custom(format!(
            "{v:e} is too large (a whole number here is at most {})",
            i64::MAX
        )))
    } else {
        Err(E::custom(format!("must be a whole number, got {v}")))
    }
}

/// Reads an integer key, accepting a float that is an exact integer.
fn whole<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = i64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a whole number")
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::custom(format!("{v} is too large")))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<i64, E> {
            exact_integer(v)
        }
    }
    d.deserialize_any(V).map(Some)
}

/// A whole scenario file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    /// Default: the file's stem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Default 0.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub seed: Option<i64>,
    /// Default 2.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub warmup_iterations: Option<i64>,
    /// Default 10.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub iterations: Option<i64>,
    /// The pure α-β bound: every loss besides bytes (`sim::losses`)
    /// defaults to none. Default false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal: Option<bool>,
    /// A profile written by `dtsim calibrate training`: its fitted losses
    /// replace `sim::losses`' defaults (each loss's own key still wins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub training_profile: Option<String>,
    /// Required.
    #[serde(default)]
    pub cluster: RawCluster,
    /// Required.
    #[serde(default)]
    pub model: RawModel,
    /// Defaults as documented on each key.
    #[serde(default)]
    pub strategy: RawStrategy,
    /// Keys (dotted paths) to lists of values; every combination is a point.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
}

/// `[cluster]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    /// Required, ≥ 1.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub nodes: Option<i64>,
    /// Default 1.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub gpus_per_node: Option<i64>,
    /// A node preset: a bundle of the keys below, each overridable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Required unless `node` names one: an inter-node preset or profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// Default "pcie3-x16", or the node's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intra: Option<String>,
    /// Overrides the network preset's per-NIC bandwidth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<String>,
    /// Overrides the network preset's latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<String>,
    /// Overrides the intra preset's bandwidth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intra_bandwidth: Option<String>,
    /// Overrides the intra preset's latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intra_latency: Option<String>,
    /// The GPU's PCIe link to its NICs (NVLink nodes): a PCIe preset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic_link: Option<String>,
    /// GPUs under each shared PCIe switch; default none (each GPU's PCIe
    /// link reaches the CPU directly).
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub gpus_per_pcie_switch: Option<i64>,
    /// The shared PCIe switches' uplink to the CPU: a PCIe preset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcie_uplink: Option<String>,
    /// GPUDirect RDMA; default on for RDMA networks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpudirect: Option<bool>,
    /// Default 1.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub nics_per_node: Option<i64>,
    /// Default 1.0 (non-blocking).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    /// The fraction of the network's per-NIC bandwidth collectives reach,
    /// in (0, 1]; default `sim::losses::TYPICAL_NIC_EFFICIENCY` (1.0 with
    /// `ideal`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic_efficiency: Option<f64>,
    /// Host CPU cores per machine; default 36.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_cores: Option<i64>,
    /// "flow" (default) or "analytical".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// "contiguous" (default) or "scattered".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
}

/// `[model]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawModel {
    /// A built-in model; exclusive with `layers`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Required, ≥ 1.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub batch_per_gpu: Option<i64>,
    /// Which compute table of the preset; required with `preset`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Coefficient of variation of each GPU's compute time per iteration
    /// (stragglers), in [0, 1]; default 0 (`sim::losses::Losses::defaults`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_jitter: Option<f64>,
    /// "fp32" (default), "bf16" or "fp16": the format gradients are
    /// synchronised in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gradient_precision: Option<String>,
    /// A preset's embedding tables' density (fraction of rows one GPU
    /// touches per iteration), in (0, 1]; default the preset's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_density: Option<f64>,
    /// The token model for a preset's embedding tables: the Zipf exponent
    /// of the words each GPU's batch draws (its tokens per batch follow
    /// from `batch_per_gpu` and the preset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_zipf: Option<f64>,
    /// Where a preset's embedding tables live: "gpu" (default) or "host".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_placement: Option<String>,
    /// A calibration profile (`dtsim calibrate kernels`) whose kernel
    /// models replace the device's default kernel costs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_profile: Option<String>,
    /// A custom model, in forward order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<RawLayer>,
}

/// `[[model.layers]]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLayer {
    /// Default "layerN".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Dense parameters; required.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub params: Option<i64>,
    /// Forward time at `batch_per_gpu`; required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward: Option<String>,
    /// Backward time; required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backward: Option<String>,
    /// Output activation per iteration; default 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activation_bytes: Option<IntOrText>,
    /// A sparse (embedding) part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<RawEmbedding>,
    /// The dense variables' elements, adding up to `params`; default one
    /// variable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<i64>>,
}

/// `[model.layers.embedding]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEmbedding {
    /// Rows.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub vocab: Option<i64>,
    /// Columns.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub dim: Option<i64>,
    /// Fraction of rows touched per iteration, in (0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub density: Option<f64>,
    /// Tokens per batch (token model).
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub tokens_per_batch: Option<i64>,
    /// Zipf exponent (token model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zipf: Option<f64>,
    /// Of `tokens_per_batch`, those on the padding row (token model).
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub padding_tokens: Option<i64>,
    /// Where the table lives: "gpu" (default) or "host".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
}

/// `[strategy]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStrategy {
    /// allreduce (default) | ps | topk | gtopk | dct.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense: Option<String>,
    /// ps | allgather | allreduce | alltoall; refused until the
    /// sparse-methods issue (no model has sparse parts yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sparse: Option<String>,
    /// ring (default) | tree | hierarchical.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allreduce: Option<String>,
    /// fifo (default) | priority.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Default "64MiB"; 0 = off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fusion: Option<IntOrText>,
    /// Default "4MiB".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrText>,
    /// Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_aggregation: Option<bool>,
    /// Default 0 (one per machine).
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub ps_servers: Option<i64>,
    /// Machines dedicated to the parameter servers (default 0: the
    /// servers run on the GPU machines).
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub ps_machines: Option<i64>,
    /// CPU cores of each dedicated server machine's host (default: the GPU
    /// machines' `cluster.cpu_cores`).
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub ps_machine_cores: Option<i64>,
    /// "auto" or an integer; refused until the sparse-methods issue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ps_partitions: Option<IntOrText>,
    /// topk/gtopk density ρ, in (0, 1] (default 0.001).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub density: Option<f64>,
    /// DCT-DP sparsity η, in [0, 1) (default 0.95).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dct_sparsity: Option<f64>,
    /// DCT-DP threshold life-span L ≥ 1 (default 1000).
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub dct_lifespan: Option<i64>,
    /// Model-parallel stages; default 1 (data parallelism alone).
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub mp_stages: Option<i64>,
    /// DCT-MP sparsity, in [0, 1) (default 0); with `mp_stages` > 1 only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mp_sparsity: Option<f64>,
    /// Layers after which a model-parallel stage ends, by name, in forward
    /// order (default: stages balanced by compute).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mp_splits: Option<Vec<String>>,
    /// Micro-batches a trainer's batch is cut into, pipelined through the
    /// stages (GPipe); default 1; with `mp_stages` > 1 only.
    #[serde(
        default,
        deserialize_with = "whole",
        skip_serializing_if = "Option::is_none"
    )]
    pub mp_microbatches: Option<i64>,
    /// EmbRace prior/delayed rows; refused until the sparse-methods issue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vertical_scheduling: Option<bool>,
    /// Sparse AllGather: `"none"` (the GPUs' buffers gathered directly) or
    /// `"host"` (through host memory, Horovod's CPU AllGather kernel).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allgather_staging: Option<String>,
    /// Dense PS: `"sharded"` (every variable spread evenly over the
    /// servers) or `"whole"` (each variable on one server, TensorFlow's
    /// greedy placement and server CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ps_placement: Option<String>,
    /// What each message costs its channel before its transfer ("8.4us");
    /// default `sim::losses::TYPICAL_MESSAGE_OVERHEAD_S` (0 with `ideal`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_overhead: Option<String>,
}
