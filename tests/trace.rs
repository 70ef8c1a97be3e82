//! The link-utilisation counters of `dtsim run --trace`: their values
//! against the closed forms of communication-bound scenarios, and their
//! range on every kind of collective and cluster.

use reports::trace::{LINK_UTILISATION, chrome_trace};
use serde_json::Value;
use sim::cluster::Topology;
use sim::scenario::load_str;
use sim::train::{TrainConfig, simulate_traced};
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

/// Writes a scenario into the test's scratch directory.
fn scenario(name: &str, text: &str) -> PathBuf {
    // the model's mechanics: no losses besides bytes (as `config`)
    common::scratch_file("trace-scenarios", name, &format!("ideal = true\n{text}"))
}

fn config(text: &str) -> TrainConfig {
    // the model's mechanics: no losses besides bytes
    let points = load_str(&format!("ideal = true\n{text}"), "t.toml", "t").expect("valid scenario");
    assert_eq!(points.len(), 1);
    points[0].config.clone()
}

/// A one-layer model (25M parameters: a 100 MB fp32 gradient) on `nodes`
/// single-GPU nodes of 10 GbE: nothing overlaps the one message per
/// iteration, which the NIC's bandwidth bounds.
fn comm_bound(nodes: u32, extra_cluster: &str, strategy: &str) -> String {
    format!(
        r#"
warmup_iterations = 0
iterations = 2
[cluster]
nodes = {nodes}
network = "eth-10g"
{extra_cluster}
[model]
batch_per_gpu = 8
[[model.layers]]
name = "big"
params = 25000000
forward = "1ms"
backward = "2ms"
[strategy]
fusion = 0
{strategy}
"#
    )
}

/// (start µs, duration µs) of every communication slice of GPU `pid`.
fn messages(t: &Value, pid: u64) -> Vec<(f64, f64)> {
    t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "communication" && e["pid"] == pid)
        .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
        .collect()
}

/// The link-utilisation counter of GPU `pid` set at `ts`.
fn counter_at(t: &Value, pid: u64, ts: f64) -> serde_json::Map<String, Value> {
    let hits: Vec<&Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["ph"] == "C"
                && e["name"] == LINK_UTILISATION
                && e["pid"] == pid
                // `ts` may be a start plus a duration, each rounded to µs
                // floats: a picosecond of slack
                && e["ts"].as_f64().is_some_and(|t| (t - ts).abs() <= 1e-6)
        })
        .collect();
    assert_eq!(hits.len(), 1, "one counter event of GPU {pid} at {ts} µs");
    hits[0]["args"].as_object().unwrap().clone()
}

