//! The training engine: task graphs, shared networks, per-rank payloads,
//! stragglers.

use super::*;
use proptest::prelude::*;
use sim::SimTime;
use sim::collective::Payload;
use sim::collective::exec::run_program;
use sim::collective::program::Grouping;
use sim::net::NetModel;
use sim::strategy::{DenseMethod, Schedule, Strategy};
use sim::train::engine;
use sim::train::task::{ChannelSpec, ComputeKind, Dep, Label, Plan, Task, Work};
use sim::train::{Options, RunResult, TrainConfig, simulate, simulate_with};
use sim::workload::{Layer, Model};
use std::sync::Arc;

fn ms(x: f64) -> SimTime {
    SimTime::from_secs(x * 1e-3)
}

fn layer(name: &str, params: u64, fwd_ms: f64, bwd_ms: f64) -> Layer {
    Layer {
        name: name.into(),
        params,
        forward: ms(fwd_ms),
        backward: ms(bwd_ms),
        activation_bytes: 0,
        embedding: None,
        variables: Vec::new(),
    }
}

fn model(layers: Vec<Layer>) -> Model {
    Model {
        name: "m".into(),
        gpu: "g".into(),
        batch_per_gpu: 8,
        layers,
        compute_jitter: 0.0,
        gradient_precision: Default::default(),
        words_per_sample: 1.0,
        throughput_unit: "samples/s".into(),
        kernels: sim::workload::kernels::KernelCosts::preset("g"),
    }
}

fn config(cluster: ClusterSpec, model: Model, net: NetModel) -> TrainConfig {
    TrainConfig {
        name: "t".into(),
        seed: 0,
        warmup_iterations: 2,
        iterations: 5,
        cluster,
        net_model: net,
        model,
        strategy: Strategy::default(),
        fitted_losses: None,
    }
}

/// Everything but the event count, which depends on how much was
/// simulated.
fn same_numbers(a: &RunResult, b: &RunResult) -> bool {
    let mut b = b.clone();
    b.events = a.events;
    *a == b
}

/// [`same_numbers`], but for the compute averaged over the GPUs (and the
/// exposed communication it is subtracted from), which with stragglers
/// the representative GPU counts at the GPUs' mean factor, each task
/// rounded to the picosecond once rather than once a GPU: within half a
/// picosecond a task, far inside 1e-9 of the iteration here.
fn same_but_mean_compute(a: &RunResult, b: &RunResult) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * a.iteration_time_s;
    let mut b = b.clone();
    if !(close(a.compute_s, b.compute_s)
        && close(a.compression_s, b.compression_s)
        && close(a.exposed_comm_s, b.exposed_comm_s))
    {
        return false;
    }
    b.compute_s = a.compute_s;
    b.compression_s = a.compression_s;
    b.exposed_comm_s = a.exposed_comm_s;
    same_numbers(a, &b)
}

fn with(opts: impl FnOnce(&mut Options)) -> Options {
    let mut o = Options::default();
    opts(&mut o);
    o
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Where every GPU computes alike, following one representative GPU
    /// gives exactly what simulating every GPU gives; and in the flow
    /// model, reusing a collective's isolated result gives exactly what
    /// running every message on the shared network gives, folded onto
    /// node 0 or not; with or without a per-message overhead. With
    /// stragglers, the representative GPU running each iteration at the
    /// slowest GPU's factor gives every time that every GPU's simulation
    /// gives, exactly, and the same mean compute.
    #[test]
    fn the_shortcuts_change_no_number(
        nodes in 1u32..5,
        g in 1u32..4,
        layers in prop::collection::vec((0u64..3_000_000, 0.1f64..5.0, 0.1f64..9.0), 1..6),
        bw in 1e8f64..2e10,
        lat in 0.0f64..5e-5,
        schedule in prop::sample::select(vec![Schedule::Fifo, Schedule::Priority]),
        fusion in prop::sample::select(vec![0u64, 1 << 20, 64 << 20]),
        method in 0usize..4,
        flow in any::<bool>(),
        overhead in prop::sample::select(vec![0.0f64, 8.4e-6, 3e-4]),
        jitter in prop::sample::select(vec![0.0f64, 0.005, 0.2]),
    ) {
        let mut c = ClusterSpec::flat(nodes, bw, lat);
        c.gpus_per_node = g;
        c.intra.bandwidth = 4.0 * bw;
        c.intra.latency = lat / 5.0;
        let m = model(layers.iter().enumerate()
            .map(|(i, &(p, f, b))| layer(&format!("l{i}"), p, f, b)).collect());
        let net = if flow { NetModel::Flow } else { NetModel::Analytical };
        let mut cfg = config(c, m, net);
        cfg.warmup_iterations = 1;
        cfg.iterations = 3;
        cfg.strategy.schedule = schedule;
        cfg.strategy.fusion = fusion;
        cfg.strategy.partition = 1 << 20;
        cfg.strategy.message_overhead_s = overhead;
        cfg.model.compute_jitter = jitter;
        cfg.seed = layers.len() as u64;
        cfg.strategy.dense = [
            DenseMethod::AllReduce(Algo::Ring),
            DenseMethod::AllReduce(Algo::Hierarchical),
            DenseMethod::AllReduce(Algo::Tree),
            DenseMethod::Ps,
        ][method];
        let (base, _) = simulate_with(&cfg, Options::default()).unwrap();
        let variants = [
            with(|o| o.every_gpu = true),
            with(|o| o.reuse_isolated = false),
            with(|o| { o.reuse_isolated = false; o.fold_nodes = false; }),
            with(|o| { o.every_gpu = true; o.reuse_isolated = false; }),
        ];
        for opts in variants {
            let (r, _) = simulate_with(&cfg, opts).unwrap();
            prop_assert!(same_but_mean_compute(&base, &r), "{opts:?}:\n{base:?}\n{r:?}");
            if jitter == 0.0 || !opts.every_gpu {
                prop_assert!(same_numbers(&base, &r), "{opts:?}:\n{base:?}\n{r:?}");
            }
        }
        // the index of waiting streams is exact: the same result and
        // timeline to the bit as re-examining every blocked stream
        let traced = with(|o| { o.every_gpu = true; o.trace = true; });
        let (a, ta) = simulate_with(&cfg, traced).unwrap();
        let (b, tb) = simulate_with(&cfg, Options { index_waiters: false, ..traced }).unwrap();
        prop_assert_eq!(a, b);
        prop_assert_eq!(ta, tb);
    }
}

