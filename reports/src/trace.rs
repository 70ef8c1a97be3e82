//! Timelines as Chrome trace-event files.
//!
//! The format is the JSON "trace event" format that Perfetto and
//! chrome://tracing load: an object with a `traceEvents` array. Times are
//! microseconds.
//!
//! * One process per GPU (named `GPU g (node n)`), with a `compute` thread
//!   (forward and backward passes, named by layer, and the waits of the
//!   next forward pass on a layer's parameters) and a `communication`
//!   thread (each fused collective message, named by operation, size and
//!   the layers it carries).
//! * Flow arrows from each GPU's message to the same message on its ring
//!   successor, showing who sends to whom.
//! * A counter per GPU, `send rate (GB/s)`: the bytes the GPU sends for a
//!   message over the message's duration.
//!
//! All GPUs run in lockstep in dtsim's data-parallel model, so their tracks
//! are identical; a trace of thousands of GPUs is mostly repetition, hence
//! `max_gpus`.

use serde_json::{Value, json};
use sim::SimTime;
use sim::train::{Timeline, TrainConfig};

fn us(t: SimTime) -> f64 {
    t.as_secs() * 1e6
}

fn human_bytes(b: u64) -> String {
    sim::units::HumanBytes(b as f64).to_string()
}

/// Builds the trace of `timeline` for the first `max_gpus` GPUs of `cfg`.
pub fn chrome_trace(cfg: &TrainConfig, timeline: &Timeline, max_gpus: u32) -> Value {
    let gpus = cfg.cluster.gpus();
    let shown = gpus.min(max_gpus.max(1));
    let coll = cfg.strategy.dense_collective();
    let op = format!("{}/{}", coll.op.name(), coll.algo.name());
    let layer_name = |l: u32| cfg.model.layers[l as usize].name.as_str();
    let mut ev: Vec<Value> = Vec::new();
    for g in 0..shown {
        let node = cfg.cluster.node_of_gpu(g);
        ev.push(json!({"ph": "M", "name": "process_name", "pid": g, "args": {"name": format!("GPU {g} (node {node})")}}));
        ev.push(
            json!({"ph": "M", "name": "process_sort_index", "pid": g, "args": {"sort_index": g}}),
        );
        ev.push(json!({"ph": "M", "name": "thread_name", "pid": g, "tid": 0, "args": {"name": "compute"}}));
        ev.push(json!({"ph": "M", "name": "thread_name", "pid": g, "tid": 1, "args": {"name": "communication"}}));
        for c in &timeline.compute {
            let pass = if c.forward { "fwd" } else { "bwd" };
            ev.push(json!({
                "ph": "X", "pid": g, "tid": 0, "cat": "compute",
                "name": format!("{pass} {}", layer_name(c.layer)),
                "ts": us(c.start), "dur": us(c.end) - us(c.start),
                "args": {"iteration": c.iter, "layer": c.layer, "pass": pass},
            }));
        }
        for s in &timeline.stalls {
            ev.push(json!({
                "ph": "X", "pid": g, "tid": 0, "cat": "stall",
                "name": format!("wait for {} parameters", layer_name(s.layer)),
                "ts": us(s.start), "dur": us(s.end) - us(s.start),
                "args": {"iteration": s.iter, "layer": s.layer},
            }));
        }
        for (i, m) in timeline.comm.iter().enumerate() {
            let first = m.pieces.iter().map(|p| p.1).min().unwrap_or(0);
            let last = m.pieces.iter().map(|p| p.1).max().unwrap_or(0);
            let layers = if first == last {
                layer_name(first).to_string()
            } else {
                format!("{}..{}", layer_name(first), layer_name(last))
            };
            let (ts, te) = (us(m.start), us(m.end));
            ev.push(json!({
                "ph": "X", "pid": g, "tid": 1, "cat": "communication",
                "name": format!("{op} {} [{layers}]", human_bytes(m.bytes)),
                "ts": ts, "dur": te - ts,
                "args": {
                    "bytes": m.bytes,
                    "bytes_sent_per_gpu": m.sent_per_gpu,
                    "pieces": m.pieces.len(),
                    "iterations": m.pieces.iter().map(|p| p.0).collect::<std::collections::BTreeSet<_>>(),
                },
            }));
            if shown > 1 {
                // an arrow to the ring successor's copy of the message
                let id = i as u64 * shown as u64 + g as u64;
                let next = (g + 1) % shown;
                ev.push(json!({"ph": "s", "pid": g, "tid": 1, "cat": "transfer", "name": "send", "id": id, "ts": ts}));
                ev.push(json!({"ph": "f", "bp": "e", "pid": next, "tid": 1, "cat": "transfer", "name": "send", "id": id, "ts": te}));
            }
            let rate = if te > ts {
                m.sent_per_gpu / ((te - ts) * 1e-6) / 1e9
            } else {
                0.0
            };
            ev.push(json!({"ph": "C", "pid": g, "name": "send rate (GB/s)", "ts": ts, "args": {"GB/s": rate}}));
            ev.push(json!({"ph": "C", "pid": g, "name": "send rate (GB/s)", "ts": te, "args": {"GB/s": 0.0}}));
        }
    }
    json!({
        "traceEvents": ev,
        "displayTimeUnit": "ms",
        "otherData": {
            "scenario": cfg.name,
            "gpus": gpus,
            "gpus_shown": shown,
            "collective": op,
            "iteration_starts_us": timeline.iteration_starts.iter().map(|&t| us(t)).collect::<Vec<_>>(),
        },
    })
}
