//! Human names of columns, with their units: one table, used wherever a
//! column is shown to a reader (axis titles, legends, report tables,
//! headings and captions, the notes a picture carries).
//!
//! A result column (`sim::train::RunResult`'s fields) and the swept key
//! that sets the same thing (`cluster.nodes` and `nodes`) share a name.
//! Each column says what it measures ([`Quantity`]); its unit follows:
//! the base unit ([`Quantity::unit`]: `s`, `samples/s`, `%`, `bytes`, `×`)
//! in [`with_unit`], and a scaled one chosen by the values' magnitude
//! (`ms`, `MiB`) where a picture or a table shows numbers (`plot::units`).
//! A column not in the table is shown as it is named, its quantity read
//! from its name (`*_s` is a time, `bytes_*` a size, `speedup*` a ratio).
//!
//! ```
//! use reports::labels::{label, with_unit};
//! assert_eq!(with_unit("exposed_comm_s"), "Exposed communication (s)");
//! assert_eq!(with_unit("scaling_efficiency"), "Scaling efficiency (%)");
//! assert_eq!(with_unit("cluster.nodes"), "Machines");
//! assert_eq!(label("my_column"), "my_column");
//! ```

/// What a column measures: its unit, and how its values are scaled for
/// reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Seconds (shown as s, ms or µs by magnitude).
    Time,
    /// Samples (or tokens) per second, in the table's `throughput_unit`.
    Throughput,
    /// A fraction of 1, shown in %.
    Fraction,
    /// Bytes (shown with binary prefixes by magnitude).
    Bytes,
    /// A ratio, ×.
    Ratio,
    /// A count, a name or a setting: no unit.
    Plain,
}

impl Quantity {
    /// The quantity of a column this table does not name, read from the
    /// name: `*_s` is a time, `throughput` a throughput, `bytes`,
    /// `bytes_*` and `*_bytes` a size, `speedup*` a ratio.
    fn by_name(column: &str) -> Quantity {
        if column.ends_with("_s") {
            Quantity::Time
        } else if column == "throughput" {
            Quantity::Throughput
        } else if column == "bytes" || column.starts_with("bytes_") || column.ends_with("_bytes") {
            Quantity::Bytes
        } else if column.starts_with("speedup") {
            Quantity::Ratio
        } else {
            Quantity::Plain
        }
    }

    /// The base unit, as a title shows it in parentheses (none for
    /// [`Quantity::Plain`]); a throughput's is `samples/s` unless the
    /// table says otherwise.
    pub fn unit(self) -> Option<&'static str> {
        match self {
            Quantity::Time => Some("s"),
            Quantity::Throughput => Some("samples/s"),
            Quantity::Fraction => Some("%"),
            Quantity::Bytes => Some("bytes"),
            Quantity::Ratio => Some("×"),
            Quantity::Plain => None,
        }
    }

    /// What the quantity is, for messages ("a time").
    pub fn describe(self) -> &'static str {
        match self {
            Quantity::Time => "a time",
            Quantity::Throughput => "a throughput",
            Quantity::Fraction => "a fraction",
            Quantity::Bytes => "a size in bytes",
            Quantity::Ratio => "a ratio",
            Quantity::Plain => "without unit",
        }
    }
}

/// One column as a reader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label {
    /// The column, or the swept key, as the table and the user spell it.
    pub column: &'static str,
    /// What a reader calls it ("Exposed communication").
    pub name: &'static str,
    /// A shorter name where space is tight (a report table's heading),
    /// when the name is long.
    pub short: Option<&'static str>,
    /// What it measures.
    pub quantity: Quantity,
}

const fn l(column: &'static str, name: &'static str, quantity: Quantity) -> Label {
    Label {
        column,
        name,
        short: None,
        quantity,
    }
}

const fn short(column: &'static str, name: &'static str, s: &'static str, q: Quantity) -> Label {
    Label {
        column,
        name,
        short: Some(s),
        quantity: q,
    }
}

use Quantity::{Bytes, Fraction, Plain, Ratio, Throughput, Time};