/// A plan of one compute task per iteration followed by the given
/// communication tasks, each on its own channel, which the next
/// iteration's compute waits for.
fn plan_of(compute: SimTime, comms: Vec<(Collective, Payload)>) -> Plan {
    let mut tasks = vec![Task {
        label: Label::Named("fwd".into()),
        layer: Some(0),
        work: Work::Compute {
            kind: ComputeKind::Forward,
            duration: compute,
        },
        deps: (1..=comms.len() as u32)
            .map(|t| Dep { task: t, back: 1 })
            .collect(),
        priority: 0,
        lead: false,
    }];
    let mut channels = Vec::new();
    for (i, (collective, payload)) in comms.into_iter().enumerate() {
        tasks.push(Task {
            label: Label::Named(format!("comm {i}")),
            layer: Some(0),
            work: Work::Comm {
                channel: i as u32,
                collective,
                payload,
            },
            deps: vec![Dep { task: 0, back: 0 }],
            priority: 0,
            lead: false,
        });
        channels.push(ChannelSpec {
            name: format!("ch{i}"),
            schedule: Schedule::Fifo,
            fusion: 0,
            partition: 0,
        });
    }
    let plan = Plan {
        tasks,
        channels,
        host_cores: 1,
        on_server_machines: Vec::new(),
        server_host_cores: 0,
        per_iteration: Default::default(),
        stages: 1,
        stage: Vec::new(),
    };
    plan.check();
    plan
}

/// Two collectives on two channels over the same NICs. Two nodes of one
/// GPU, NICs of B bytes/s, no latency, intra links 1000× faster. Each
/// collective is an AllGather of 2m (resp. 2m′), so each GPU sends m
/// (m′) to the other, over its NIC. Started together, the two flows on a
/// NIC get B/2 each (max-min) until the smaller ends at 2m/B; the other
/// then runs alone, ending at (m + m′)/B. The analytical model lets each
/// run alone: m/B and m′/B.
#[test]
fn two_collectives_share_a_nic_as_max_min_says() {
    let b = 1e9;
    let (m, m2) = (10e6, 30e6);
    let c = ClusterSpec::flat(2, b, 0.0);
    let ag = Collective::new(Op::AllGather);
    let plan = plan_of(
        ms(1.0),
        vec![
            (ag, Payload::Uniform(2.0 * m)),
            (ag, Payload::Uniform(2.0 * m2)),
        ],
    );
    let cfg = config(c, model(vec![layer("l", 1, 1.0, 0.0)]), NetModel::Flow);
    let (r, tl) = engine::run(&cfg, &plan, with(|o| o.trace = true)).unwrap();
    let tl = tl.unwrap();
    // intra hops at 1000·B add m/(1000·B) per message (two intra links,
    // pipelined in one flow: the NIC is the bottleneck)
    let (t_small, t_large) = (2.0 * m / b, (m + m2) / b);
    let iter = 1e-3 + t_large;
    assert_close(r.iteration_time_s, iter, 1e-9, "iteration");
    assert_close(r.comm_by_channel["ch0"], t_small, 1e-9, "channel 0 busy");
    assert_close(r.comm_by_channel["ch1"], t_large, 1e-9, "channel 1 busy");
    assert_close(r.comm_s, t_large, 1e-9, "union of the channels");
    // both messages of an iteration start together when the compute ends
    let first: Vec<_> = tl.comm.iter().filter(|s| s.start == ms(1.0)).collect();
    assert_eq!(first.len(), 2);
    // analytical: each alone
    let mut a = cfg.clone();
    a.net_model = NetModel::Analytical;
    let (r, _) = engine::run(&a, &plan, Options::default()).unwrap();
    assert_close(
        r.comm_by_channel["ch0"],
        m / b,
        1e-9,
        "analytical channel 0",
    );
    assert_close(
        r.comm_by_channel["ch1"],
        m2 / b,
        1e-9,
        "analytical channel 1",
    );
    assert_close(
        r.iteration_time_s,
        1e-3 + m2 / b,
        1e-9,
        "analytical iteration",
    );
}

/// A forward pass that waits for a communication of its own iteration
/// (an embedding lookup's AlltoAll, a model-parallel activation): F1
/// starts exactly when the collective that F0 started ends, and the wait
/// is recorded as a stall of F1.
#[test]
fn a_forward_pass_waits_exactly_for_its_collective() {
    let b = 1e9;
    let lat = 7e-6;
    let c = ClusterSpec::flat(4, b, lat);
    let a2a = Collective::new(Op::AllToAll);
    let size = 8e6;
    let tasks = vec![
        Task {
            label: Label::Named("fwd 0".into()),
            layer: Some(0),
            work: Work::Compute {
                kind: ComputeKind::Forward,
                duration: ms(2.0),
            },
            deps: vec![],
            priority: 0,
            lead: false,
        },
        Task {
            label: Label::Named("lookup".into()),
            layer: Some(1),
            work: Work::Comm {
                channel: 0,
                collective: a2a,
                payload: Payload::Uniform(size),
            },
            deps: vec![Dep { task: 0, back: 0 }],
            priority: 0,
            lead: false,
        },
        Task {
            label: Label::Named("fwd 1".into()),
            layer: Some(1),
            work: Work::Compute {
                kind: ComputeKind::Forward,
                duration: ms(3.0),
            },
            deps: vec![Dep { task: 1, back: 0 }],
            priority: 1,
            lead: false,
        },
    ];
    let plan = Plan {
        tasks,
        channels: vec![ChannelSpec {
            name: "lookups".into(),
            schedule: Schedule::Fifo,
            fusion: 0,
            partition: 0,
        }],
        host_cores: 1,
        on_server_machines: Vec::new(),
        server_host_cores: 0,
        per_iteration: Default::default(),
        stages: 1,
        stage: Vec::new(),
    };
    plan.check();
    for net in [NetModel::Analytical, NetModel::Flow] {
        let cfg = config(
            c.clone(),
            model(vec![layer("a", 0, 2.0, 0.0), layer("b", 0, 3.0, 0.0)]),
            net,
        );
        let (r, tl) = engine::run(&cfg, &plan, with(|o| o.trace = true)).unwrap();
        let tl = tl.unwrap();
        // pairwise AlltoAll of 8 MB over 4 GPUs: 3 steps of α + 2 MB/B
        let a2a_s = 3.0 * (lat + size / 4.0 / b);
        for it in 0..7u32 {
            let msg = tl
                .comm
                .iter()
                .find(|m| m.pieces[0].iter == it)
                .expect("a lookup per iteration");
            let f1 = tl
                .compute
                .iter()
                .find(|s| s.iter == it && s.task == 2)
                .expect("fwd 1");
            let f0 = tl
                .compute
                .iter()
                .find(|s| s.iter == it && s.task == 0)
                .unwrap();
            assert_eq!(msg.start, f0.end, "{net:?}: the lookup starts when F0 ends");
            assert_eq!(f1.start, msg.end, "{net:?}: F1 starts when the lookup ends");
            assert_close((msg.end - msg.start).as_secs(), a2a_s, 1e-9, "lookup time");
            let stall = tl.stalls.iter().find(|s| s.iter == it).expect("a stall");
            assert_eq!((stall.start, stall.end, stall.task), (f0.end, msg.end, 2));
        }
        assert_close(r.iteration_time_s, 5e-3 + a2a_s, 1e-9, "iteration");
        assert_close(r.exposed_comm_s, a2a_s, 1e-6, "exposed");
    }
}

