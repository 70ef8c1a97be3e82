//! Planners: a synchronisation method turned into one iteration's tasks.
//!
//! A planner reads the model, the strategy and the cluster and emits a
//! [`Plan`]; the engine runs plans without knowing which method made them.
//! Each method lives in a file of its own, citing its paper:
//!
//! * [`allreduce`]: data parallelism with a ring, tree, hierarchical,
//!   binomial or in-switch (NVLS, SHARP) AllReduce per gradient (BaiduRing; Horovod's wait-free
//!   backpropagation and fusion);
//! * [`ps`]: data parallelism through parameter servers (Parallax §2, the
//!   PS architecture), with or without local aggregation, each layer
//!   spread evenly over the servers or, as TensorFlow places them, each
//!   variable whole on one server with the servers' CPU;
//! * [`compressed`]: Top-k and gTop-k S-SGD (the gTop-k paper), the whole
//!   gradient sparsified after the backward pass by a selection kernel on
//!   the compute stream;
//! * [`dct`]: DCT-DP (the DCT paper), each layer's gradient masked by a
//!   threshold re-sorted every life-span L, pushed sparse to parameter
//!   servers;
//! * [`mp`]: model parallelism (`mp_stages` > 1), with DCT-MP's masked
//!   activations between stages and any of the dense methods above but
//!   Top-k and gTop-k across the trainers (hybrid DP × MP).
//!
//! Both send each layer's gradient as soon as its backward pass ends, and
//! the next iteration's forward pass of a layer waits for that layer's
//! synchronised parameters; they differ only in the collective, so they
//! share [`data_parallel`]. The embedding tables of a model with sparse
//! parts are synchronised by the sparse method ([`sparse`]: PS,
//! AllGather, AllReduce, or EmbRace's AlltoAll), whose tasks
//! [`data_parallel`] adds to the dense ones; `dense = "allreduce"` with
//! `sparse = "ps"` is Parallax's hybrid. Tables in host memory add the
//! host's lookups, updates and copies of [`host`].

pub mod allreduce;
pub mod compressed;
pub mod dct;
mod draws;
pub mod host;
pub mod mp;
pub mod ps;
pub mod sparse;

use super::TrainConfig;
use super::task::{ChannelSpec, ComputeKind, Dep, Label, Plan, Task, TaskId, Work};
use crate::collective::{Collective, Payload};
use crate::strategy::DenseMethod;
use crate::workload::Layer;

/// The plan for `cfg`'s strategy.
pub fn plan(cfg: &TrainConfig) -> Plan {
    let mut plan = match cfg.strategy.dense {
        _ if cfg.strategy.mp_stages > 1 => mp::plan(cfg),
        DenseMethod::AllReduce(_) => allreduce::plan(cfg),
        DenseMethod::Ps => ps::plan(cfg),
        DenseMethod::TopK | DenseMethod::GTopK => compressed::plan(cfg),
        DenseMethod::Dct => dct::plan(cfg),
    };
    // the tasks added after the last on a server machine run on the GPU
    // machines
    if !plan.on_server_machines.is_empty() {
        plan.on_server_machines.resize(plan.tasks.len(), false);
    }
    // a planner bug, not a property of the input: the linear checks always,
    // the search for a cycle in debug builds (every test), not on each
    // point of a release sweep
    plan.check_links();
    if cfg!(debug_assertions) {
        plan.check();
    }
    plan
}

/// Layer `l`'s forward pass, waiting for task `after` of the previous
/// iteration (the layer's synchronised parameters) where there is one.
fn forward_task(l: u32, layer: &Layer, after: Option<TaskId>) -> Task {
    Task {
        label: Label::Forward,
        layer: Some(l),
        work: Work::Compute {
            kind: ComputeKind::Forward,
            duration: layer.forward,
        },
        deps: after
            .map(|task| vec![Dep { task, back: 1 }])
            .unwrap_or_default(),
        priority: l as u64,
        lead: false,
    }
}

/// Layer `l`'s backward pass.
fn backward_task(l: u32, layer: &Layer) -> Task {
    Task {
        label: Label::Backward,
        layer: Some(l),
        work: Work::Compute {
            kind: ComputeKind::Backward,
            duration: layer.backward,
        },
        deps: Vec::new(),
        priority: l as u64,
        lead: false,
    }
}

