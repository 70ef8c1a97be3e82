//! Criterion micro-benchmarks of the engine's pieces: the event queue, the
//! max-min sharing model, and whole collectives and training iterations.
//! Run: `cargo bench --bench engine`. Results: docs/benchmarks.md.

use criterion::{Criterion, criterion_group, criterion_main};
use sim::SimTime;
use sim::cluster::{ClusterSpec, Endpoint, Topology};
use sim::collective::exec::run_flow;
use sim::collective::{Collective, Op};
use sim::net::flow::FlowNet;
use sim::queue::EventQueue;
use std::hint::black_box;

fn queue(c: &mut Criterion) {
    c.bench_function("queue: 100k push+pop, 1k pending", |b| {
        b.iter(|| {
            let mut q = EventQueue::new();
            for i in 0..1000u64 {
                q.push(SimTime(i * 7 % 1000), i);
            }
            for i in 0..100_000u64 {
                let (t, _) = q.pop().unwrap();
                q.push(t + SimTime(1 + i % 997), i);
            }
            black_box(q.len())
        })
    });
}

fn sharing(c: &mut Criterion) {
    // 1024 flows: an incast of 64 senders into each of 16 receivers
    let cluster = ClusterSpec::flat(1024, 12.5e9, 1e-6);
    let topo = Topology::new(&cluster);
    c.bench_function("flow: max-min recompute, 1024 flows", |b| {
        b.iter(|| {
            let mut net = FlowNet::new(topo.capacities());
            for s in 0..1024u32 {
                let path = topo.path(Endpoint::Gpu(s), Endpoint::Gpu((s % 16) * 64 + 1));
                if !path.links().is_empty() {
                    net.start(SimTime::ZERO, path, 1e6 + s as f64, s as u64);
                }
            }
            black_box(net.next_finish())
        })
    });
}

fn collectives(c: &mut Criterion) {
    let mut cluster = ClusterSpec::flat(128, 25e9, 1.2e-6);
    cluster.gpus_per_node = 8;
    cluster.intra.bandwidth = 270e9;
    let ring = Collective::new(Op::AllReduce);
    c.bench_function("flow: 64 MiB ring AllReduce, 1024 GPUs", |b| {
        b.iter(|| black_box(run_flow(&ring, &cluster, 64.0 * 1048576.0).unwrap().time))
    });
    c.bench_function("analytical: compile ring AllReduce, 1024 GPUs", |b| {
        b.iter(|| black_box(ring.analytical(&cluster).time(64.0 * 1048576.0)))
    });
    let mut tree_cluster = cluster.clone();
    tree_cluster.nodes = 32;
    let tree = Collective::new(Op::AllReduce)
        .with_algo(sim::collective::Algo::Binomial)
        .unwrap();
    // the binomial tree, as before `tree` became NCCL's pipelined one, so
    // the figure stays comparable with docs/benchmarks.md's earlier runs
    c.bench_function(
        "flow: 64 MiB binomial-tree AllReduce, 256 GPUs (no symmetry)",
        |b| {
            b.iter(|| {
                black_box(
                    run_flow(&tree, &tree_cluster, 64.0 * 1048576.0)
                        .unwrap()
                        .time,
                )
            })
        },
    );
}

criterion_group!(benches, queue, sharing, collectives);
criterion_main!(benches);