/// CPU tasks run on each node's host, `host_cores` at a time, and the
/// next iteration's compute waits for them. A task on the dedicated
/// server machines (`Plan::on_server_machines`) takes a core of the
/// server machine's host beside the node's, so on one core each the two
/// 4 ms tasks overlap there (1 + 4 ms) where on the node's host alone
/// they queue (1 + 8 ms); both on the server machine, its own cores
/// (`Plan::server_host_cores`, else the node's) decide.
#[test]
fn cpu_tasks_queue_for_the_hosts_cores() {
    let c = ClusterSpec::flat(2, 1e9, 0.0);
    let cpu = |name: &str| Task {
        label: Label::Named(name.into()),
        layer: None,
        work: Work::Cpu { duration: ms(4.0) },
        deps: vec![Dep { task: 0, back: 0 }],
        priority: 0,
        lead: false,
    };
    // (the node's cores, which tasks run on the server machine, its
    // cores, the iteration in ms)
    for (cores, apart, server_cores, want) in [
        (1u32, vec![], 0, 1.0 + 8.0),
        (2, vec![], 0, 1.0 + 4.0),
        (1, vec![false, false, true], 0, 1.0 + 4.0),
        (2, vec![false, false, true], 0, 1.0 + 4.0),
        // both on the server machine: its own cores decide
        (2, vec![false, true, true], 1, 1.0 + 8.0),
        (1, vec![false, true, true], 2, 1.0 + 4.0),
        (1, vec![false, true, true], 0, 1.0 + 8.0),
    ] {
        let plan = Plan {
            tasks: vec![
                Task {
                    label: Label::Named("fwd".into()),
                    layer: Some(0),
                    work: Work::Compute {
                        kind: ComputeKind::Forward,
                        duration: ms(1.0),
                    },
                    deps: vec![Dep { task: 1, back: 1 }, Dep { task: 2, back: 1 }],
                    priority: 0,
                    lead: false,
                },
                cpu("aggregate a"),
                cpu("aggregate b"),
            ],
            channels: vec![],
            host_cores: cores,
            on_server_machines: apart,
            server_host_cores: server_cores,
            per_iteration: Default::default(),
            stages: 1,
            stage: Vec::new(),
        };
        plan.check();
        for every_gpu in [false, true] {
            let cfg = config(
                c.clone(),
                model(vec![layer("l", 0, 1.0, 0.0)]),
                NetModel::Flow,
            );
            let (r, _) = engine::run(&cfg, &plan, with(|o| o.every_gpu = every_gpu)).unwrap();
            assert_close(r.iteration_time_s, want * 1e-3, 1e-12, "iteration");
            // the busiest host: the one that runs both tasks, else (equals)
            // the node's; its work an iteration, its cores, how busy they
            // are, and its longest task (the first of equals)
            let h = r.host_cpu.as_ref().expect("hosts worked");
            let both_apart = plan.on_server_machines == [false, true, true];
            let (host, busy, host_cores) = match (both_apart, plan.on_server_machines.is_empty()) {
                (true, _) => (
                    "server machine beside node 0",
                    8.0,
                    if server_cores > 0 {
                        server_cores
                    } else {
                        cores
                    },
                ),
                (false, true) => ("node 0", 8.0, cores),
                (false, false) => ("node 0", 4.0, cores),
            };
            assert_eq!((h.host.as_str(), h.cores), (host, host_cores), "{h:?}");
            assert_close(h.busy_s, busy * 1e-3, 1e-12, "busy");
            assert_close(
                h.utilisation,
                busy / (f64::from(host_cores) * want),
                1e-9,
                "utilisation",
            );
            assert_eq!(h.longest_task, "aggregate a");
            assert_close(h.longest_task_s, 4e-3, 1e-12, "longest");
        }
    }
}

