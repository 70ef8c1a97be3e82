//! End-to-end benchmark: wall time, events per second and peak memory of
//! the reference workloads, and how they grow with the number of GPUs.
//!
//! Run: `cargo bench --bench scale` (add `-- --quick` for a short run).
//! Each measurement runs in a fresh child process so that its peak resident
//! memory (VmHWM) is its own. Results go to stdout as a Markdown table; the
//! dated copies live in docs/benchmarks.md.
//!
//! Workloads (ASTRA-sim reference points quoted in issue 2):
//! * `ring`: one 64 MiB ring AllReduce, flow model.
//! * `ring-full`: the same without the node-symmetry shortcut, every flow
//!   of every GPU simulated (for reference: what the shortcut saves).
//! * `dp-iter`: one data-parallel iteration of a 50-layer model (forward
//!   100 µs, backward 200 µs per layer, a 2 MiB AllReduce per layer, no
//!   fusion, FIFO), flow model.
//! * `dp-jitter`: the same iteration with stragglers
//!   (`model.compute_jitter` = 0.05): one GPU runs each iteration at the
//!   slowest GPU's factor, drawn from every GPU's (every GPU's stream was
//!   simulated before 2026-11-26); the single channel still lets the
//!   ring's isolated flow result be reused.
//! * `dp-jitter-live`: the same with the shortcuts off: every transfer of
//!   every GPU's ring on the shared flow network, no node folding, no
//!   reuse (what a simulator that follows every flow pays; ASTRA-sim's
//!   50-layer workload).
//! * `alltoallv`: one AlltoAllv of 64 MiB per GPU, random per-pair sizes
//!   (uniform in [0, 2·mean], seeded), pairwise, flow model, every GPU.
//! * `sparse-hybrid`: one iteration of an LM-shaped sparse model
//!   (Parallax Table 1's sizes: an 813M-parameter table of density
//!   8.4e-3, 9.4M dense parameters; compute 40 + 80 ms) on machines of 6
//!   GPUs over EDR, Parallax's hybrid (dense AllReduce beside a sparse PS
//!   of 128 partitions with the servers' CPU tasks), flow model, every
//!   message on the shared network (two channels).
//! * `sparse-alltoall`: the same model with EmbRace's AlltoAll on a
//!   priority channel, the table 1,536 wide so that every GPU count
//!   divides its columns (equal blocks: node-symmetric, folded).
//! * `sparse-tokens`: ten iterations of the LM with the token model
//!   (input embedding of 793,470 × 512 drawing 2,560 words a GPU, the
//!   softmax table of 793,470 × 513 drawing 10,752: targets and 8,192
//!   sampled classes; Zipf exponent 1), Parallax's hybrid with 128
//!   partitions and local aggregation, flow model; every iteration's
//!   draws included. The issue's target: under 50 ms per simulated
//!   iteration at 48 GPUs (wall time / 10).
//! * `sparse-ps-lm`: one measured iteration (and the default warm-up)
//!   of the `lm` preset (Parallax's LM, its tables by density) on
//!   TITAN Xp machines of 8 GPUs over EDR, Parallax's hybrid with 64
//!   partitions and the default stragglers, so that every GPU's stream
//!   is simulated (the servers' CPU tasks wait on each machine's
//!   GPUs), flow model; `sparse-ps-lm-analytical` the same in the
//!   analytical model. What a user's cluster-size sweep of the hybrid
//!   pays a point (a blocked stream was re-examined on every
//!   completion, and rescanned its task's dependencies from the first,
//!   until 2026-11-29).
//! * `parallax-table4`: the Parallax Table 4 sweep, 2 models × 4
//!   architectures (AR, NaivePS, OptPS, HYB; the last two with the
//!   partition search) from `scenarios/papers/parallax/`, 10 measured
//!   iterations each, one core. Target: under 2 s.
//! * `gtopk-vgg16`: one gTop-k S-SGD iteration of VGG-16 for CIFAR-10 on
//!   the gTop-k testbed (`scenarios/papers/gtopk/table4-vgg16.toml`, one
//!   P102-100 a node over 1 GbE) in the analytical model, no warm-up.
//!   Issue 12's target: under 5 ms at 32 GPUs.
//! * `dct-dlrm`: 1,000 iterations of DCT-DP on DCT's DLRM
//!   (`scenarios/papers/dct/dp-sparsity.toml` at η = 95%, L = 1000, 2
//!   servers), flow model: one life-span with its sort.
//! * `dct-hybrid`: one iteration (no warm-up) of DCT §3.3's hybrid, DCT-MP
//!   at 90% between 12 stages and DCT-DP at 99% across 64 trainers
//!   (`scenarios/papers/dct/hybrid.toml`: 768 CPU machines, 8 servers),
//!   flow model: every transfer on the shared network.
//! * `uncertainty`: `dtsim run --uncertainty 100` of the example
//!   `resnet50-48gpu-ib100` (48 GPUs, flow model) with a dedicated
//!   cluster's stragglers (`compute_jitter = 0.005`, the default):
//!   100 runs over as many seeds, on every core, and their percentiles
//!   (events: the runs' total). Issue 14's target: under 5 s.
//! * `validate`: `dtsim validate` of a 31-size nccl-tests log (Google
//!   A3 Mega, 2 × 8 H100, AllReduce, 8 B to 4 GiB;
//!   `tests/fixtures/nccl-tests/gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt`):
//!   the log read and parsed, its every other size fitted by NCCL's
//!   protocol shape (the default, with its cross-validated choice of
//!   lines and rounding), the other sizes predicted by the simulator
//!   (events: held-out sizes). Issue 13's target: under 1 s for a
//!   30-size log. `validate-regimes`: the same by size regimes.
//! * `sweep`: 10,000 analytical scenario points, parsed, validated and
//!   simulated (ResNet-50 etc. over nodes × networks × schedules), with
//!   the default losses (stragglers included since 2026-11-26).
//! * `sweep-ideal`: the same with `ideal = true` (what `sweep` measured
//!   before the losses existed).
//! * `sweep-parquet`: grids of the same kind (2,000, 10,000 and 100,000
//!   points) through `dtsim sweep`'s engine: every point validated first,
//!   then evaluated on all cores, a checkpoint line per point, the table
//!   written as Parquet block by block (events = points). Peak memory
//!   should not grow with the grid.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use sim::SimTime;
use sim::cluster::{ClusterSpec, presets};
use sim::collective::exec::run_flow;
use sim::collective::{Collective, Op, Payload};
use sim::net::NetModel;
use sim::strategy::Strategy;
use sim::train::{Options, TrainConfig, simulate, simulate_with};
use sim::workload::{Layer, Model};
use std::process::Command;
use std::time::Instant;