/// Every column and swept key a reader meets, with its name and quantity.
pub const LABELS: &[Label] = &[
    // result columns
    l("scenario", "Scenario", Plain),
    l("nodes", "Machines", Plain),
    l("gpus", "GPUs", Plain),
    l("network", "Inter-node network", Plain),
    l("net_model", "Network model", Plain),
    l("model", "Model", Plain),
    l("gpu", "GPU type", Plain),
    l("batch_per_gpu", "Batch per GPU", Plain),
    l("dense", "Dense method", Plain),
    l("algo", "Algorithm", Plain),
    l("sparse", "Sparse method", Plain),
    l("schedule", "Schedule", Plain),
    l("compute_jitter", "Compute jitter (CV)", Plain),
    l("message_overhead_s", "Message overhead", Time),
    l("nic_efficiency", "NIC efficiency", Plain),
    short("iteration_time_s", "Iteration time", "iteration", Time),
    l("throughput", "Throughput", Throughput),
    l("scaling_efficiency", "Scaling efficiency", Fraction),
    l("compute_s", "Compute", Time),
    l("comm_s", "Communication", Time),
    short(
        "exposed_comm_s",
        "Exposed communication",
        "exposed comm.",
        Time,
    ),
    l("compression_s", "Compression", Time),
    l("bytes_sent_per_gpu", "Sent per GPU", Bytes),
    l("busiest_link", "Busiest link", Plain),
    l(
        "busiest_link_utilisation",
        "Busiest link's utilisation",
        Fraction,
    ),
    l("messages_per_iteration", "Messages per iteration", Plain),
    l("events", "Simulation events", Plain),
    l("speedup", "Speedup", Ratio),
    // swept keys
    l("iterations", "Iterations", Plain),
    l("warmup_iterations", "Warm-up iterations", Plain),
    l("seed", "Seed", Plain),
    l("cluster.nodes", "Machines", Plain),
    l("cluster.gpus_per_node", "GPUs per machine", Plain),
    l("cluster.network", "Inter-node network", Plain),
    l("cluster.intra", "Intra-node link", Plain),
    l("cluster.bandwidth", "NIC bandwidth", Plain),
    l("cluster.latency", "Inter-node latency", Plain),
    l("cluster.intra_bandwidth", "Intra-node bandwidth", Plain),
    l("cluster.intra_latency", "Intra-node latency", Plain),
    l("cluster.nics_per_node", "NICs per machine", Plain),
    l("cluster.oversubscription", "Core oversubscription", Plain),
    l("cluster.model", "Network model", Plain),
    l("cluster.placement", "Rank placement", Plain),
    l("model.preset", "Model", Plain),
    l("model.batch_per_gpu", "Batch per GPU", Plain),
    l("model.gpu", "GPU type", Plain),
    l("model.compute_jitter", "Compute jitter (CV)", Plain),
    l(
        "model.embedding_placement",
        "Embedding tables' placement",
        Plain,
    ),
    l("ideal", "Ideal (no losses besides bytes)", Plain),
    l("strategy.message_overhead", "Message overhead", Plain),
    l("cluster.nic_efficiency", "NIC efficiency", Plain),
    l("model.gradient_precision", "Gradient precision", Plain),
    l("cluster.nic_link", "GPU–NIC link", Plain),
    l("cluster.node", "Node", Plain),
    l("cluster.gpudirect", "GPUDirect RDMA", Plain),
    l(
        "cluster.gpus_per_pcie_switch",
        "GPUs per PCIe switch",
        Plain,
    ),
    l("cluster.pcie_uplink", "PCIe switch uplink", Plain),
    l("strategy.dense", "Dense method", Plain),
    l("strategy.allreduce", "AllReduce algorithm", Plain),
    l("strategy.schedule", "Schedule", Plain),
    l("strategy.fusion", "Fusion buffer", Plain),
    l("strategy.partition", "Partition", Plain),
    l("strategy.local_aggregation", "Local aggregation", Plain),
    l("strategy.ps_servers", "PS servers", Plain),
    l("strategy.ps_machines", "PS server machines", Plain),
    l(
        "strategy.ps_machine_cores",
        "CPU cores per PS machine",
        Plain,
    ),
    l("training_profile", "Training profile", Plain),
    l("cluster.cpu_cores", "CPU cores per machine", Plain),
    l("model.embedding_density", "Embedding density", Plain),
    l("model.embedding_zipf", "Zipf exponent of the tokens", Plain),
    l("model.kernel_profile", "Kernel profile", Plain),
    l("strategy.sparse", "Sparse method", Plain),
    l("strategy.ps_partitions", "PS partitions", Plain),
    l("strategy.ps_placement", "PS placement", Plain),
    l("strategy.density", "Top-k density", Plain),
    l("strategy.dct_sparsity", "DCT-DP sparsity", Plain),
    l("strategy.dct_lifespan", "DCT-DP threshold life-span", Plain),
    l("strategy.mp_stages", "Model-parallel stages", Plain),
    l("strategy.mp_sparsity", "DCT-MP sparsity", Plain),
    l("strategy.mp_splits", "Model-parallel splits", Plain),
    l("strategy.mp_microbatches", "Micro-batches", Plain),
    l("strategy.vertical_scheduling", "Vertical scheduling", Plain),
    l("strategy.allgather_staging", "AllGather staging", Plain),
];