/// A CPU task's duration may differ by node (`PerIteration::PerNode`: a
/// parameter server's variables on some hosts and not others), and a
/// host with nothing of such a task to do lets it pass at once instead
/// of queueing it behind its busy cores. Two nodes of one core: after a
/// 1 ms forward pass, "long" runs 5 ms on node 1 (nothing on node 0) and
/// "a" 4 ms on node 0 (nothing on node 1), "long" readied first; an empty
/// transfer waits for "a" on every node, and the next forward pass for
/// it. Passing at once, node 1's "a" ends at 1 ms and the transfer at 5
/// ms (node 0's): a 5 ms iteration. Queued behind "long", it would end
/// at 6 ms: a 6 ms iteration.
#[test]
fn cpu_tasks_may_differ_by_node() {
    use sim::train::task::PerIteration;
    let c = ClusterSpec::flat(2, 1e9, 0.0);
    let cpu = |name: &str| Task {
        label: Label::Named(name.into()),
        layer: None,
        work: Work::Cpu { duration: ms(0.0) },
        deps: vec![Dep { task: 0, back: 0 }],
        priority: 0,
        lead: false,
    };
    let mut plan = Plan {
        tasks: vec![
            Task {
                label: Label::Named("fwd".into()),
                layer: Some(0),
                work: Work::Compute {
                    kind: ComputeKind::Forward,
                    duration: ms(1.0),
                },
                deps: vec![Dep { task: 3, back: 1 }],
                priority: 0,
                lead: false,
            },
            cpu("long"),
            cpu("a"),
            Task {
                label: Label::Named("x".into()),
                layer: Some(0),
                work: Work::Comm {
                    channel: 0,
                    collective: Collective::new(Op::AllReduce),
                    payload: Payload::Uniform(0.0),
                },
                deps: vec![Dep { task: 2, back: 0 }],
                priority: 0,
                lead: false,
            },
        ],
        channels: vec![ChannelSpec {
            name: "x".into(),
            schedule: Schedule::Fifo,
            fusion: 0,
            partition: 0,
        }],
        host_cores: 1,
        on_server_machines: Vec::new(),
        server_host_cores: 0,
        per_iteration: Default::default(),
        stages: 1,
        stage: Vec::new(),
    };
    for (t, on) in [(1u32, [0.0, 5.0]), (2, [4.0, 0.0])] {
        plan.per_iteration.insert(
            t,
            PerIteration::PerNode(on.iter().map(|&x| ms(x)).collect()),
        );
    }
    plan.check();
    let cfg = config(c, model(vec![layer("l", 0, 1.0, 0.0)]), NetModel::Flow);
    let (r, _) = engine::run(&cfg, &plan, with(|o| o.every_gpu = true)).unwrap();
    assert_close(r.iteration_time_s, 5e-3, 1e-12, "iteration");
}

/// AllGatherv by ring, per-rank blocks s_j, on one link class (N
/// single-GPU nodes, bandwidth B, latency α): in step k every rank
/// forwards a block to its successor, and the largest block crosses N−1
/// hops one after the other, so both models give (N−1)(α + max_j s_j/B):
/// the slowest rank's bytes over the bandwidth, plus the step latencies.
#[test]
fn allgatherv_ring_closed_form() {
    let (b, lat) = (2e9, 3e-6);
    for n in [2u32, 3, 5, 8] {
        let c = ClusterSpec::flat(n, b, lat);
        let blocks: Arc<[f64]> = (0..n).map(|j| 1e6 * (1.0 + ((j * 7) % 5) as f64)).collect();
        let max = blocks.iter().cloned().fold(0.0, f64::max);
        let want = (n - 1) as f64 * (lat + max / b);
        let ag = Collective::new(Op::AllGather);
        let payload = Payload::PerRank(blocks.clone());
        let (a, sent) = sim::collective::analytical::CostModel::time_of(&ag, &c, &payload);
        assert_close(a, want, 1e-9, "analytical");
        let f = run_program(&ag.program_for(&c, &payload), &c).unwrap();
        // the flow model adds the intra hops' latency (0 here) and rounds
        // each flow to the picosecond
        assert_close(f.time.as_secs(), want, 1e-9, "flow");
        // every rank receives every other block once
        let total: f64 = blocks.iter().sum();
        assert_close(sent, (n - 1) as f64 * total, 1e-12, "bytes");
        for (j, r) in f.received.iter().enumerate() {
            assert_close(*r, total - blocks[j], 1e-12, "received");
        }
        // equal blocks are the uniform AllGather
        let even = Payload::PerRank((0..n).map(|_| 1e6).collect());
        let (t_even, _) = sim::collective::analytical::CostModel::time_of(&ag, &c, &even);
        assert_close(
            t_even,
            ag.analytical(&c).time(n as f64 * 1e6),
            1e-12,
            "uniform",
        );
    }
}

/// AlltoAllv by pairwise exchange on one link class, where the bytes of
/// a send depend only on its step (rank i sends c_k to rank i + k + 1 in
/// step k): every step is the same for every rank, so both models give
/// Σ_k (α + c_k/B). With one heavy rank sending x to every peer and the
/// others y < x, the analytical model's step maximum is always the heavy
/// rank's: (N−1)α + (N−1)x/B, the slowest rank's bytes over the bandwidth
/// plus the step latencies.
#[test]
fn alltoallv_pairwise_closed_forms() {
    let (b, lat) = (1e9, 5e-6);
    let a2a = Collective::new(Op::AllToAll);
    for n in [2u32, 3, 4, 7] {
        let c = ClusterSpec::flat(n, b, lat);
        let nu = n as usize;
        let step_size = |k: usize| 1e5 * (1.0 + (k * 3 % 4) as f64);
        let by_step: Arc<[f64]> = (0..nu * nu)
            .map(|x| {
                let (i, j) = (x / nu, x % nu);
                if i == j {
                    0.0
                } else {
                    step_size((j + nu - i - 1) % nu)
                }
            })
            .collect();
        let want: f64 = (0..nu - 1).map(|k| lat + step_size(k) / b).sum();
        let payload = Payload::PerPair(by_step);
        let (a, _) = sim::collective::analytical::CostModel::time_of(&a2a, &c, &payload);
        assert_close(a, want, 1e-9, "analytical, sizes by step");
        let f = run_program(&a2a.program_for(&c, &payload), &c).unwrap();
        assert_close(f.time.as_secs(), want, 1e-9, "flow, sizes by step");
        // one heavy row
        let (x, y) = (3e6, 1e6);
        let heavy: Arc<[f64]> = (0..nu * nu)
            .map(|k| if k / nu == 1 % nu { x } else { y })
            .collect();
        let (a, sent) =
            sim::collective::analytical::CostModel::time_of(&a2a, &c, &Payload::PerPair(heavy));
        assert_close(
            a,
            (n - 1) as f64 * (lat + x / b),
            1e-9,
            "analytical, heavy row",
        );
        let off_diagonal = (nu - 1) as f64;
        assert_close(
            sent,
            off_diagonal * (x + (nu - 1) as f64 * y),
            1e-12,
            "bytes",
        );
    }
}

