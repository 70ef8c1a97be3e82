//! `dtsim collective`: the time of one collective on a cluster.

use crate::CliError;
use clap::{Args, ValueEnum};
use serde::Serialize;
use sim::cluster::{ClusterSpec, LinkParams, Placement, presets};
use sim::collective::exec::run_flow;
use sim::collective::{Algo, Collective, Op};
use sim::limits;
use sim::units::{HumanBytes, parse_bandwidth, parse_bytes, parse_seconds};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ModelArg {
    Analytical,
    Flow,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum PlacementArg {
    Contiguous,
    Scattered,
}

/// Arguments of `dtsim collective`.
#[derive(Debug, Args)]
pub struct CollectiveArgs {
    /// allreduce, allgather, reducescatter, broadcast, alltoall or ps.
    #[arg(long)]
    op: String,
    /// Total GPUs.
    #[arg(long)]
    gpus: u32,
    /// Buffer size in bytes, or with a unit ("64MiB"); nccl-tests' meaning
    /// (allgather: the whole output; alltoall: one GPU's send buffer).
    #[arg(long)]
    size: String,
    /// Algorithm: allreduce ring|tree|hierarchical; ps overlapped|sequential.
    #[arg(long)]
    algo: Option<String>,
    /// GPUs per node (must divide --gpus).
    #[arg(long, default_value_t = 1)]
    gpus_per_node: u32,
    /// Inter-node network preset.
    #[arg(long, default_value = "ib-edr-100g")]
    network: String,
    /// Intra-node link preset.
    #[arg(long, default_value = "pcie3-x16")]
    intra: String,
    /// Per-NIC bandwidth, overriding the preset ("100Gbps", "12.5GB/s").
    #[arg(long)]
    bandwidth: Option<String>,
    /// Inter-node latency, overriding the preset ("1.5us").
    #[arg(long)]
    latency: Option<String>,
    /// NICs per node.
    #[arg(long, default_value_t = 1)]
    nics_per_node: u32,
    /// Core oversubscription ratio (1 = non-blocking).
    #[arg(long, default_value_t = 1.0)]
    oversubscription: f64,
    /// Rank placement.
    #[arg(long, value_enum, default_value_t = PlacementArg::Contiguous)]
    placement: PlacementArg,
    /// Network model.
    #[arg(long, value_enum, default_value_t = ModelArg::Flow)]
    model: ModelArg,
    /// PS servers (0 = one per node).
    #[arg(long, default_value_t = 0)]
    servers: u32,
    /// PS: aggregate the GPUs of a node before pushing.
    #[arg(long)]
    local_aggregation: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Output {
    op: &'static str,
    algo: &'static str,
    model: &'static str,
    gpus: u32,
    size_bytes: u64,
    time_s: f64,
    #[serde(rename = "algbw_GBps")]
    algbw_gbps: f64,
    #[serde(rename = "busbw_GBps")]
    busbw_gbps: f64,
    nodes: u32,
    gpus_per_node: u32,
    network: String,
    bytes_sent_per_gpu: f64,
}

fn bad(m: impl Into<String>) -> CliError {
    CliError::Input(m.into())
}

pub fn run(a: CollectiveArgs) -> Result<(), CliError> {
    let op = Op::from_name(&a.op).ok_or_else(|| {
        let known: Vec<_> = Op::ALL.iter().map(|o| o.name()).collect();
        let later = if matches!(a.op.as_str(), "topk" | "gtopk") {
            " (topk and gtopk arrive with the compression issue)"
        } else {
            ""
        };
        bad(format!(
            "--op: unknown operation `{}`{later}; known: {}",
            a.op,
            known.join(", ")
        ))
    })?;
    let mut coll = Collective::new(op);
    if let Some(name) = &a.algo {
        let algo = Algo::from_name(name);
        coll = algo.and_then(|al| coll.with_algo(al)).ok_or_else(|| {
            let known: Vec<_> = op.algorithms().iter().map(|x| x.name()).collect();
            bad(format!(
                "--algo: `{name}` is not an algorithm of {}; expected one of {}",
                op.name(),
                known.join(", ")
            ))
        })?;
    }
    coll.ps_servers = a.servers;
    coll.local_aggregation = a.local_aggregation;
    if a.gpus == 0 {
        return Err(bad("--gpus must be at least 1"));
    }
    if a.gpus as u64 > limits::MAX_GPUS {
        return Err(bad(format!("--gpus: at most {} GPUs", limits::MAX_GPUS)));
    }
    if a.gpus_per_node == 0 || !a.gpus.is_multiple_of(a.gpus_per_node) {
        return Err(bad(format!(
            "--gpus-per-node {} must be ≥ 1 and divide --gpus {}",
            a.gpus_per_node, a.gpus
        )));
    }
    if a.nics_per_node == 0 || a.nics_per_node > a.gpus_per_node.max(64) {
        return Err(bad(
            "--nics-per-node must be at least 1 and at most max(--gpus-per-node, 64)",
        ));
    }
    limits::check_oversubscription(a.oversubscription)
        .map_err(|m| bad(format!("--oversubscription: {m}")))?;
    let size = parse_bytes(&a.size).map_err(|e| bad(format!("--size: {e}")))?;
    if size > limits::MAX_BYTES {
        return Err(bad(format!("--size: at most {} bytes", limits::MAX_BYTES)));
    }
    let inter = presets::inter_node(&a.network).ok_or_else(|| {
        let known: Vec<_> = presets::INTER_NODE.iter().map(|p| p.name).collect();
        bad(format!(
            "--network: unknown preset `{}`; known: {}",
            a.network,
            known.join(", ")
        ))
    })?;
    let intra = presets::intra_node(&a.intra).ok_or_else(|| {
        let known: Vec<_> = presets::INTRA_NODE.iter().map(|p| p.name).collect();
        bad(format!(
            "--intra: unknown preset `{}`; known: {}",
            a.intra,
            known.join(", ")
        ))
    })?;
    let bandwidth = match &a.bandwidth {
        Some(b) => parse_bandwidth(b).map_err(|e| bad(format!("--bandwidth: {e}")))?,
        None => inter.bandwidth_bytes_per_s,
    };
    limits::check_bandwidth(bandwidth).map_err(|m| bad(format!("--bandwidth: {m}")))?;
    let latency = match &a.latency {
        Some(l) => parse_seconds(l).map_err(|e| bad(format!("--latency: {e}")))?,
        None => inter.latency_s,
    };
    limits::check_latency(latency).map_err(|m| bad(format!("--latency: {m}")))?;
    let nodes = a.gpus / a.gpus_per_node;
    if op == Op::Ps && coll.servers(&ClusterSpec::flat(nodes, 1.0, 0.0)) > 64 * nodes {
        return Err(bad("--servers: more than 64 servers per node"));
    }
    let cluster = ClusterSpec {
        nodes,
        gpus_per_node: a.gpus_per_node,
        network: if a.bandwidth.is_some() || a.latency.is_some() {
            format!("{}*", a.network)
        } else {
            a.network.clone()
        },
        inter: LinkParams { bandwidth, latency },
        intra_name: a.intra.clone(),
        intra: LinkParams {
            bandwidth: intra.bandwidth_bytes_per_s,
            latency: intra.latency_s,
        },
        nics_per_node: a.nics_per_node,
        oversubscription: a.oversubscription,
        placement: match a.placement {
            PlacementArg::Contiguous => Placement::Contiguous,
            PlacementArg::Scattered => Placement::Scattered,
        },
    };
    let (time_s, sent, model) = match a.model {
        ModelArg::Analytical => {
            let m = coll.analytical(&cluster);
            (
                m.time(size as f64),
                m.bytes_sent_per_gpu(size as f64),
                "analytical",
            )
        }
        ModelArg::Flow => {
            let o = run_flow(&coll, &cluster, size as f64).map_err(|e| bad(e.to_string()))?;
            (
                o.time.as_secs(),
                o.bytes_sent_per_gpu(cluster.gpus()),
                "flow",
            )
        }
    };
    let algbw = if time_s > 0.0 {
        size as f64 / time_s / 1e9
    } else {
        0.0
    };
    let out = Output {
        op: op.name(),
        algo: coll.algo.name(),
        model,
        gpus: a.gpus,
        size_bytes: size,
        time_s,
        algbw_gbps: algbw,
        busbw_gbps: algbw * op.busbw_factor(a.gpus),
        nodes,
        gpus_per_node: a.gpus_per_node,
        network: cluster.network.clone(),
        bytes_sent_per_gpu: sent,
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string(&out).map_err(|e| CliError::Other(e.to_string()))?
        );
    } else {
        println!(
            "{} ({}, {} model) of {} on {} GPUs ({} nodes x {}, {}): {:.6} ms, algbw {:.3} GB/s, busbw {:.3} GB/s, {} sent per GPU",
            out.op,
            out.algo,
            out.model,
            HumanBytes(size as f64),
            out.gpus,
            nodes,
            a.gpus_per_node,
            out.network,
            time_s * 1e3,
            out.algbw_gbps,
            out.busbw_gbps,
            HumanBytes(sent)
        );
    }
    Ok(())
}
