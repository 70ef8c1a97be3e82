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
    /// allreduce, allgather, reducescatter, broadcast, alltoall, ps, topk
    /// (Top-k AllGather) or gtopk (gTop-k tree).
    #[arg(long)]
    op: String,
    /// Total GPUs.
    #[arg(long)]
    gpus: u32,
    /// Buffer size in bytes, or with a unit ("64MiB"); nccl-tests' meaning
    /// (allgather: the whole output; alltoall: one GPU's send buffer;
    /// topk, gtopk: the dense fp32 gradient that is sparsified).
    #[arg(long)]
    size: String,
    /// topk, gtopk: the fraction ρ of gradient elements each GPU sends,
    /// in (0, 1]; k = ρ·size/4 values, each sent with a 4-byte index.
    #[arg(long)]
    density: Option<f64>,
    /// Algorithm: allreduce ring|tree|hierarchical; ps
    /// overlapped|sequential; topk recursive-doubling|ring; gtopk tree.
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
    /// topk, gtopk: the density, k and each GPU's payload (values and
    /// indices), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    density: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    k: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_bytes: Option<u64>,
}

/// Bytes of one fp32 gradient element, and of one selected element on the
/// wire (its value and a 4-byte index; gTop-k §III: messages of 2k
/// elements).
const ELEMENT_BYTES: u64 = 4;
const SPARSE_ELEMENT_BYTES: u64 = 8;

fn bad(m: impl Into<String>) -> CliError {
    CliError::Input(m.into())
}

pub fn run(a: CollectiveArgs) -> Result<(), CliError> {
    let op = Op::from_name(&a.op).ok_or_else(|| {
        let known: Vec<_> = Op::ALL.iter().map(|o| o.name()).collect();
        bad(format!(
            "--op: unknown operation `{}`; known: {}",
            a.op,
            known.join(", ")
        ))
    })?;
    match (op.is_sparse(), a.density) {
        (true, None) => {
            return Err(bad(format!(
                "--density is required for {} (the fraction of gradient elements each GPU sends, e.g. 0.001)",
                op.name()
            )));
        }
        (true, Some(d)) if !(d > 0.0 && d <= 1.0) => {
            return Err(bad(format!("--density: {d} is not in (0, 1]")));
        }
        (false, Some(_)) => {
            return Err(bad(format!(
                "--density applies to topk and gtopk, not to {}",
                op.name()
            )));
        }
        _ => {}
    }
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
    // what the collective moves: the buffer, or for the sparse operations
    // each GPU's k selected values and their indices
    let sparse = match a.density {
        Some(d) => {
            let elements = size / ELEMENT_BYTES;
            if elements == 0 {
                return Err(bad(format!(
                    "--size: {size} bytes hold no fp32 element; {} needs at least 4",
                    op.name()
                )));
            }
            let k = ((d * elements as f64).round() as u64).max(1);
            Some((d, k, k * SPARSE_ELEMENT_BYTES))
        }
        None => None,
    };
    let moved = sparse.map_or(size, |(_, _, payload)| payload) as f64;
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
            (m.time(moved), m.bytes_sent_per_gpu(moved), "analytical")
        }
        ModelArg::Flow => {
            let o = run_flow(&coll, &cluster, moved).map_err(|e| bad(e.to_string()))?;
            (
                o.time.as_secs(),
                o.bytes_sent_per_gpu(cluster.gpus()),
                "flow",
            )
        }
    };
    // algbw: the buffer over the time (for the sparse operations, the rate
    // at which the dense gradient is synchronised); busbw: what the op
    // moves, times nccl-tests' factor (see Op::busbw_factor)
    let per_s = |bytes: f64| {
        if time_s > 0.0 {
            bytes / time_s / 1e9
        } else {
            0.0
        }
    };
    let algbw = per_s(size as f64);
    let out = Output {
        op: op.name(),
        algo: coll.algo.name(),
        model,
        gpus: a.gpus,
        size_bytes: size,
        time_s,
        algbw_gbps: algbw,
        busbw_gbps: per_s(moved) * op.busbw_factor(a.gpus),
        nodes,
        gpus_per_node: a.gpus_per_node,
        network: cluster.network.clone(),
        bytes_sent_per_gpu: sent,
        density: sparse.map(|s| s.0),
        k: sparse.map(|s| s.1),
        payload_bytes: sparse.map(|s| s.2),
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string(&out).map_err(|e| CliError::Other(e.to_string()))?
        );
    } else {
        let what = match sparse {
            Some((d, k, payload)) => format!(
                "{} at density {d} (k = {k}, {} per GPU)",
                HumanBytes(size as f64),
                HumanBytes(payload as f64)
            ),
            None => HumanBytes(size as f64).to_string(),
        };
        println!(
            "{} ({}, {} model) of {what} on {} GPUs ({} nodes x {}, {}): {:.6} ms, algbw {:.3} GB/s, busbw {:.3} GB/s, {} sent per GPU",
            out.op,
            out.algo,
            out.model,
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