/// PS with per-server shards: equal shards are the even split, and every
/// worker pushes (and pulls) each server's shard.
#[test]
fn ps_with_unequal_shards() {
    let c = ClusterSpec::flat(3, 1e9, 2e-6);
    let ps = Collective::new(Op::Ps);
    let even = Payload::PerServer(Arc::from([4e6, 4e6, 4e6]));
    let (t, sent) = sim::collective::analytical::CostModel::time_of(&ps, &c, &even);
    assert_close(t, ps.analytical(&c).time(12e6), 1e-12, "even shards");
    assert_close(
        sent,
        ps.analytical(&c).bytes_sent_total(12e6),
        1e-12,
        "even bytes",
    );
    let uneven = Payload::PerServer(Arc::from([1e6, 2e6, 9e6]));
    let f = run_program(&ps.program_for(&c, &uneven), &c).unwrap();
    // 3 workers push 12 MB each, 3 servers pull their shard to 3 workers
    let total: f64 = f.sent.iter().sum();
    assert_close(total, 3.0 * 12e6 + 3.0 * 12e6, 1e-12, "bytes");
    // the largest shard's server is the bottleneck: its NIC receives 9 MB
    // from each of the 2 remote workers
    assert!(f.time.as_secs() >= 2.0 * 9e6 / 1e9, "{}", f.time.as_secs());
    // with local aggregation the intra-node reduce and broadcast carry the
    // whole variable, however it is split over the servers: the same bytes
    // as the even split of the same variable
    let mut c = ClusterSpec::flat(2, 1e9, 2e-6);
    c.gpus_per_node = 4;
    let la = Collective {
        local_aggregation: true,
        ..Collective::new(Op::Ps)
    };
    let uneven = Payload::PerServer(Arc::from([1e6, 9e6]));
    let (_, sent) = sim::collective::analytical::CostModel::time_of(&la, &c, &uneven);
    assert_close(
        sent,
        la.analytical(&c).bytes_sent_total(10e6),
        1e-12,
        "bytes",
    );
    let f = run_program(&la.program_for(&c, &uneven), &c).unwrap();
    assert_close(f.sent.iter().sum(), sent, 1e-12, "flow bytes");
}

/// Stragglers: a cluster whose communication costs nothing (4 bytes of
/// gradient at 1 PB/s, no latency), so each iteration lasts the slowest
/// GPU's compute, C · max_g X(g, i), with C = 3 ms the nominal compute
/// and X the per-GPU, per-iteration factors.
fn straggler_config(n: u32, cv: f64, iterations: u32) -> TrainConfig {
    let mut m = model(vec![layer("l", 1, 1.0, 2.0)]);
    m.compute_jitter = cv;
    let mut cfg = config(ClusterSpec::flat(n, 1e15, 0.0), m, NetModel::Analytical);
    cfg.warmup_iterations = 0;
    cfg.iterations = iterations;
    cfg.seed = 42;
    cfg
}

/// Φ, the standard normal CDF, on a grid, by the trapezoid rule on the
/// density (error O(h²) ≈ 1e-9 at h = 1e-4).
struct NormalGrid {
    z0: f64,
    h: f64,
    cdf: Vec<f64>,
}

impl NormalGrid {
    fn new() -> NormalGrid {
        let (z0, h) = (-9.0, 1e-4);
        let pdf = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let n = (18.0 / h) as usize;
        let mut cdf = Vec::with_capacity(n + 1);
        let mut acc = 0.0;
        cdf.push(0.0);
        for k in 0..n {
            let z = z0 + k as f64 * h;
            acc += 0.5 * h * (pdf(z) + pdf(z + h));
            cdf.push(acc);
        }
        NormalGrid { z0, h, cdf }
    }
}

/// Mean and standard deviation of the maximum of `n` independent
/// log-normal draws of mean 1 and coefficient of variation `cv`, from the
/// order statistic's law: P(max ≤ x) = Φ(z)^n with x = exp(μ + σz),
/// σ² = ln(1 + cv²), μ = −σ²/2, so E[max^p] = ∫ x^p d(Φ(z)^n).
fn max_of_lognormals(n: u32, cv: f64, grid: &NormalGrid) -> (f64, f64) {
    let s2 = (1.0 + cv * cv).ln();
    let (mu, s) = (-s2 / 2.0, s2.sqrt());
    let (mut m1, mut m2) = (0.0, 0.0);
    for k in 0..grid.cdf.len() - 1 {
        let z = grid.z0 + (k as f64 + 0.5) * grid.h;
        let dp = grid.cdf[k + 1].powi(n as i32) - grid.cdf[k].powi(n as i32);
        let x = (mu + s * z).exp();
        m1 += x * dp;
        m2 += x * x * dp;
    }
    (m1, (m2 - m1 * m1).sqrt())
}

/// With compute jitter every GPU is simulated, and each iteration lasts
/// exactly the slowest GPU's compute (every GPU waits for the slowest's
/// gradient before its next forward pass).
#[test]
fn the_slowest_gpu_sets_each_iterations_pace() {
    let (n, cv) = (16, 0.2);
    let cfg = straggler_config(n, cv, 30);
    let (_, tl) = simulate_with(&cfg, with(|o| o.trace = true)).unwrap();
    let tl = tl.unwrap();
    assert_eq!(tl.gpus, n, "every GPU simulated");
    let jitter = sim::train::jitter::Jitter::new(cfg.seed, cv);
    for i in 0..30u32 {
        let slowest = (0..n).map(|g| jitter.factor(g, i)).fold(0.0, f64::max);
        let took =
            (tl.iteration_starts[i as usize + 1] - tl.iteration_starts[i as usize]).as_secs();
        // each of the two passes is rounded to the picosecond; the
        // AllReduce of 4 bytes at 1 PB/s adds 6e-15 s
        assert!(
            (took - 3e-3 * slowest).abs() < 3e-12,
            "iteration {i}: {took} s, slowest factor {slowest}"
        );
    }
    // each GPU's compute spans are its own
    let f0 = |g: u32| {
        tl.compute
            .iter()
            .find(|s| s.gpu == g && s.iter == 3 && s.forward())
            .map(|s| s.end - s.start)
            .unwrap()
    };
    assert_ne!(f0(0), f0(1));
}