/// Data parallelism with one collective per layer gradient, on one channel
/// named `channel` that follows the strategy's schedule, fusion and
/// partition:
///
/// * forward passes F_0 … F_{L−1}, then backward passes B_{L−1} … B_0, on
///   the compute stream (with EmbRace's horizontal scheduling, the
///   embedding tables' forward passes first: [`sparse::lookups_first`]);
/// * S_l, the collective of layer l's gradient (fp32, 4 bytes a
///   parameter), waits for B_l;
/// * F_l of the next iteration waits for S_l.
///
/// Layers without parameters, and clusters of one GPU, communicate
/// nothing. Embedding tables add the tasks of [`sparse::add`].
pub fn data_parallel(cfg: &TrainConfig, collective: Collective, channel: &str) -> Plan {
    let layers = &cfg.model.layers;
    let l_count = layers.len() as u32;
    let comm = cfg.cluster.gpus() > 1;
    // the forward passes' stream order: the layers', or with EmbRace's
    // horizontal scheduling the embedding lookups first (they depend on
    // no other forward pass, and their AlltoAlls then overlap the dense
    // blocks' forward passes: EmbRace §4.2.1)
    let order: Vec<u32> = if sparse::lookups_first(cfg) {
        let (emb, rest): (Vec<u32>, Vec<u32>) =
            (0..l_count).partition(|&l| layers[l as usize].embedding.is_some());
        emb.into_iter().chain(rest).collect()
    } else {
        (0..l_count).collect()
    };
    let mut slot = vec![0 as TaskId; layers.len()];
    for (i, &l) in order.iter().enumerate() {
        slot[l as usize] = i as TaskId;
    }
    // ids: F_l at its stream position, B_l = L + (L − 1 − l), S_l after
    // all compute tasks
    let fwd = move |l: u32| slot[l as usize];
    let bwd = |l: u32| (l_count + (l_count - 1 - l)) as TaskId;
    let mut sync: Vec<Option<TaskId>> = vec![None; layers.len()];
    let mut next = 2 * l_count;
    for (l, layer) in layers.iter().enumerate() {
        if comm && cfg.model.grad_bytes(layer) > 0 {
            sync[l] = Some(next);
            next += 1;
        }
    }
    let mut tasks = Vec::with_capacity(next as usize);
    for &l in &order {
        tasks.push(forward_task(l, &layers[l as usize], sync[l as usize]));
    }
    for l in (0..l_count).rev() {
        tasks.push(backward_task(l, &layers[l as usize]));
    }
    // through parameter servers with each variable whole on its server
    // (`ps_placement = "whole"`): the push to the servers of the layer's
    // variables now, their work and the pull below
    let dense_ps = comm && cfg.strategy.dense == DenseMethod::Ps && cfg.strategy.ps_whole_variables;
    let servers = collective.servers(&cfg.cluster);
    let placed = if dense_ps {
        ps::placement(cfg, servers)
    } else {
        Vec::new()
    };
    let bpe = cfg.model.gradient_precision.bytes();
    for (l, layer) in layers.iter().enumerate() {
        if sync[l].is_some() && dense_ps {
            // the push to the lowest of the layer's servers; the others'
            // after the sparse tasks (`ps::server_tasks`)
            let j = placed[l]
                .iter()
                .map(|&(_, j)| j)
                .min()
                .expect("a layer with parameters has a variable");
            tasks.push(ps::push_task(
                l as u32,
                ps::push_channel(j),
                collective,
                ps::server_bytes(&placed[l], j, servers, bpe),
                bwd(l as u32),
            ));
        } else if sync[l].is_some() {
            tasks.push(Task {
                label: Label::Parameters,
                layer: Some(l as u32),
                work: Work::Comm {
                    channel: 0,
                    collective,
                    payload: Payload::Uniform(cfg.model.grad_bytes(layer) as f64),
                },
                deps: vec![Dep {
                    task: bwd(l as u32),
                    back: 0,
                }],
                priority: l as u64,
                lead: false,
            });
        }
    }
    debug_assert!(tasks.len() == next as usize);
    let st = &cfg.strategy;
    let mut plan = Plan {
        tasks,
        channels: vec![ChannelSpec {
            name: channel.to_string(),
            schedule: st.schedule,
            fusion: st.fusion,
            partition: st.partition,
        }],
        host_cores: 1,
        on_server_machines: Vec::new(),
        server_host_cores: 0,
        stages: 1,
        stage: Vec::new(),
        per_iteration: Default::default(),
    };
    if dense_ps {
        // a push and a pull channel a server: TensorFlow's transfers are
        // RPCs of their own, to different servers and in both directions
        // at once; each sends a variable's tensor whole
        for way in ["push", "pull"] {
            for j in 0..servers {
                plan.channels.push(ChannelSpec {
                    name: format!("{way} {j}"),
                    schedule: st.schedule,
                    fusion: 0,
                    partition: 0,
                });
            }
        }
    }
    let mut chains = sparse::add(cfg, &mut plan, &fwd, bwd);
    if dense_ps {
        let pushers = ps::pushers(cfg, collective);
        for l in 0..l_count {
            let Some(push) = sync[l as usize] else {
                continue;
            };
            let (pulls, receiving) = ps::server_tasks(
                cfg,
                &mut plan,
                l,
                &placed[l as usize],
                (pushers, pushers),
                (collective, servers),
                (bwd(l), push),
            );
            chains.push((l, receiving));
            // the next forward pass waits for the pulls
            let deps = &mut plan.tasks[fwd(l) as usize].deps;
            deps.retain(|d| !(d.task == push && d.back == 1));
            deps.extend(pulls.into_iter().map(|task| Dep { task, back: 1 }));
        }
    }
    chain_receives(&mut plan, chains);
    plan
}