fn pct(args: &serde_json::Map<String, Value>, key: &str) -> f64 {
    args.get(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no `{key}` in {args:?}"))
}

/// Every link-utilisation value of a trace, in percent.
fn all_values(t: &Value) -> Vec<f64> {
    t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == LINK_UTILISATION)
        .flat_map(|e| e["args"].as_object().unwrap().values())
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// Ring AllReduce of m = 100 MB over N = 4 single-GPU nodes on 10 GbE,
/// flow model, run through the binary. Each NIC uplink carries
/// 2(N−1)/N·m (BaiduRing), so during a message of duration d it is
/// u = 2(N−1)/N·m / (d·B). The ring's 2(N−1) steps each wait the path
/// latency α (inter + intra preset) and move m/N at B with nothing else on
/// the link, so d = 2(N−1)(α + m/(N·B)) and u = 1 − 2(N−1)α/d.
///
/// Tolerances: the first identity only reorders float operations on the
/// same inputs (µs in the trace vs picoseconds in the simulator), 1e-9
/// relative. In the second, the flow model rounds each step's latency to
/// the nearest picosecond and its transfer up to the next one: at most
/// 1.5 ps per step, 2(N−1)·1.5 ps over the message, which bounds the
/// error of u by 2(N−1)·1.5 ps / d (plus 1e-12 for float rounding).
#[test]
fn ring_nic_utilisation_is_the_bandwidth_share_of_the_message() {
    let n = 4u32;
    let text = comm_bound(n, "model = \"flow\"", "");
    let cfg = config(&text);
    let p = scenario("ring-10g.toml", &text);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ring-10g-trace.json");
    let o = Command::new(env!("CARGO_BIN_EXE_dtsim"))
        .args(["run", p.to_str().unwrap(), "--trace", out.to_str().unwrap()])
        .output()
        .expect("dtsim runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();

    let m = 25e6 * 4.0;
    let nf = n as f64;
    let b = cfg.cluster.inter.bandwidth;
    let b_intra = cfg.cluster.intra.bandwidth;
    let alpha = cfg.cluster.inter.latency + cfg.cluster.intra.latency;
    let steps = 2.0 * (nf - 1.0);
    assert_eq!(
        t["otherData"]["link_bandwidth_bytes_per_s"]["NIC"].as_f64(),
        Some(b)
    );
    for pid in 0..n as u64 {
        let msgs = messages(&t, pid);
        assert_eq!(msgs.len(), 2, "one message per iteration");
        for (ts, dur) in msgs {
            let d = dur * 1e-6;
            let c = counter_at(&t, pid, ts);
            let mut keys: Vec<&str> = c.keys().map(String::as_str).collect();
            keys.sort();
            assert_eq!(keys, ["NIC 0 down", "NIC 0 up", "intra down", "intra up"]);
            let u = pct(&c, "NIC 0 up") / 100.0;
            let want = steps / nf * m / (d * b);
            assert!((u - want).abs() <= 1e-9 * want, "NIC up {u} vs {want}");
            assert!((pct(&c, "NIC 0 down") / 100.0 - want).abs() <= 1e-9 * want);
            let want_intra = steps / nf * m / (d * b_intra);
            let ui = pct(&c, "intra up") / 100.0;
            assert!((ui - want_intra).abs() <= 1e-9 * want_intra, "{ui}");
            // bandwidth bound: 1 minus the latency share
            let latency_share = steps * alpha / d;
            let tol = steps * 1.5e-12 / d + 1e-12;
            assert!(
                (u - (1.0 - latency_share)).abs() <= tol,
                "u = {u}, 1 − 2(N−1)α/d = {}",
                1.0 - latency_share
            );
            assert!(u > 0.99 && u <= 1.0, "communication-bound: {u}");
            // back to zero when the message ends
            let end = counter_at(&t, pid, ts + dur);
            assert!(end.values().all(|v| v.as_f64() == Some(0.0)), "{end:?}");
        }
    }
    // the old per-GPU send-rate counter is gone
    assert!(
        t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["ph"] != "C" || e["name"] == LINK_UTILISATION)
    );
}

/// PS with one server per node, overlapped, on n = 4 single-GPU nodes,
/// analytical model. A node's NIC uplink carries its worker's pushes to
/// the n−1 remote servers and its server's pulls to the n−1 remote
/// workers, 2(n−1)/n·m. The collective is one latency α of "ready"
/// signals, then one step of concurrent pushes and pulls that costs
/// α + 2(n−1)/n·m/B on the NIC: d = 2α + 2(n−1)/n·m/B and the NIC uplink's
/// utilisation is u = 2(n−1)/n·m/(d·B) = 1 − 2α/d. Tolerance: the
/// analytical time is rounded to the nearest picosecond, 0.5 ps / d, plus
/// 1e-12 for float rounding.
#[test]
fn ps_nic_utilisation_matches_the_parallax_loads() {
    let n = 4u32;
    let text = comm_bound(n, "model = \"analytical\"", "dense = \"ps\"");
    let cfg = config(&text);
    let (_, timeline) = simulate_traced(&cfg).unwrap();
    let t = chrome_trace(&cfg, &timeline, n);
    let m = 25e6 * 4.0;
    let nf = n as f64;
    let b = cfg.cluster.inter.bandwidth;
    let alpha = cfg.cluster.inter.latency + cfg.cluster.intra.latency;
    for pid in 0..n as u64 {
        for (ts, dur) in messages(&t, pid) {
            let d = dur * 1e-6;
            let c = counter_at(&t, pid, ts);
            for key in ["NIC 0 up", "NIC 0 down"] {
                let u = pct(&c, key) / 100.0;
                let want = 2.0 * (nf - 1.0) / nf * m / (d * b);
                assert!((u - want).abs() <= 1e-9 * want, "{key}: {u} vs {want}");
                let tol = 0.5e-12 / d + 1e-12;
                assert!((u - (1.0 - 2.0 * alpha / d)).abs() <= tol, "{key}: {u}");
            }
        }
    }
}

/// Dedicated server machines (`strategy.ps_machines`) appear after the
/// GPUs, a process each (`server machine m`) holding its NIC's counter:
/// with 2 machines of one server for 4 single-GPU nodes, each server
/// receives every GPU's half of the 100 MB gradient and sends it back, so
/// during a message of duration d its NIC carries N·m/S each way:
/// u = N·m/(S·d·B), the same identity's 1e-9 as above. A trace of 2 GPUs
/// shows 2 machines; one of 1 GPU, 1.
#[test]
fn dedicated_server_machines_show_their_nics() {
    let n = 4u32;
    let text = comm_bound(
        n,
        "model = \"analytical\"",
        "dense = \"ps\"\nps_machines = 2",
    );
    let cfg = config(&text);
    let (_, timeline) = simulate_traced(&cfg).unwrap();
    let t = chrome_trace(&cfg, &timeline, n);
    let names: Vec<(u64, String)> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(names.contains(&(4, "server machine 0".into())), "{names:?}");
    assert!(names.contains(&(5, "server machine 1".into())), "{names:?}");
    let m = 25e6 * 4.0;
    let b = cfg.cluster.inter.bandwidth;
    let gpu_messages = messages(&t, 0);
    assert!(!gpu_messages.is_empty());
    for pid in [4u64, 5] {
        for &(ts, dur) in &gpu_messages {
            let c = counter_at(&t, pid, ts);
            let want = n as f64 * m / (2.0 * dur * 1e-6 * b);
            for key in ["NIC up", "NIC down"] {
                let u = pct(&c, key) / 100.0;
                assert!(
                    (u - want).abs() <= 1e-9 * want,
                    "{pid} {key}: {u} vs {want}"
                );
            }
        }
    }
    for (shown, machines) in [(2u32, 2usize), (1, 1)] {
        let t = chrome_trace(&cfg, &timeline, shown);
        let servers = t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e["ph"] == "M"
                    && e["name"] == "process_name"
                    && e["args"]["name"]
                        .as_str()
                        .unwrap()
                        .starts_with("server machine")
            })
            .count();
        assert_eq!(servers, machines, "{shown} GPUs shown");
    }
}

