//! Human names of columns: one table, used wherever a column is shown to
//! a reader (axis titles, legends, report tables and headings). Units are
//! not here: a column's unit depends on its values' magnitude
//! (`plot::units`), and is appended to these names in parentheses.
//!
//! A result column (`sim::train::RunResult`'s fields) and the swept key
//! that sets the same thing (`cluster.nodes` and `nodes`) share a name.
//! A column not in the table is shown as it is named.

/// (column or swept key, what a reader calls it).
pub const LABELS: &[(&str, &str)] = &[
    // result columns
    ("scenario", "Scenario"),
    ("nodes", "Machines"),
    ("gpus", "GPUs"),
    ("network", "Inter-node network"),
    ("net_model", "Network model"),
    ("model", "Model"),
    ("gpu", "GPU type"),
    ("batch_per_gpu", "Batch per GPU"),
    ("dense", "Dense method"),
    ("algo", "Algorithm"),
    ("sparse", "Sparse method"),
    ("schedule", "Schedule"),
    ("iteration_time_s", "Iteration time"),
    ("throughput", "Throughput"),
    ("scaling_efficiency", "Scaling efficiency"),
    ("compute_s", "Compute"),
    ("comm_s", "Communication"),
    ("exposed_comm_s", "Exposed communication"),
    ("compression_s", "Compression"),
    ("bytes_sent_per_gpu", "Sent per GPU"),
    ("messages_per_iteration", "Messages per iteration"),
    ("events", "Simulation events"),
    ("speedup", "Speedup"),
    // swept keys
    ("iterations", "Iterations"),
    ("warmup_iterations", "Warm-up iterations"),
    ("seed", "Seed"),
    ("cluster.nodes", "Machines"),
    ("cluster.gpus_per_node", "GPUs per machine"),
    ("cluster.network", "Inter-node network"),
    ("cluster.intra", "Intra-node link"),
    ("cluster.bandwidth", "NIC bandwidth"),
    ("cluster.latency", "Inter-node latency"),
    ("cluster.intra_bandwidth", "Intra-node bandwidth"),
    ("cluster.intra_latency", "Intra-node latency"),
    ("cluster.nics_per_node", "NICs per machine"),
    ("cluster.oversubscription", "Core oversubscription"),
    ("cluster.model", "Network model"),
    ("cluster.placement", "Rank placement"),
    ("model.preset", "Model"),
    ("model.batch_per_gpu", "Batch per GPU"),
    ("model.gpu", "GPU type"),
    ("model.compute_jitter", "Compute jitter (CV)"),
    ("strategy.dense", "Dense method"),
    ("strategy.allreduce", "AllReduce algorithm"),
    ("strategy.schedule", "Schedule"),
    ("strategy.fusion", "Fusion buffer"),
    ("strategy.partition", "Partition"),
    ("strategy.local_aggregation", "Local aggregation"),
    ("strategy.ps_servers", "PS servers"),
];

/// What a reader calls `column`: its entry in [`LABELS`], else the name
/// itself. Several swept keys shown as one series (`network, preset`)
/// are named part by part.
pub fn label(column: &str) -> String {
    if let Some((_, l)) = LABELS.iter().find(|(c, _)| *c == column) {
        return l.to_string();
    }
    if column.contains(", ") {
        return column
            .split(", ")
            .map(|part| {
                LABELS
                    .iter()
                    .find(|(c, _)| *c == part || c.rsplit('.').next() == Some(part))
                    .map_or(part.to_string(), |(_, l)| l.to_string())
            })
            .collect::<Vec<_>>()
            .join(", ");
    }
    column.to_string()
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
    }

    /// Every result column has a label (a new field of RunResult must get
    /// one), and no key is listed twice.
    #[test]
    fn every_result_column_is_named_once() {
        for c in crate::sweep::result_columns() {
            if c != "throughput_unit" && c != "comm_by_channel" {
                assert!(LABELS.iter().any(|(k, _)| *k == c), "{c} has no label");
            }
        }
        let mut keys: Vec<&str> = LABELS.iter().map(|(k, _)| *k).collect();
        keys.sort();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n);
    }
}