fn cluster(gpus: u32) -> ClusterSpec {
    let inter = presets::inter_node("ib-hdr-200g").unwrap();
    let intra = presets::intra_node("nvlink3").unwrap();
    let g = 8;
    let mut c = ClusterSpec::flat(gpus / g, inter.bandwidth_bytes_per_s, inter.latency_s);
    c.network = "ib-hdr-200g".into();
    c.gpus_per_node = g;
    c.intra.bandwidth = intra.bandwidth_bytes_per_s;
    c.intra.latency = intra.latency_s;
    c
}

/// Runs one workload in this process; prints "events seconds".
fn child(workload: &str, gpus: u32) {
    let t0 = Instant::now();
    let events = match workload {
        "ring" => {
            let o = run_flow(
                &Collective::new(Op::AllReduce),
                &cluster(gpus),
                64.0 * 1048576.0,
            )
            .unwrap();
            assert!(o.time > SimTime::ZERO);
            o.events
        }
        "ring-rails" => {
            // a NIC per GPU: a channel per NIC, each a lane of its own
            let mut c = cluster(gpus);
            c.nics_per_node = 8;
            let o = run_flow(&Collective::new(Op::AllReduce), &c, 64.0 * 1048576.0).unwrap();
            assert!(o.time > SimTime::ZERO);
            o.events
        }
        "nvls-tree" | "sharp" => {
            // pipelined in-switch reductions across H100 nodes: NVLS with a
            // tree of nodes over EFA (aws-p5), SHARP over NDR (dgx-h100)
            let (node, algo) = if workload == "sharp" {
                ("dgx-h100", sim::collective::Algo::Sharp)
            } else {
                ("aws-p5", sim::collective::Algo::NvlsTree)
            };
            let keys = sim::cluster::build::NodeKeys {
                node: Some(node.into()),
                ..Default::default()
            };
            let c = sim::cluster::build::Description::from_keys(gpus / 8, keys)
                .unwrap()
                .build()
                .unwrap();
            let coll = Collective::new(Op::AllReduce).with_algo(algo).unwrap();
            let o = run_flow(&coll, &c, 64.0 * 1048576.0).unwrap();
            assert!(o.time > SimTime::ZERO);
            o.events
        }
        "ring-full" => {
            // the same ring without the node-symmetry shortcut: every flow
            let c = cluster(gpus);
            let prog = Collective::new(Op::AllReduce).program(&c, 64.0 * 1048576.0);
            let o = sim::collective::exec::run_program_full(&prog, &c).unwrap();
            assert!(o.time > SimTime::ZERO);
            o.events
        }
        "dp-iter" | "dp-jitter" | "dp-jitter-live" => {
            let layers = (0..50)
                .map(|i| Layer {
                    name: format!("l{i}"),
                    params: 2 * 1048576 / 4,
                    forward: SimTime::from_secs(100e-6),
                    backward: SimTime::from_secs(200e-6),
                    activation_bytes: 0,
                    embedding: None,
                    variables: Vec::new(),
                })
                .collect();
            let cfg = TrainConfig {
                name: "dp-iter".into(),
                seed: 0,
                warmup_iterations: 0,
                iterations: 1,
                cluster: cluster(gpus),
                net_model: NetModel::Flow,
                model: Model {
                    name: "50x2MiB".into(),
                    gpu: "synthetic".into(),
                    batch_per_gpu: 1,
                    layers,
                    compute_jitter: if workload == "dp-iter" { 0.0 } else { 0.05 },
                    gradient_precision: Default::default(),
                    words_per_sample: 1.0,
                    throughput_unit: "samples/s".into(),
                    kernels: sim::workload::kernels::KernelCosts::preset("synthetic"),
                },
                strategy: Strategy {
                    fusion: 0,
                    ..Strategy::default()
                },
                fitted_losses: None,
            };
            let opts = Options {
                reuse_isolated: workload != "dp-jitter-live",
                fold_nodes: workload != "dp-jitter-live",
                ..Options::default()
            };
            simulate_with(&cfg, opts).unwrap().0.events
        }
        "alltoallv" => {
            let c = cluster(gpus);
            let n = gpus as usize;
            let mean = 64.0 * 1048576.0 / n as f64;
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
            let matrix: std::sync::Arc<[f64]> = (0..n * n)
                .map(|_| (rng.random::<f64>() * 2.0 * mean).round())
                .collect();
            let prog = Collective::new(Op::AllToAll).program_for(&c, &Payload::PerPair(matrix));
            let o = sim::collective::exec::run_program(&prog, &c).unwrap();
            assert!(o.time > SimTime::ZERO);
            o.events
        }
        "sparse-hybrid" | "sparse-alltoall" => {
            let dim = if workload == "sparse-alltoall" {
                1536
            } else {
                1024
            };
            let strategy = if workload == "sparse-hybrid" {
                "sparse = \"ps\"\nps_partitions = 128"
            } else {
                "sparse = \"alltoall\"\nschedule = \"priority\"\npartition = 0"
            };
            let text = format!(
                r#"
warmup_iterations = 0
iterations = 1
[cluster]
nodes = {}
gpus_per_node = 6
network = "ib-edr-100g"
[model]
batch_per_gpu = 128
[[model.layers]]
name = "emb"
params = 0
forward = "1ms"
backward = "2ms"
[model.layers.embedding]
vocab = 793471
dim = {dim}
density = 0.0084
[[model.layers]]
name = "lstm"
params = 9400000
forward = "40ms"
backward = "80ms"
[strategy]
{strategy}
"#,
                gpus / 6,
            );
            let points = sim::scenario::load_str(&text, "sparse.toml", "sparse").unwrap();
            simulate(&points[0].config).unwrap().events
        }
        "sparse-tokens" => {
            let text = format!(
                r#"
warmup_iterations = 0
iterations = 10
[cluster]
nodes = {}
gpus_per_node = 6
network = "ib-edr-100g"
intra = "pcie3-x16"
[model]
batch_per_gpu = 128
[[model.layers]]
name = "embedding"
params = 0
forward = "0ms"
backward = "0ms"
[model.layers.embedding]
vocab = 793470
dim = 512
tokens_per_batch = 2560
zipf = 1.0
[[model.layers]]
name = "lstm"
params = 9445376
forward = "20ms"
backward = "40ms"
[[model.layers]]
name = "softmax"
params = 0
forward = "9ms"
backward = "18ms"
[model.layers.embedding]
vocab = 793470
dim = 513
tokens_per_batch = 10752
zipf = 1.0
[strategy]
dense = "allreduce"
sparse = "ps"
ps_partitions = 128
"#,
                gpus / 6,
            );
            let points = sim::scenario::load_str(&text, "tokens.toml", "tokens").unwrap();
            simulate(&points[0].config).unwrap().events
        }
        "sparse-ps-lm" | "sparse-ps-lm-analytical" => {
            let model = if workload == "sparse-ps-lm" {
                "flow"
            } else {
                "analytical"
            };
            let text = format!(
                r#"
iterations = 1
[cluster]
nodes = {}
gpus_per_node = 8
network = "ib-edr-100g"
intra = "pcie3-x16"
model = "{model}"
[model]
preset = "lm"
batch_per_gpu = 128
gpu = "titan-xp"
[strategy]
dense = "allreduce"
sparse = "ps"
ps_partitions = 64
"#,
                gpus / 8,
            );
            let points = sim::scenario::load_str(&text, "ps-lm.toml", "ps-lm").unwrap();
            simulate(&points[0].config).unwrap().events
        }
        "parallax-table4" => {
            let dir =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/papers/parallax");
            ["table1-nlp-ar.toml", "table1-nlp-ps.toml", "table4.toml"]
                .iter()
                .flat_map(|f| sim::scenario::load_file(&dir.join(f)).unwrap())
                .map(|p| simulate(&p.config).unwrap().events)
                .sum()
        }
        "gtopk-vgg16" | "dct-dlrm" | "dct-hybrid" => {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
            let (file, fix): (&str, &[(&str, &str)]) = if workload == "gtopk-vgg16" {
                (
                    "scenarios/papers/gtopk/table4-vgg16.toml",
                    &[
                        ("model = \"flow\"", "model = \"analytical\""),
                        ("nodes = 32", "nodes = GPUS"),
                        (
                            "name = \"gtopk-table4-vgg16\"",
                            "name = \"b\"\nwarmup_iterations = 0\niterations = 1",
                        ),
                        (
                            "\"strategy.dense\" = [\"allreduce\", \"topk\", \"gtopk\"]",
                            "\"strategy.dense\" = [\"gtopk\"]",
                        ),
                    ],
                )
            } else if workload == "dct-hybrid" {
                assert_eq!(gpus, 768, "the hybrid scenario's 64 trainers × 12 stages");
                (
                    "scenarios/papers/dct/hybrid.toml",
                    &[
                        (
                            "name = \"dct-hybrid\"\nwarmup_iterations = 1",
                            "name = \"b\"\nwarmup_iterations = 0",
                        ),
                        ("iterations = 1000", "iterations = 1"),
                        ("[0.0, 0.99]", "[0.99]"),
                        ("[0.0, 0.9]", "[0.9]"),
                    ],
                )
            } else {
                (
                    "scenarios/papers/dct/dp-sparsity.toml",
                    &[
                        ("nodes = 16", "nodes = GPUS"),
                        ("[0.0, 0.75, 0.9, 0.95, 0.99, 0.995]", "[0.95]"),
                    ],
                )
            };
            let mut text = std::fs::read_to_string(root.join(file)).unwrap();
            for (from, to) in fix {
                assert!(text.contains(from), "{file}: {from}");
                text = text.replacen(from, &to.replace("GPUS", &gpus.to_string()), 1);
            }
            let points = sim::scenario::load_str(&text, "b.toml", "b").unwrap();
            assert_eq!(points.len(), 1);
            simulate(&points[0].config).unwrap().events
        }
        "uncertainty" => {
            // `dtsim run --uncertainty 100` of a 48-GPU scenario (issue 14's
            // target: under 5 s)
            assert_eq!(gpus, 48, "the example's 8 machines of 6 GPUs");
            // with a dedicated cluster's stragglers (sim::losses; the
            // default since 2026-11-26, said here so the workload stays
            // the same whatever the default)
            let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios/examples/resnet50-48gpu-ib100.toml");
            let text = std::fs::read_to_string(example).unwrap().replacen(
                "[model]\n",
                "[model]\ncompute_jitter = 0.005\n",
                1,
            );
            assert!(text.contains("compute_jitter = 0.005"));
            let file =
                std::env::temp_dir().join(format!("dtsim-bench-u-{}.toml", std::process::id()));
            std::fs::write(&file, text).unwrap();
            let runs = reports::run::start(&reports::run::Request {
                file,
                trace: None,
                trace_gpus: 8,
                uncertainty: Some(100),
            })
            .unwrap();
            runs.map(|p| {
                let p = p.unwrap();
                let n = p.interval.expect("an interval").uncertainty_samples;
                assert_eq!(n, 100);
                p.result.events * n as u64
            })
            .sum()
        }
        "sweep" | "sweep-ideal" => {
            // `sweep-ideal`: the pure model; `sweep`: the default losses,
            // stragglers included (one GPU at the slowest GPU's pace)
            let ideal = if workload == "sweep-ideal" {
                "ideal = true\n"
            } else {
                ""
            };
            let text = format!("{ideal}{}", sweep_grid(125));
            let points = sim::scenario::load_str(&text, "sweep.toml", "sweep").unwrap();
            assert_eq!(points.len(), 10_000);
            points
                .iter()
                .map(|p| simulate(&p.config).unwrap().events)
                .sum()
        }
        "sweep-parquet" => {
            // `gpus` is the number of points here: 80 per node count
            let grid =
                sim::scenario::open_str_in(&sweep_grid(gpus / 80), "sweep.toml", "sweep", None)
                    .unwrap();
            assert_eq!(grid.len(), gpus as usize);
            let dir = std::env::temp_dir().join(format!("dtsim-bench-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let out = dir.join("sweep.parquet");
            let opts = reports::sweep::Options {
                jobs: 0,
                shard: None,
                progress: false,
                block_points: 0,
                uncertainty: None,
            };
            let s = reports::sweep::run(&grid, &out, &opts).unwrap();
            assert_eq!(s.computed, gpus as usize);
            std::fs::remove_dir_all(&dir).unwrap();
            s.computed as u64
        }
        "validate" | "validate-regimes" => {
            let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/nccl-tests/gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
            let req = calibration::calibrate::ValidateRequest {
                nccl_tests: vec![log],
                shape: (workload == "validate-regimes").then_some(calibration::fit::Shape::Regimes),
                ..Default::default()
            };
            let v = calibration::calibrate::validate(&req).unwrap();
            assert_eq!(v.len(), 1);
            assert_eq!(v[0].points.len(), 15);
            v[0].points.len() as u64
        }
        other => panic!("unknown workload {other}"),
    };
    println!("{events} {}", t0.elapsed().as_secs_f64());
}

/// A grid of 80·`k` analytical points: `k` node counts × 5 networks × 4
/// models × 2 schedules × 2 AllReduce algorithms.
fn sweep_grid(k: u32) -> String {
    let nodes: Vec<String> = (1..=k).map(|n| n.to_string()).collect();
    format!(
        r#"
[cluster]
nodes = 1
gpus_per_node = 8
network = "ib-edr-100g"
model = "analytical"
[model]
preset = "resnet50"
batch_per_gpu = 64
gpu = "titan-xp"
[sweep]
"cluster.nodes" = [{}]
"cluster.network" = ["eth-10g", "eth-25g", "eth-100g", "ib-edr-100g", "ib-hdr-200g"]
"model.preset" = ["resnet50", "inception_v3", "vgg16", "alexnet"]
"strategy.schedule" = ["fifo", "priority"]
"strategy.allreduce" = ["ring", "hierarchical"]
"#,
        nodes.join(",")
    )
}

fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], args[i + 2].parse().unwrap());
        eprintln!("peak_kib {}", peak_kib());
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let runs = if quick { 1 } else { 5 };
    let exe = std::env::current_exe().unwrap();
    println!("| workload | GPUs | wall time (median of {runs}) | events | events/s | peak RSS |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut jobs: Vec<(&str, u32)> = Vec::new();
    for g in [256, 512, 1024, 2048, 4096] {
        jobs.push(("ring", g));
    }
    for g in [1024, 4096] {
        jobs.push(("ring-rails", g));
    }
    for g in [256, 1024] {
        jobs.push(("ring-full", g));
    }
    for g in [16, 256, 1024] {
        jobs.push(("nvls-tree", g));
        jobs.push(("sharp", g));
    }
    for g in [256, 512, 1024, 2048, 4096] {
        jobs.push(("dp-iter", g));
    }
    for g in [256, 512, 1024, 2048] {
        jobs.push(("dp-jitter", g));
    }
    for g in [64, 128, 256, 512, 1024] {
        jobs.push(("dp-jitter-live", g));
    }
    for g in [64, 128, 256, 512] {
        jobs.push(("alltoallv", g));
    }
    for g in [48, 192, 768] {
        jobs.push(("sparse-hybrid", g));
        jobs.push(("sparse-alltoall", g));
    }
    for g in [48, 192] {
        jobs.push(("sparse-tokens", g));
    }
    for g in [128, 512] {
        jobs.push(("sparse-ps-lm", g));
    }
    for g in [128, 512, 1600] {
        jobs.push(("sparse-ps-lm-analytical", g));
    }
    jobs.push(("parallax-table4", 48));
    for g in [32, 256, 1024] {
        jobs.push(("gtopk-vgg16", g));
    }
    for g in [16, 64] {
        jobs.push(("dct-dlrm", g));
    }
    jobs.push(("dct-hybrid", 768));
    jobs.push(("uncertainty", 48));
    jobs.push(("validate", 16));
    jobs.push(("validate-regimes", 16));
    jobs.push(("sweep-ideal", 0));
    jobs.push(("sweep", 0));
    for n in [2_000, 10_000, 100_000] {
        jobs.push(("sweep-parquet", n));
    }
    // `--only NAME[,NAME]` runs those workloads alone
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .map(|i| args[i + 1].split(',').map(String::from).collect());
    for (w, g) in jobs {
        if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == w)) {
            continue;
        }
        let mut times = Vec::new();
        let mut events = 0u64;
        let mut peak = 0u64;
        for _ in 0..runs {
            let out = Command::new(&exe)
                .args(["--child", w, &g.to_string()])
                .output()
                .expect("child runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let so = String::from_utf8(out.stdout).unwrap();
            let mut it = so.split_whitespace();
            events = it.next().unwrap().parse().unwrap();
            times.push(it.next().unwrap().parse::<f64>().unwrap());
            let se = String::from_utf8(out.stderr).unwrap();
            peak = peak.max(
                se.lines()
                    .find_map(|l| l.strip_prefix("peak_kib "))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0),
            );
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let t = times[times.len() / 2];
        let gpus = match w {
            "sweep" | "sweep-ideal" => "10,000 points".to_string(),
            "sweep-parquet" => format!("{g} points"),
            "validate" | "validate-regimes" => format!("{g} ranks, 31 sizes"),
            _ => g.to_string(),
        };
        println!(
            "| {w} | {gpus} | {:.4} s | {events} | {:.3e} | {:.1} MB |",
            t,
            events as f64 / t.max(1e-9),
            peak as f64 / 1024.0
        );
    }
}