/// On every collective, network model and cluster shape (several GPUs per
/// node, two NICs, an oversubscribed core, scattered placement), every
/// counter value lies in [0, 100] %, every shown GPU has a counter per
/// message naming its own NIC (and the core when oversubscribed), and the
/// unclamped utilisation of every link of the cluster during every message
/// is at most 1 up to the picosecond rounding of the message's duration
/// (the bound of `sim::collective::links`).
#[test]
fn utilisation_stays_within_0_and_1_everywhere() {
    let clusters = [
        "nodes = 3\ngpus_per_node = 4\nnics_per_node = 2",
        "nodes = 4\ngpus_per_node = 2\noversubscription = 3.0\nplacement = \"scattered\"",
        "nodes = 1\ngpus_per_node = 4",
    ];
    let strategies = [
        "allreduce = \"ring\"",
        "allreduce = \"tree\"",
        "allreduce = \"hierarchical\"",
        "dense = \"ps\"",
        "dense = \"ps\"\nlocal_aggregation = false\nps_servers = 1",
    ];
    for cluster in clusters {
        for model in ["flow", "analytical"] {
            for strategy in strategies {
                let text = format!(
                    r#"
warmup_iterations = 1
iterations = 2
[cluster]
network = "ib-edr-100g"
intra = "nvlink2"
model = "{model}"
{cluster}
[model]
preset = "resnet50"
batch_per_gpu = 32
gpu = "titan-xp"
[strategy]
schedule = "priority"
{strategy}
"#
                );
                let cfg = config(&text);
                let what = format!("{cluster} / {model} / {strategy}");
                let (_, timeline) = simulate_traced(&cfg).unwrap();
                let shown = cfg.cluster.gpus().min(8);
                let t = chrome_trace(&cfg, &timeline, shown);
                // the PCIe counters' capacity, to turn them into bytes/s
                let caps = Topology::new(&cfg.cluster);
                assert_eq!(
                    t["otherData"]["link_bandwidth_bytes_per_s"]["PCIe"].as_f64(),
                    Some(caps.capacities()[caps.pcie_up(0) as usize]),
                    "{what}"
                );
                let values = all_values(&t);
                assert!(!values.is_empty(), "{what}");
                for v in values {
                    assert!((0.0..=100.0).contains(&v), "{what}: {v} %");
                }
                for pid in 0..shown {
                    let nic = cfg.cluster.nic_of_gpu(pid, 1);
                    for (ts, _) in messages(&t, pid as u64) {
                        let c = counter_at(&t, pid as u64, ts);
                        let mut want = vec!["intra down".to_string(), "intra up".into()];
                        // NVLink nodes: the GPU's own PCIe link to its NIC
                        want.extend(["PCIe down".to_string(), "PCIe up".into()]);
                        if cfg.cluster.nodes > 1 {
                            want.extend([format!("NIC {nic} down"), format!("NIC {nic} up")]);
                            if cfg.cluster.oversubscription > 1.0 {
                                want.extend(["core down".into(), "core up".into()]);
                            }
                        }
                        want.sort();
                        let mut keys: Vec<String> = c.keys().cloned().collect();
                        keys.sort();
                        assert_eq!(keys, want, "{what}");
                    }
                }
                // the unclamped values, on every link of the cluster
                let topo = Topology::new(&cfg.cluster);
                let coll = cfg.strategy.dense_collective();
                let per_byte = coll.link_bytes(&cfg.cluster, 1.0);
                for msg in &timeline.comm {
                    let d = (msg.end - msg.start).as_secs();
                    for (l, (&w, &cap)) in per_byte.iter().zip(topo.capacities()).enumerate() {
                        let u = msg.bytes as f64 * w / (d * cap);
                        assert!(
                            u <= 1.0 + 0.5e-12 / d + 1e-12,
                            "{what}: {} at {u}",
                            topo.link_name(l as u32)
                        );
                    }
                }
            }
        }
    }
}