/// The threads that complete a TensorFlow 1.6 process's gRPC calls as
/// their client: eight polling threads, each draining its own completion
/// queue (`kGrpcWorkerCacheThreadCount` in `grpc_worker_cache.cc` at tag
/// v1.6.0, commit 0d5fb1036e0e; docs/research/tf-ps-costs.md §0.4), each
/// remote task the process calls assigned to one of them, round-robin in
/// the order first used, and kept there. A fetched tensor is parsed and
/// its callbacks run on that thread (`RPCState::OnCompleted`).
pub const GRPC_POLLING_THREADS: u32 = 8;

/// What each of a process's polling threads ([`GRPC_POLLING_THREADS`])
/// takes of its calls to `targets` remote tasks, numbered in the order the
/// process first calls them, target i weighing `weight(i)`: target i on
/// thread i mod 8, as many threads as targets where there are fewer. The
/// weights summed by thread, thread 0 first.
pub fn polling_threads(targets: u32, weight: impl Fn(u32) -> f64) -> Vec<f64> {
    let threads = targets.clamp(1, GRPC_POLLING_THREADS);
    let mut out = vec![0.0; threads as usize];
    for i in 0..targets {
        out[(i % threads) as usize] += weight(i);
    }
    out
}

/// A parameter server receives the pushes of all its variables and tables
/// on its polling threads ([`polling_threads`]: worker w's on thread
/// w mod 8), the transfers of each thread one after another
/// ([`sparse::partition_cost_s`]). Each of `chains` is a layer's receiving
/// tasks, thread by thread (layer, tasks): each thread's run one after
/// another, in the order the backward pass readies their gradients, the
/// last layer's first (on one layer, its sparse table's before its dense
/// variables'). Every layer has the same threads: its pushers are the
/// same machines or GPUs. The workers' receiving threads and the local
/// chiefs' fetching threads of the sparse tables chain the same way
/// ([`sparse::add`]).
pub fn chain_receives(plan: &mut Plan, mut chains: Vec<(u32, Vec<TaskId>)>) {
    chains.sort_by_key(|(l, t)| (*l, std::cmp::Reverse(t.first().copied())));
    for pair in chains.windows(2) {
        debug_assert_eq!(pair[0].1.len(), pair[1].1.len(), "the same threads");
        for (&earlier, &later) in pair[0].1.iter().zip(&pair[1].1) {
            plan.tasks[earlier as usize].deps.push(Dep {
                task: later,
                back: 0,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Target i on thread i mod 8: Parallax's 48 workers six a thread,
    /// 10 targets two on threads 0 and 1 and one on the rest, fewer
    /// targets than threads a thread each, weights summed by thread.
    #[test]
    fn polling_threads_take_targets_round_robin() {
        assert_eq!(polling_threads(48, |_| 1.0), vec![6.0; 8]);
        assert_eq!(
            polling_threads(10, |_| 1.0),
            [2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
        );
        assert_eq!(polling_threads(3, |i| i as f64), [0.0, 1.0, 2.0]);
        // targets 0, 8 and 16 share thread 0, 7 and 15 thread 7
        let by = polling_threads(17, |i| i as f64);
        assert_eq!(by.len(), 8);
        assert_eq!(by[0], 24.0);
        assert_eq!(by[7], 22.0);
        // a process with no target still has a thread, idle
        assert_eq!(polling_threads(0, |_| 1.0), [0.0]);
    }
}