/// A custom layer's swept keys (`model.layers.I.KEY`), by what follows
/// the index.
const LAYER_KEYS: &[(&str, &str)] = &[
    ("name", "name"),
    ("params", "parameters"),
    ("forward", "forward pass"),
    ("backward", "backward pass"),
    ("activation_bytes", "activation size"),
    ("variables", "variables"),
    ("embedding.vocab", "embedding rows"),
    ("embedding.dim", "embedding width"),
    ("embedding.density", "embedding density"),
    ("embedding.tokens_per_batch", "tokens per batch"),
    ("embedding.zipf", "Zipf exponent"),
    ("embedding.padding_tokens", "padding tokens"),
    ("embedding.placement", "table placement"),
];

/// "Layer 2's embedding density" for `model.layers[2].embedding.density`
/// (as sweeps spell it) or `model.layers.2.embedding.density`.
fn layer_key(column: &str) -> Option<String> {
    let rest = column.strip_prefix("model.layers")?;
    let (index, key) = match rest.strip_prefix('[') {
        Some(r) => {
            let (i, k) = r.split_once(']')?;
            (i, k.strip_prefix('.')?)
        }
        None => rest.strip_prefix('.')?.split_once('.')?,
    };
    let i: usize = index.parse().ok()?;
    let (_, name) = LAYER_KEYS.iter().find(|(k, _)| *k == key)?;
    Some(format!("Layer {i}'s {name}"))
}

/// The table's entry for `column`.
fn entry(column: &str) -> Option<&'static Label> {
    LABELS.iter().find(|l| l.column == column)
}

/// What a reader calls `column`: its entry in [`LABELS`], else the name
/// itself. Several swept keys shown as one series (`network, preset`)
/// are named part by part.
pub fn label(column: &str) -> String {
    if let Some(l) = entry(column) {
        return l.name.to_string();
    }
    if let Some(name) = layer_key(column) {
        return name;
    }
    if column.contains(", ") {
        return column
            .split(", ")
            .map(|part| {
                LABELS
                    .iter()
                    .find(|l| l.column == part || l.column.rsplit('.').next() == Some(part))
                    .map_or(part.to_string(), |l| l.name.to_string())
            })
            .collect::<Vec<_>>()
            .join(", ");
    }
    column.to_string()
}

/// What `column` measures: its entry in [`LABELS`], else read from its
/// name.
pub fn quantity(column: &str) -> Quantity {
    entry(column).map_or_else(|| Quantity::by_name(column), |l| l.quantity)
}

/// `name (unit)`, or the name alone without a unit: a title.
pub fn titled(name: &str, unit: Option<&str>) -> String {
    match unit {
        Some(u) => format!("{name} ({u})"),
        None => name.to_string(),
    }
}

/// The column's name with its base unit: "Throughput (samples/s)",
/// "Exposed communication (s)", "GPUs".
pub fn with_unit(column: &str) -> String {
    titled(&label(column), quantity(column).unit())
}

/// The column's short name (a table heading) in a sentence's case, with
/// `unit`: "iteration (ms)", "throughput (samples/s)", "GPUs".
pub fn heading(column: &str, unit: Option<&str>) -> String {
    let name = entry(column)
        .and_then(|l| l.short)
        .map_or_else(|| in_sentence(&label(column)), str::to_string);
    titled(&name, unit)
}

/// A name as it reads inside a sentence: its first letter in lower case,
/// unless the first word is an acronym ("GPUs", "NIC bandwidth", "PS
/// servers" stay as they are; "Inter-node network" becomes "inter-node
/// network").
pub fn in_sentence(name: &str) -> String {
    // a first word with capitals inside (AllReduce, AllGather, GPUs) or a
    // proper name keeps its case
    const PROPER: &[&str] = &["Zipf", "Parallax", "EmbRace", "Horovod"];
    let first = name.split([' ', '\'']).next().unwrap_or("");
    let inner_capital = first.chars().skip(1).any(char::is_uppercase);
    let mut chars = name.chars();
    match chars.next() {
        Some(a) if a.is_uppercase() && !inner_capital && !PROPER.contains(&first) => a
            .to_lowercase()
            .chain(name[a.len_utf8()..].chars())
            .collect(),
        _ => name.to_string(),
    }
}