/// For each GPU process, the set of processes its flow arrows point at
/// (pairing each `s` event with the `f` event of the same id).
fn arrows(t: &Value) -> std::collections::BTreeMap<u64, std::collections::BTreeSet<u64>> {
    let ev = t["traceEvents"].as_array().unwrap();
    let mut start = std::collections::BTreeMap::new();
    for e in ev.iter().filter(|e| e["ph"] == "s") {
        assert!(
            start
                .insert(e["id"].as_u64().unwrap(), e["pid"].as_u64().unwrap())
                .is_none(),
            "arrow ids are unique"
        );
    }
    let mut out: std::collections::BTreeMap<u64, std::collections::BTreeSet<u64>> =
        Default::default();
    for e in ev.iter().filter(|e| e["ph"] == "f") {
        let from = start[&e["id"].as_u64().unwrap()];
        out.entry(from)
            .or_default()
            .insert(e["pid"].as_u64().unwrap());
    }
    out
}

#[test]
fn flow_arrows_follow_the_collectives_peers() {
    use std::collections::{BTreeMap, BTreeSet};
    let set = |v: &[u64]| v.iter().copied().collect::<BTreeSet<u64>>();
    // a ring over 4 GPUs (2 nodes × 2): each sends to the next, 3 to 0
    let text = comm_bound(2, "gpus_per_node = 2", "");
    let cfg = config(&text);
    let (_, tl) = simulate_traced(&cfg).unwrap();
    let a = arrows(&chrome_trace(&cfg, &tl, 4));
    let want: BTreeMap<u64, BTreeSet<u64>> = [
        (0, set(&[1])),
        (1, set(&[2])),
        (2, set(&[3])),
        (3, set(&[0])),
    ]
    .into();
    assert_eq!(a, want);
    // one arrow per message per GPU
    let t = chrome_trace(&cfg, &tl, 4);
    let n = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "s")
        .count();
    assert_eq!(n, 4 * messages(&t, 0).len());
    // shown GPUs only: with 3 shown, GPU 2's successor (3) is not drawn
    let a = arrows(&chrome_trace(&cfg, &tl, 3));
    assert_eq!(a, [(0, set(&[1])), (1, set(&[2]))].into());
    // a binomial tree over 4 single-GPU nodes: reduce 1→0 and 3→2, then
    // 2→0; broadcast, its mirror, 0→2, then 0→1 and 2→3
    let text = comm_bound(4, "", "allreduce = \"binomial\"");
    let cfg = config(&text);
    let (_, tl) = simulate_traced(&cfg).unwrap();
    let want: BTreeMap<u64, BTreeSet<u64>> = [
        (0, set(&[1, 2])),
        (1, set(&[0])),
        (2, set(&[0, 3])),
        (3, set(&[2])),
    ]
    .into();
    assert_eq!(arrows(&chrome_trace(&cfg, &tl, 4)), want);
    // a parameter server with local aggregation: the GPUs of a node reduce
    // to their leader and receive from it (the pushes and pulls go to host
    // processes, which have no arrows)
    let text = comm_bound(2, "gpus_per_node = 2", "dense = \"ps\"");
    let cfg = config(&text);
    let (_, tl) = simulate_traced(&cfg).unwrap();
    let want: BTreeMap<u64, BTreeSet<u64>> = [
        (0, set(&[1])),
        (1, set(&[0])),
        (2, set(&[3])),
        (3, set(&[2])),
    ]
    .into();
    assert_eq!(arrows(&chrome_trace(&cfg, &tl, 4)), want);
    // without it every GPU talks only to the servers: no arrows
    let text = comm_bound(
        2,
        "gpus_per_node = 2",
        "dense = \"ps\"\nlocal_aggregation = false",
    );
    let cfg = config(&text);
    let (_, tl) = simulate_traced(&cfg).unwrap();
    assert!(arrows(&chrome_trace(&cfg, &tl, 4)).is_empty());
}

