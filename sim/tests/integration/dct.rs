//! DCT-DP in training (the DCT paper): DCT-A1's wire bytes on the plan,
//! DCT-B1's life-span ordering and DCT-B2's saturation on the paper
//! scenarios (`scenarios/papers/dct/`), and the periodic sort.

use super::assert_close;
use sim::scenario::{Point, load_file, load_str};
use sim::train::task::{Label, Work};
use sim::train::{RunResult, planner, simulate};
use std::path::Path;

/// The points of a scenario file of this repository, simulated, with the
/// value of each swept key.
fn run_file(rel: &str) -> Vec<(Point, RunResult)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    load_file(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|p| {
            let r = simulate(&p.config).unwrap();
            (p, r)
        })
        .collect()
}

/// The iteration time of the point whose swept keys have these values.
fn at(runs: &[(Point, RunResult)], want: &[(&str, f64)]) -> f64 {
    runs.iter()
        .find(|(p, _)| {
            want.iter().all(|(k, v)| {
                let got = &p.sweep[&format!("strategy.{k}")];
                got.as_float().or(got.as_integer().map(|i| i as f64)) == Some(*v)
            })
        })
        .unwrap_or_else(|| panic!("no point {want:?}"))
        .1
        .iteration_time_s
}

/// DCT-A1 for dtsim's declared encoding, on the plan of the DLRM
/// scenario: each layer pushes n − ⌊n·η⌋ fp32 values and as many 4-byte
/// indices (exactly), and pulls its n parameters dense; at η = 0 the push
/// is dense too. The threshold kernel is one per layer, after its
/// backward pass.
#[test]
fn dct_a1_wire_bytes_on_the_plan() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/papers/dct/dp-sparsity.toml");
    let points = load_file(&path).unwrap();
    for p in &points {
        let cfg = &p.config;
        let eta = cfg.strategy.dct_sparsity;
        let plan = planner::plan(cfg);
        let mut pushes = Vec::new();
        let mut pulls = Vec::new();
        for t in &plan.tasks {
            if let Work::Comm {
                collective,
                payload,
                ..
            } = &t.work
            {
                let n = cfg.model.layers[t.layer.unwrap() as usize].params;
                let bytes = payload.bytes();
                match collective.algo.name() {
                    "push" => pushes.push((n, bytes)),
                    "pull" => pulls.push((n, bytes)),
                    other => panic!("{other}"),
                }
            }
        }
        assert_eq!(pushes.len(), 8);
        assert_eq!(pulls.len(), 8);
        for (n, bytes) in pushes {
            let kept = sim::train::planner::dct::kept(n, eta);
            let want = if eta == 0.0 {
                4 * n
            } else {
                (8 * kept).min(4 * n)
            };
            assert_eq!(bytes, want as f64, "η = {eta}, n = {n}");
        }
        for (n, bytes) in pulls {
            assert_eq!(bytes, (4 * n) as f64);
        }
        let kernels = plan
            .tasks
            .iter()
            .filter(|t| {
                matches!(
                    t.work,
                    Work::Compute {
                        kind: sim::train::task::ComputeKind::Kernel,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(kernels, if eta == 0.0 { 0 } else { 8 }, "η = {eta}");
    }
}

/// DCT-B1 on the DLRM scenario (flow model, 16 trainers, η = 95%):
/// where the trainers share 2 parameter servers, T(L = 1) > T0 >
/// T(L = 1000) and |T(1000) − T(10000)| ≤ 1% of T0, the paper's ordering;
/// the L = 1 slowdown is at most the whole sort (part of it overlaps the
/// communication) and is positive. Not the paper's, and pinned: with a
/// server on every machine the communication hides behind the backward
/// pass and DCT-DP's mask costs more than it saves, T(1000) > T0.
#[test]
fn dct_b1_lifespan_ordering() {
    let runs = run_file("scenarios/papers/dct/dp-lifespan.toml");
    assert_eq!(runs.len(), 12);
    let t = |servers: f64, eta: f64, life: f64| {
        at(
            &runs,
            &[
                ("ps_servers", servers),
                ("dct_sparsity", eta),
                ("dct_lifespan", life),
            ],
        )
    };
    let t0 = t(2.0, 0.0, 1000.0);
    let (t1, t1000, t10000) = (
        t(2.0, 0.95, 1.0),
        t(2.0, 0.95, 1000.0),
        t(2.0, 0.95, 10000.0),
    );
    assert!(t1 > t0 && t0 > t1000, "{t1} {t0} {t1000}");
    assert!((t1000 - t10000).abs() <= 0.01 * t0, "{t1000} {t10000}");
    // the baseline does not depend on L
    assert_eq!(t(2.0, 0.0, 1.0), t0);
    let (p, r) = runs
        .iter()
        .find(|(p, _)| {
            p.config.strategy.dct_lifespan == 1
                && p.config.strategy.dct_sparsity > 0.0
                && p.config.strategy.ps_servers == 2
        })
        .unwrap();
    let sort: f64 = r
        .kernels
        .iter()
        .find(|k| k.kernel == "threshold")
        .unwrap()
        .seconds;
    assert_eq!(p.config.strategy.dct_lifespan, 1);
    assert!(
        t1 - t1000 > 0.0 && t1 - t1000 <= sort * (1.0 - 1e-3) + 1e-9,
        "{t1} {t1000} {sort}"
    );
    // one server a machine: DCT-DP does not pay
    let one = t(0.0, 0.0, 1000.0);
    assert!(t(0.0, 0.95, 1000.0) > one, "{} {one}", t(0.0, 0.95, 1000.0));
}

/// DCT-B2's data-parallel half on the DLRM scenario (2 servers, L =
/// 1000): the gain over no compression grows with η from 75% to 99.5%
/// and saturates, each step's gain smaller than the step before (from
/// 75→90→95 and from 95→99→99.5). CASES's bound, gain(99.5%) − gain(95%)
/// < 3 points, is not met: dtsim gives 4.30, pinned here to the table of
/// docs/reproductions.md (±0.01 point).
#[test]
fn dct_b2_dp_gains_saturate() {
    let runs = run_file("scenarios/papers/dct/dp-sparsity.toml");
    let t = |eta: f64| at(&runs, &[("dct_sparsity", eta)]);
    let t0 = t(0.0);
    let gain = |eta: f64| (t0 - t(eta)) / t0;
    let g: Vec<f64> = [0.75, 0.9, 0.95, 0.99, 0.995]
        .iter()
        .map(|&e| gain(e))
        .collect();
    assert!(g.windows(2).all(|w| w[1] > w[0]), "{g:?}");
    assert!(g[2] - g[1] < g[1] - g[0], "{g:?}");
    assert!(g[4] - g[3] < g[3] - g[2], "{g:?}");
    let late = g[4] - g[2];
    assert!(
        (late - 0.0430).abs() < 1e-4,
        "gain(99.5%) − gain(95%) = {late}"
    );
}

/// The sort runs in iterations 0, L, 2L, …: over a window of exactly one
/// life-span the inserted kernels cost the masks every iteration and one
/// sort, which is what the result reports.
#[test]
fn the_sort_runs_once_a_lifespan() {
    let text = r#"
name = "t"
warmup_iterations = 1
iterations = 8
[cluster]
nodes = 4
gpus_per_node = 1
network = "eth-10g"
[model]
batch_per_gpu = 8
gpu = "xeon-18c"
[[model.layers]]
name = "a"
params = 1000000
forward = "1ms"
backward = "2ms"
[strategy]
dense = "dct"
dct_lifespan = 4
"#;
    let mut p = load_str(&crate::ideal(text), "t.toml", "t").unwrap();
    let cfg = p.remove(0).config;
    // the threshold task sorts in iterations 0, 4, 8 and only those
    let plan = planner::plan(&cfg);
    let t = plan
        .tasks
        .iter()
        .position(|t| {
            matches!(
                t.work,
                Work::Compute {
                    kind: sim::train::task::ComputeKind::Kernel,
                    ..
                }
            )
        })
        .unwrap() as u32;
    let sorting: Vec<u32> = (0..10)
        .filter(|&i| plan.duration(t, i) > plan.duration(t, 1))
        .collect();
    assert_eq!(sorting, [0, 4, 8]);
    let r = simulate(&cfg).unwrap();
    let c = &cfg.model.kernels;
    let (n, k) = (1e6, 5e4);
    // iterations 1 … 8 hold the sorts of iterations 4 and 8
    let want = c.mask.time(n, k) + 2.0 * c.threshold.time(n, k) / 8.0;
    assert_close(r.compression_s, want, 1e-6, "masks and two sorts in eight");
    let listed: f64 = r.kernels.iter().map(|k| k.seconds).sum();
    assert_close(
        listed,
        c.mask.time(n, k) + c.threshold.time(n, k) / 4.0,
        1e-12,
        "per iteration",
    );
}

/// The `dlrm` preset (DCT §3.1's DLRM with Criteo Kaggle's 26 tables)
/// under DCT-DP: the model's sizes (docs/research/dlrm.md: 508,753 dense
/// parameters, 33,762,577 rows of 16), each table's density from the
/// batch (min(1, 128 / rows): the 3-row table whole, the 10.1M-row one
/// 128 rows), the tables pushed and pulled sparse on the servers beside
/// the FC layers' DCT pushes (one channel: the same servers), and DCT's
/// compression still paying with the tables' traffic on top.
#[test]
fn dlrm_preset_with_its_tables_under_dct() {
    let runs = run_file("scenarios/papers/dct/dlrm-tables.toml");
    let cfg = &runs[0].0.config;
    let m = &cfg.model;
    assert_eq!(m.layers.len(), 4 + 26 + 1 + 4);
    assert_eq!(m.params(), 508_753);
    assert_eq!(m.sparse_params(), 33_762_577 * 16);
    let rows = |name: &str| {
        let l = m.layers.iter().find(|l| l.name == name).unwrap();
        let e = l.embedding.as_ref().unwrap();
        e.rows_per_gpu()
    };
    assert_eq!(rows("emb_C9"), 3);
    assert_eq!(rows("emb_C3"), 128);
    assert_eq!(cfg.strategy.sparse, Some(sim::strategy::SparseMethod::Ps));
    let plan = planner::plan(cfg);
    assert_eq!(
        plan.channels.len(),
        1,
        "tables and layers on the same servers"
    );
    let sparse_tasks = plan
        .tasks
        .iter()
        .filter(|t| {
            matches!(t.work, Work::Comm { .. })
                && t.layer
                    .is_some_and(|l| m.layers[l as usize].embedding.is_some())
        })
        .count();
    assert!(sparse_tasks >= 26, "{sparse_tasks}");
    // each of the servers' polling threads receives the 26 tables' pushes
    // in turn: on thread 0, each table's chain task waits for the next
    // table's (the backward pass readies the higher layer's first), the
    // highest for none of them
    let chains: Vec<usize> = plan
        .tasks
        .iter()
        .enumerate()
        .filter(
            |(_, t)| matches!(&t.label, Label::Named(n) if n.ends_with(" partitions' pushes 0")),
        )
        .map(|(i, _)| i)
        .collect();
    assert_eq!(chains.len(), 26);
    for pair in chains.windows(2) {
        assert!(plan.tasks[pair[0]].layer < plan.tasks[pair[1]].layer);
        assert!(
            plan.tasks[pair[0]]
                .deps
                .iter()
                .any(|d| d.task == pair[1] as u32 && d.back == 0),
            "table {:?} waits for {:?}",
            plan.tasks[pair[0]].layer,
            plan.tasks[pair[1]].layer
        );
    }
    let t = |eta: f64| at(&runs, &[("dct_sparsity", eta)]);
    assert!(t(0.95) < t(0.0), "{} {}", t(0.95), t(0.0));
}