/// `COL=VALUE` as a reader reads it: "Inter-node network = eth-10g" (a
/// filter, a held value, a point's setting).
pub fn setting(column: &str, value: &str) -> String {
    format!("{} = {value}", label(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_columns_unknown_ones_and_joined_keys() {
        assert_eq!(label("gpus"), "GPUs");
        assert_eq!(label("cluster.nodes"), label("nodes"));
        assert_eq!(label("exposed_comm_s"), "Exposed communication");
        assert_eq!(label("my_column"), "my_column");
        assert_eq!(label("network, preset"), "Inter-node network, Model");
        assert_eq!(with_unit("gpus"), "GPUs");
        assert_eq!(with_unit("throughput"), "Throughput (samples/s)");
        assert_eq!(with_unit("scaling_efficiency"), "Scaling efficiency (%)");
        assert_eq!(with_unit("exposed_comm_s"), "Exposed communication (s)");
        assert_eq!(with_unit("bytes_sent_per_gpu"), "Sent per GPU (bytes)");
        // unknown columns: the quantity from the name
        assert_eq!(with_unit("wait_s"), "wait_s (s)");
        assert_eq!(quantity("speedup_vs_ps"), Quantity::Ratio);
        assert_eq!(quantity("model.compute_jitter"), Quantity::Plain);
    }

    /// Every key a scenario accepts at the top, in `[cluster]`, `[model]`
    /// and `[strategy]` has a name of its own (read from the scenario's
    /// own message listing the known keys, so a key added there without a
    /// name fails here), and so do a custom layer's.
    #[test]
    fn every_scenario_key_has_a_name() {
        let known = |section: &str| -> Vec<String> {
            // an unknown key in the section: the message lists the known
            let at = |name: &str| if name == section { "zzz = 1\n" } else { "" };
            let text = format!(
                "name = \"t\"\n{}[cluster]\nnodes = 1\nnetwork = \"eth-10g\"\n{}[model]\npreset = \"resnet20\"\nbatch_per_gpu = 1\n{}[strategy]\n{}",
                at(""),
                at("cluster"),
                at("model"),
                at("strategy"),
            );
            let e = sim::scenario::load_str(&text, "t.toml", "t").unwrap_err();
            let list = e.message.split("known: ").nth(1).expect("the known keys");
            list.split(", ")
                .map(|k| {
                    if section.is_empty() {
                        k.to_string()
                    } else {
                        format!("{section}.{k}")
                    }
                })
                .collect()
        };
        let mut keys = Vec::new();
        for section in ["", "cluster", "model", "strategy"] {
            keys.extend(known(section));
        }
        assert!(keys.len() > 55, "{keys:?}");
        // tables, and what names the scenario rather than a point
        let whole = [
            "name",
            "cluster",
            "model",
            "strategy",
            "sweep",
            "model.layers",
        ];
        for k in keys.iter().filter(|k| !whole.contains(&k.as_str())) {
            assert_ne!(label(k), *k, "no name for `{k}`");
        }
        assert_eq!(
            label("model.layers.0.embedding.density"),
            "Layer 0's embedding density"
        );
        assert_eq!(label("model.layers.12.forward"), "Layer 12's forward pass");
        assert_eq!(label("model.layers.x.forward"), "model.layers.x.forward");
        assert_eq!(label("model.layers[3].params"), "Layer 3's parameters");
        assert_eq!(label("model.layers[3]params"), "model.layers[3]params");
    }

    #[test]
    fn headings_and_sentences() {
        assert_eq!(heading("iteration_time_s", Some("ms")), "iteration (ms)");
        assert_eq!(heading("exposed_comm_s", Some("ms")), "exposed comm. (ms)");
        assert_eq!(
            heading("throughput", Some("tokens/s")),
            "throughput (tokens/s)"
        );
        assert_eq!(heading("gpus", None), "GPUs");
        assert_eq!(in_sentence("Inter-node network"), "inter-node network");
        assert_eq!(in_sentence("GPU type"), "GPU type");
        assert_eq!(in_sentence("PS servers"), "PS servers");
        assert_eq!(in_sentence(""), "");
        assert_eq!(in_sentence("AllReduce algorithm"), "AllReduce algorithm");
        assert_eq!(
            in_sentence("Zipf exponent of the tokens"),
            "Zipf exponent of the tokens"
        );
        assert_eq!(in_sentence("Top-k density"), "top-k density");
        assert_eq!(
            in_sentence("Layer 0's embedding density"),
            "layer 0's embedding density"
        );
        assert_eq!(
            setting("cluster.network", "eth-10g"),
            "Inter-node network = eth-10g"
        );
    }

    /// Every result column has a label (a new field of RunResult must get
    /// one), no key is listed twice, and a column's quantity agrees with
    /// what its name says where the name says one.
    #[test]
    fn every_result_column_is_named_once() {
        for c in crate::sweep::result_columns() {
            if c != "throughput_unit" && c != "comm_by_channel" {
                assert!(entry(c).is_some(), "{c} has no label");
            }
        }
        let mut keys: Vec<&str> = LABELS.iter().map(|l| l.column).collect();
        keys.sort();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n);
        for l in LABELS {
            let named = Quantity::by_name(l.column);
            assert!(
                named == Quantity::Plain || named == l.quantity,
                "{}: {:?} by name, {:?} in the table",
                l.column,
                named,
                l.quantity
            );
        }
    }
}