#[test]
fn the_streamed_trace_is_the_in_memory_one() {
    let text = comm_bound(2, "gpus_per_node = 2", "allreduce = \"tree\"");
    let cfg = config(&text);
    let (_, tl) = simulate_traced(&cfg).unwrap();
    for shown in [1, 3, 4] {
        let mut bytes = Vec::new();
        reports::trace::write_chrome_trace(&cfg, &tl, shown, &mut bytes).unwrap();
        let streamed: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            streamed,
            chrome_trace(&cfg, &tl, shown),
            "{shown} GPUs shown"
        );
    }
}

/// A trace that cannot be written whole (here, a 100 KiB file-size limit)
/// is a failure of the output, not of the input (exit 1), and leaves no
/// truncated file.
#[test]
fn a_trace_that_cannot_be_written_whole_is_removed() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace-limit");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("part.json");
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/examples/resnet50-48gpu-ib100.toml"
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 100; exec '{}' run '{scenario}' --trace '{}'",
            env!("CARGO_BIN_EXE_dtsim"),
            out.display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write the trace"), "{err}");
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "no temporary file either: {left:?}");
}

/// With stragglers every GPU is simulated and the trace shows each GPU's
/// own passes (from the recorded timeline): the forward passes of GPU g
/// are the timeline's spans of GPU g, they differ between GPUs, and a GPU
/// that finished early waits for the slowest one's gradient (a stall).
#[test]
fn a_straggler_trace_shows_each_gpus_own_passes() {
    let text = comm_bound(4, "gpus_per_node = 2\nmodel = \"flow\"", "");
    let mut cfg = config(&text);
    cfg.model.compute_jitter = 0.2;
    cfg.iterations = 3;
    let (_, timeline) = simulate_traced(&cfg).unwrap();
    assert_eq!(timeline.gpus, 8);
    let t = chrome_trace(&cfg, &timeline, 8);
    assert_eq!(t["otherData"]["gpus_simulated"], 8);
    let fwd = |pid: u64| -> Vec<(f64, f64)> {
        t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["args"]["pass"] == "fwd")
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect()
    };
    for g in 0..8u32 {
        let want: Vec<(f64, f64)> = timeline
            .compute
            .iter()
            .filter(|c| c.gpu == g && c.forward())
            .map(|c| (c.start.as_secs() * 1e6, (c.end - c.start).as_secs() * 1e6))
            .collect();
        let got = fwd(g as u64);
        assert_eq!(got.len(), want.len());
        for (a, b) in got.iter().zip(&want) {
            assert!((a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6);
        }
    }
    assert_ne!(fwd(0), fwd(1), "each GPU draws its own speed");
    // in every iteration but the slowest GPU's, some GPU waits
    let stalls = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "stall")
        .count();
    assert!(stalls > 0);
    // every GPU shows every message
    let per_gpu: Vec<usize> = (0..8).map(|p| messages(&t, p).len()).collect();
    assert!(per_gpu.iter().all(|&n| n == timeline.comm.len() && n > 0));
}