/// On 64 GPUs of 8-GPU machines with stragglers, one GPU running at each
/// iteration's slowest factor gives every GPU's numbers (ring and
/// hierarchical AllReduce and PS, both network models), and it is what
/// the engine runs unless told to follow every GPU or to trace them.
#[test]
fn stragglers_on_one_gpu_at_the_slowest_pace() {
    for (method, net) in [
        (DenseMethod::AllReduce(Algo::Ring), NetModel::Analytical),
        (DenseMethod::AllReduce(Algo::Hierarchical), NetModel::Flow),
        (DenseMethod::Ps, NetModel::Flow),
    ] {
        let mut c = ClusterSpec::flat(8, 1.25e9, 5e-6);
        c.gpus_per_node = 8;
        let m = model(vec![
            layer("a", 2_000_000, 2.0, 4.0),
            layer("b", 500_000, 1.0, 2.0),
            layer("c", 3_000_000, 3.0, 5.0),
        ]);
        let mut cfg = config(c, m, net);
        cfg.model.compute_jitter = 0.05;
        cfg.iterations = 8;
        cfg.strategy.dense = method;
        let plan = sim::train::planner::plan(&cfg);
        assert_eq!(
            engine::Mode::of(&cfg, &plan, Options::default()),
            engine::Mode::Representative
        );
        assert_eq!(
            engine::Mode::of(&cfg, &plan, with(|o| o.trace = true)),
            engine::Mode::EveryGpu
        );
        let (one, _) = simulate_with(&cfg, Options::default()).unwrap();
        let (all, _) = simulate_with(&cfg, with(|o| o.every_gpu = true)).unwrap();
        assert!(
            same_but_mean_compute(&one, &all),
            "{method:?}:\n{one:?}\n{all:?}"
        );
        assert!(
            one.events * 4 < all.events,
            "{} against {} events",
            one.events,
            all.events
        );
    }
}

/// Parallax's hybrid with local aggregation queues each machine's
/// aggregation on its host when that machine's GPUs finish: with
/// stragglers one GPU cannot stand for all (a fast machine's host work
/// can go ahead of other work the slowest one's waits behind), so every
/// GPU is followed; a plain AllReduce of the same model keeps one GPU.
#[test]
fn host_work_that_waits_on_compute_keeps_every_gpu() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/papers/parallax/fig9-nlp.toml"
    ))
    .unwrap()
    .replace("ideal = true\n", "")
    .replace("ps_partitions = \"auto\"", "ps_partitions = 16");
    let points = sim::scenario::load_str(&text, "fig9-nlp.toml", "fig9-nlp").unwrap();
    let cfg = &points
        .iter()
        .find(|p| p.config.cluster.nodes == 2)
        .unwrap()
        .config;
    assert!(cfg.model.compute_jitter > 0.0);
    let plan = sim::train::planner::plan(cfg);
    assert_eq!(
        engine::Mode::of(cfg, &plan, Options::default()),
        engine::Mode::EveryGpu
    );
    let mut ar = cfg.clone();
    ar.strategy.sparse = Some(sim::strategy::SparseMethod::AllReduce);
    ar.strategy.local_aggregation = false;
    let plan = sim::train::planner::plan(&ar);
    assert_eq!(
        engine::Mode::of(&ar, &plan, Options::default()),
        engine::Mode::Representative
    );
}

/// Over many iterations the mean iteration time is C · E[max of N draws]
/// (the order statistic of the log-normal law), within 4 standard errors
/// of the mean of K iterations.
#[test]
fn mean_iteration_is_the_expected_maximum_of_the_draws() {
    let grid = NormalGrid::new();
    let k = 400;
    for (n, cv) in [(2u32, 0.1), (8, 0.2), (32, 0.05)] {
        let r = simulate(&straggler_config(n, cv, k)).unwrap();
        let (mean, sd) = max_of_lognormals(n, cv, &grid);
        let want = 3e-3 * mean;
        let tol = 4.0 * 3e-3 * sd / (k as f64).sqrt();
        assert!(
            (r.iteration_time_s - want).abs() < tol,
            "N={n} cv={cv}: mean iteration {} s, expected {want} ± {tol}",
            r.iteration_time_s
        );
        // the expected maximum grows with N (a sanity check of the law)
        assert!(mean > 1.0 && (n < 2 || mean > max_of_lognormals(n / 2, cv, &grid).0));
    }
    // the quadrature against an independent one (scipy, docs/models.md
    // §4.1): c = 0.05 gives 1.07289 at N = 8 and 1.17494 at N = 1024
    for (n, want) in [(8, 1.07289), (1024, 1.17494)] {
        let (got, _) = max_of_lognormals(n, 0.05, &grid);
        assert!((got - want).abs() < 2e-5, "N={n}: {got}");
    }
}

/// Throughput falls as GPUs are added: the draws of GPUs 0..N are those of
/// a larger cluster's first N GPUs, so each iteration's maximum can only
/// grow; and the same seed gives the same bytes.
#[test]
fn stragglers_cost_more_as_the_cluster_grows() {
    let mut last = 0.0;
    let mut last_eff = f64::INFINITY;
    for n in [1u32, 4, 16, 64] {
        let r = simulate(&straggler_config(n, 0.1, 100)).unwrap();
        assert!(r.iteration_time_s > last, "N={n}: {}", r.iteration_time_s);
        assert!(r.scaling_efficiency < last_eff);
        last = r.iteration_time_s;
        last_eff = r.scaling_efficiency;
    }
    let cfg = straggler_config(8, 0.3, 20);
    let a = serde_json::to_string(&simulate(&cfg).unwrap()).unwrap();
    let b = serde_json::to_string(&simulate(&cfg).unwrap()).unwrap();
    assert_eq!(a, b, "same seed, same bytes");
    let mut other = cfg.clone();
    other.seed = 43;
    assert_ne!(
        a,
        serde_json::to_string(&simulate(&other).unwrap()).unwrap()
    );
}