/// With model-parallel stages the engine follows one GPU a stage (trainer
/// 0's), and the trace shows trainer 0's GPUs, each with its own stage's
/// passes and only the messages it takes part in: in stage-major
/// placement GPU 0 is stage 0 (the first layer) and GPU 2 stage 1 (the
/// second); neither shows the other stage's synchronisation.
#[test]
fn a_model_parallel_trace_shows_each_gpu_its_stage() {
    let text = comm_bound(2, "gpus_per_node = 2", "mp_stages = 2")
        .replace("[strategy]", "[[model.layers]]\nname = \"head\"\nparams = 1000\nforward = \"1ms\"\nbackward = \"2ms\"\n[strategy]")
        .replace("name = \"big\"", "name = \"big\"\nactivation_bytes = 4096");
    let cfg = config(&text);
    let (_, timeline) = simulate_traced(&cfg).unwrap();
    assert_eq!(timeline.gpus, 2, "one GPU a stage");
    let t = chrome_trace(&cfg, &timeline, 4);
    let passes = |pid: u64| -> std::collections::BTreeSet<String> {
        t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["tid"] == 0 && e["cat"] == "compute")
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    let want = |layer: &str| -> std::collections::BTreeSet<String> {
        [format!("fwd {layer}"), format!("bwd {layer}")]
            .into_iter()
            .collect()
    };
    for (pid, layer) in [(0, "big"), (2, "head")] {
        assert_eq!(passes(pid), want(layer), "GPU {pid}");
    }
    assert!(passes(1).is_empty(), "trainer 1's GPU is not shown");
    // channels: activations (track 1), stage 0 (2), stage 1 (3)
    assert_eq!(timeline.channels, ["activations", "stage 0", "stage 1"]);
    let tracks = |pid: u64| -> std::collections::BTreeSet<u64> {
        t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["cat"] == "communication")
            .map(|e| e["tid"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(tracks(0), [1, 2].into_iter().collect());
    assert_eq!(tracks(2), [1, 3].into_iter().collect());
}