/// Collectives in groups: every group runs its own instance at once, the
/// size being each group's buffer. On 2 nodes × 4 GPUs (NVLink-class
/// intra links Bi, latency αi; one NIC of B per node, latency α):
///
/// * per node, ring AllReduce of m: 2·3 steps of αi + m/(4·Bi) on the
///   intra links alone;
/// * per rail, ring AllReduce of m: 2 steps in which the 4 rails of a node
///   each send m/2 through the node's one NIC: α + αi + 4·(m/2)/B;
/// * blocks of 2 ranks (GPU pairs inside a node): 2 steps of αi + m/(2·Bi).
///
/// Both models agree (no link carries two of a step's transfers except
/// the NIC, where both models share it alike), the node-folded flow run
/// equals the full one, and a collective with a structure of its own
/// (hierarchical, PS) or a block that does not divide the GPUs has no
/// groups.
#[test]
fn grouped_collectives_closed_forms() {
    let (b, lat) = (12.5e9, 5e-6);
    let (bi, lati) = (150e9, 1e-6);
    let mut c = ClusterSpec::flat(2, b, lat);
    c.gpus_per_node = 4;
    c.intra.bandwidth = bi;
    c.intra.latency = lati;
    let m = 64e6;
    let ar = Collective::new(Op::AllReduce);
    let group = |g| ar.with_group(g, &c).expect("a group");
    let cases = [
        (Grouping::IntraNode, 6.0 * (lati + m / (4.0 * bi))),
        (Grouping::Rail, 2.0 * (lat + lati + 4.0 * (m / 2.0) / b)),
        (Grouping::Block(2), 2.0 * (lati + m / (2.0 * bi))),
    ];
    for (g, want) in cases {
        let coll = group(g);
        let (a, f, out) = both(&coll, &c, m);
        assert_close(a, want, 1e-9, &format!("{g:?} analytical"));
        // the flow model rounds each transfer up to the picosecond and
        // each latency to the nearest: at most 1.5 ps a step
        let steps = coll.program(&c, m).steps() as f64;
        assert!(
            (f - want).abs() <= steps * 1.5e-12,
            "{g:?} flow: {f} vs {want}"
        );
        let prog = coll.program(&c, m);
        assert!(prog.node_symmetric(), "{g:?}");
        let full = sim::collective::exec::run_program_full(&prog, &c).unwrap();
        assert_eq!(full.time, out.time, "{g:?}: folded = full");
        // every GPU of every group sends its 2(s−1) chunks of m/s
        let s = coll.group_size(&c) as f64;
        let sent: f64 = out.sent.iter().sum();
        assert_close(sent, 8.0 * 2.0 * (s - 1.0) * m / s, 1e-12, "bytes");
    }
    let hier = ar.with_algo(Algo::Hierarchical).unwrap();
    assert!(hier.with_group(Grouping::IntraNode, &c).is_none());
    assert!(
        Collective::new(Op::Ps)
            .with_group(Grouping::Rail, &c)
            .is_none()
    );
    assert!(ar.with_group(Grouping::Block(3), &c).is_none());
    assert!(ar.with_group(Grouping::Block(0), &c).is_none());
    // a block across nodes is not node-symmetric: each block's roles differ
    let across = ar.with_group(Grouping::Block(8), &c).unwrap();
    assert!(!across.program(&c, m).node_symmetric());
    assert_close(
        across.analytical(&c).time(m),
        ar.analytical(&c).time(m),
        1e-12,
        "one block of all GPUs = all GPUs",
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Grouped rings, pairwise exchanges and trees on random clusters:
    /// sends and expected receives balance (the flow run finishes and moves
    /// what the analytical model counts), and where the folded shortcut
    /// applies it equals the full run.
    #[test]
    fn grouped_collectives_run_and_fold_exactly(
        nodes in 1u32..5,
        g in prop::sample::select(vec![1u32, 2, 4, 6]),
        k in prop::sample::select(vec![1u32, 2, 3, 4, 8]),
        scattered in any::<bool>(),
        size in 1e3f64..1e8,
    ) {
        let mut c = ClusterSpec::flat(nodes, 1e9, 2e-6);
        c.gpus_per_node = g;
        c.intra.bandwidth = 4e9;
        c.intra.latency = 5e-7;
        if scattered { c.placement = sim::cluster::Placement::Scattered; }
        for base in [
            Collective::new(Op::AllReduce),
            coll(Op::AllReduce, Algo::Binomial),
            Collective::new(Op::AllGather),
            Collective::new(Op::AllToAll),
        ] {
            for grouping in [Grouping::IntraNode, Grouping::Rail, Grouping::Block(k)] {
                let Some(col) = base.with_group(grouping, &c) else { continue };
                let prog = col.program(&c, size);
                let f = sim::collective::exec::run_program_full(&prog, &c).unwrap();
                let sent: f64 = f.sent.iter().sum();
                let want = col.analytical(&c).bytes_sent_total(size);
                prop_assert!(rel(sent, want) < 1e-9 || (sent == 0.0 && want == 0.0));
                let recv: f64 = f.received.iter().sum();
                prop_assert!(rel(recv, sent) < 1e-12 || sent == 0.0);
                if prog.node_symmetric() {
                    let s = run_program(&prog, &c).unwrap();
                    prop_assert!((s.time.as_secs() - f.time.as_secs()).abs() <= 1e-9 * f.time.as_secs(),
                        "{:?} {:?}: folded {} full {}", col.op, grouping, s.time.as_secs(), f.time.as_secs());
                }
            }
        }
    }
}

/// The engine runs a grouped collective like any other: one compute task,
/// then a per-node AllReduce, which the next iteration waits for.
#[test]
fn a_plan_with_a_per_node_collective() {
    let mut c = ClusterSpec::flat(2, 12.5e9, 5e-6);
    c.gpus_per_node = 4;
    c.intra.bandwidth = 150e9;
    c.intra.latency = 1e-6;
    let per_node = Collective::new(Op::AllReduce)
        .with_group(Grouping::IntraNode, &c)
        .unwrap();
    let m = 32e6;
    let plan = plan_of(ms(2.0), vec![(per_node, Payload::Uniform(m))]);
    for net in [NetModel::Analytical, NetModel::Flow] {
        let cfg = config(c.clone(), model(vec![layer("l", 1, 2.0, 0.0)]), net);
        let (r, _) = engine::run(&cfg, &plan, Options::default()).unwrap();
        let ring = 6.0 * (1e-6 + m / (4.0 * 150e9));
        // (flow: up to 1.5 ps of rounding in each of the ring's 6 steps)
        let it = r.iteration_time_s;
        assert!((it - 2e-3 - ring).abs() <= 6.0 * 1.5e-12, "{net:?}: {it}");
        // 2·3 chunks of m/4 from each of 8 GPUs, per GPU
        assert_close(r.bytes_sent_per_gpu, 1.5 * m, 1e-12, "bytes per GPU");
    }
}

/// `model.gradient_precision`: a bf16 (or fp16) gradient is half the
/// bytes of fp32 in every collective, so on a latency-free ring each GPU
/// sends exactly half, and the exposed communication (one layer, nothing
/// to overlap) is exactly half too: T = 2(N−1)/N · m/B.
#[test]
fn half_precision_gradients_halve_the_bytes_and_the_ring_time() {
    use sim::workload::Precision;
    let run = |p: Precision| {
        let mut m = model(vec![layer("fc", 25_000_000, 1.0, 2.0)]);
        m.gradient_precision = p;
        let cfg = config(ClusterSpec::flat(4, 1e9, 0.0), m, NetModel::Analytical);
        simulate(&cfg).unwrap()
    };
    let fp32 = run(Precision::Fp32);
    let want = 2.0 * 3.0 / 4.0 * 100e6 / 1e9;
    assert!(
        (fp32.comm_s - want).abs() < 1e-9,
        "{} vs {want}",
        fp32.comm_s
    );
    for p in [Precision::Bf16, Precision::Fp16] {
        let half = run(p);
        assert_eq!(half.bytes_sent_per_gpu * 2.0, fp32.bytes_sent_per_gpu);
        assert!(
            (half.comm_s - want / 2.0).abs() < 1e-9,
            "{p:?}: {}",
            half.comm_s
        );
        assert!(half.iteration_time_s < fp32.iteration_time_s);
    }
}

/// The scenario files the repository ships (examples and the papers'
/// setups), in path order.
fn shipped_scenarios() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files = Vec::new();
    for dir in [
        "examples",
        "papers/parallax",
        "papers/embrace",
        "papers/gtopk",
        "papers/dct",
        "papers/ring",
    ] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Every point of the shipped scenarios of up to 64 GPUs (more are left
/// out for time), with stragglers (CV 0.05), one warm-up and two measured
/// iterations: its file, its index in the file's grid, its config.
fn shipped_points_with_stragglers() -> Vec<(std::path::PathBuf, usize, TrainConfig)> {
    let mut out = Vec::new();
    for f in shipped_scenarios() {
        let grid = sim::scenario::open_file(&f).unwrap();
        for i in 0..grid.len() {
            let mut cfg = grid.point(i).unwrap().config;
            if cfg.cluster.gpus() > 64 {
                continue;
            }
            cfg.model.compute_jitter = 0.05;
            cfg.warmup_iterations = 1;
            cfg.iterations = 2;
            out.push((f.clone(), i, cfg));
        }
    }
    out
}

/// Every scenario the repository ships (examples and the papers' setups,
/// every method among them), with stragglers (CV 0.05) and two measured
/// iterations: wherever the engine lets one GPU stand for all, following
/// every GPU gives the same numbers (the mean compute within half a
/// picosecond a task). Points of more than 64 GPUs are left out for time.
#[test]
fn one_gpu_for_stragglers_is_exact_on_every_shipped_scenario() {
    let (mut one, mut every) = (0, 0);
    for (f, i, cfg) in shipped_points_with_stragglers() {
        let plan = sim::train::planner::plan(&cfg);
        if engine::Mode::of(&cfg, &plan, Options::default()) == engine::Mode::EveryGpu {
            every += 1;
            continue;
        }
        one += 1;
        let (a, _) = simulate_with(&cfg, Options::default()).unwrap();
        let (b, _) = simulate_with(&cfg, with(|o| o.every_gpu = true)).unwrap();
        assert!(
            same_but_mean_compute(&a, &b),
            "{} point {i}:\n{a:?}\n{b:?}",
            f.display()
        );
    }
    eprintln!("{one} points on one GPU, {every} on every GPU");
    // most shipped points run on one GPU; some plans need every GPU
    assert!(
        one > 50 && every > 0,
        "{one} on one GPU, {every} on every GPU"
    );
}

/// Every shipped scenario point of up to 64 GPUs, every GPU's stream
/// simulated with stragglers (CV 0.05) and traced: re-examining only the
/// streams that wait for a completed task, from the dependency each
/// waits for, gives the result and the timeline (every compute pass,
/// message and stall) of re-examining every blocked stream from its
/// task's first dependency, to the bit.
#[test]
fn the_index_of_waiting_streams_changes_nothing_on_every_shipped_scenario() {
    let mut points = 0;
    let mut stalls = 0;
    for (f, i, cfg) in shipped_points_with_stragglers() {
        let opts = with(|o| {
            o.every_gpu = true;
            o.trace = true;
        });
        let (a, ta) = simulate_with(&cfg, opts).unwrap();
        let reference = Options {
            index_waiters: false,
            ..opts
        };
        let (b, tb) = simulate_with(&cfg, reference).unwrap();
        assert_eq!(a, b, "{} point {i}", f.display());
        let (ta, tb) = (ta.unwrap(), tb.unwrap());
        stalls += ta.stalls.len();
        assert!(ta == tb, "{} point {i}: the timelines differ", f.display());
        points += 1;
    }
    eprintln!("{points} points, {stalls} stalls");
    // the comparison saw the shipped points and streams that waited
    assert!(
        points > 100 && stalls > 1000,
        "{points} points, {stalls} stalls"
    );
}
