//! The sparse (embedding) part of a model: the tasks that synchronise
//! each embedding table by the strategy's sparse method, added to the
//! dense plan of [`super::data_parallel`].
//!
//! One GPU's gradient of a table holds `r` rows ([`Embedding::rows_per_gpu`])
//! of `dim` values, sent with their row indices where the receiver needs
//! them ([`Embedding::sparse_bytes`]); under the token model a row per
//! token, uncoalesced, as frameworks send it (`super::draws`), except
//! where a method sums rows first. Per method (`strategy.sparse`):
//!
//! * `allreduce`: the table's whole gradient, dense (vocab × dim), by the
//!   dense AllReduce's algorithm (ring when the dense method is PS);
//! * `allgather`: an AllGather of every GPU's sparse gradient (Horovod's
//!   sparse path; Parallax's AR baseline sends its sparse variables this
//!   way, §6.4): each GPU receives the other N − 1 gradients; with
//!   `allgather_staging = "host"` through host memory, a copy of the GPU's
//!   gradient to the host before it and of the N gathered ones back after
//!   it ([`host_copy_s`]), as Horovod's CPU AllGather kernel makes
//!   TensorFlow do;
//! * `ps`: a parameter-server push of each GPU's sparse gradient to the
//!   servers and a pull of its updated rows ([`crate::collective::Op::Ps`],
//!   variables spread evenly over the servers); push and pull both count
//!   indices. Each GPU pulls its own rows (TensorFlow's embedding lookup
//!   gathers each worker's rows from the servers). With
//!   `local_aggregation` each machine's CPU accumulators take its GPUs'
//!   gradients partition by partition (Parallax §5: in the machine's one
//!   process where its PS architecture replicates the GPUs in-graph, or
//!   a local chief's where its hybrid runs a process a GPU), and the
//!   servers' accumulators then take one push a machine
//!   instead of one a GPU. Under the density model the bytes do not shrink:
//!   summing a machine's sparse gradients first saves only the rows they
//!   share, and under the density model's independent draws that is little
//!   (G GPUs of density α share about (G − 1)·α/2 of their rows: 2% for
//!   Parallax's LM on 6 GPUs), so each GPU's rows still cross the network.
//!   Under the token model (`super::draws`) its first GPU pushes their
//!   union. Dense variables are aggregated either way. Between push and
//!   pull the servers work (Parallax
//!   §3.2): each table is split into `ps_partitions` pieces round-robin
//!   over the servers, every host runs its partitions as CPU tasks on
//!   `cluster.cpu_cores` cores, each [`server_element_s`] per element
//!   pushed into it (TensorFlow's accumulator merges every push with the
//!   sum so far, then the update), [`PS_TRANSFER_S`] per pull served and
//!   [`PS_TRANSFER_S`] less [`PS_POLL_S`] per push, then a task a polling
//!   thread for the pushes' shares of their transfers
//!   ([`partition_threads_s`] per partition it holds: TensorFlow 1.6's
//!   eight threads, worker w's pushes on thread w mod 8) and the pushed
//!   bytes it parses ([`PS_POLL_BYTE_S`]), each thread's tasks over the
//!   tables one after another (docs/models.md §4.2); the workers spend
//!   [`WORKER_PARTITION_S`] a partition answering the push on the host's
//!   cores and again receiving the pull, [`WORKER_POLL_S`] of it and the
//!   pulled bytes ([`WORKER_POLL_BYTE_S`]) on a process's polling threads
//!   (server s's partitions on thread s mod 8: docs/research/
//!   tf-ps-costs.md §0.4) and the rest on the host's cores ("workers'
//!   stitches");
//! * `alltoall` (EmbRace §4.1): the table split by columns over the N GPUs
//!   (⌈dim/N⌉ columns each); after the table's forward pass (each GPU
//!   looks up every GPU's rows in its own columns) an AlltoAll sends GPU i
//!   the values of its rows in every other GPU's columns, and the next
//!   compute task waits for it; after the table's backward pass an
//!   AlltoAll sends those values' gradients back to the columns' owners,
//!   and the next iteration's lookup waits for it (the owner's update is
//!   folded into the layer's backward time). No indices travel: every GPU
//!   reads the whole step's token ids (§4.1.1: "embedding in each process
//!   firstly looks up all training data of this step"). When N does not
//!   divide `dim` every GPU holds ⌈dim/N⌉ columns, the last padded, so
//!   the AlltoAlls move equal blocks (an AlltoAll of equal counts, as
//!   PyTorch's and NCCL's take); each GPU needs one real column at least
//!   (validated). An embedding layer's forward pass is its lookup, which
//!   reads token ids only; On a priority channel the lookup AlltoAll goes
//!   ahead of the gradients the last iteration still has queued
//!   ([`Task::lead`]): EmbRace's horizontal scheduling (§4.2.1), which
//!   puts the embedding's forward communication before the encoder
//!   blocks', since the next forward pass needs it first. Under the
//!   token model both AlltoAlls carry a row per token (lookup results
//!   per token, gradients uncoalesced); with `vertical_scheduling` the
//!   gradients are
//!   coalesced by a kernel and sent as prior and delayed rows (§4.2.2).
//!
//! Channels: the sparse tasks share the dense method's channel when both
//! run through the same library (an AllReduce, AllGather or AlltoAll
//! beside a dense AllReduce: one Horovod queue; a sparse PS beside a dense
//! PS: TensorFlow's PS runtime), and get a channel of their own,
//! `sparse`, otherwise: Parallax's hybrid runs its PS and its AllReduce
//! at once, sharing the NICs (§4, "each variable is synchronized
//! independently").

use super::super::TrainConfig;
use super::super::task::{
    ChannelId, ChannelSpec, ComputeKind, Dep, Label, PerIteration, Plan, Task, TaskId, Work,
};
use super::draws;
use crate::collective::{Algo, Collective, Op, Payload};
use crate::strategy::{DenseMethod, Partitions, SparseMethod};
use crate::time::SimTime;
use crate::workload::{Embedding, Precision, TablePlacement};

/// Whether the forward pass runs the embedding lookups before every other
/// layer: EmbRace's horizontal scheduling (§4.2.1), with the AlltoAll
/// method on a priority channel.
pub fn lookups_first(cfg: &TrainConfig) -> bool {
    cfg.strategy.sparse == Some(SparseMethod::AllToAll)
        && cfg.strategy.schedule == crate::strategy::Schedule::Priority
        && cfg.cluster.gpus() > 1
}

/// Adds the sparse tasks of every embedding layer to `plan`, the dense
/// plan whose forward pass of layer l is task `fwd(l)` and backward pass
/// `bwd(l)`. Returns, for each sparse PS table, its layer and the tasks of
/// its servers' push transfers, a polling thread each, which
/// [`super::chain_receives`] runs one after another with the dense
/// variables', thread by thread.
#[must_use = "the tables' receiving tasks run one after another: pass them to `chain_receives`"]
pub fn add(
    cfg: &TrainConfig,
    plan: &mut Plan,
    fwd: impl Fn(u32) -> TaskId,
    bwd: impl Fn(u32) -> TaskId,
) -> Vec<(u32, Vec<TaskId>)> {
    let mut chains: Vec<(u32, Vec<TaskId>)> = Vec::new();
    // each sparse PS table's workers' receiving threads, and its local
    // chiefs' fetching threads
    let mut receives: Vec<(u32, Vec<TaskId>)> = Vec::new();
    let mut fetches: Vec<(u32, Vec<TaskId>)> = Vec::new();
    let n = cfg.cluster.gpus();
    let method = cfg.strategy.sparse;
    // the processes' host tasks of tables in host memory run on the
    // host's cores (a plan without them runs its host tasks, host-staged
    // copies, one at a time)
    if cfg
        .model
        .layers
        .iter()
        .filter_map(|l| l.embedding.as_ref())
        .any(|e| e.placement == TablePlacement::Host)
    {
        plan.host_cores = plan.host_cores.max(cfg.cluster.cpu_cores);
    }
    if n < 2 {
        // one GPU synchronises nothing, but its process still looks up
        // and updates a table in host memory
        for (l, layer) in cfg.model.layers.iter().enumerate() {
            if let Some(e) = layer.embedding.as_ref()
                && e.placement == TablePlacement::Host
            {
                let method = method.unwrap_or(SparseMethod::AllGather);
                host_table_tasks(cfg, plan, 0, l as u32, e, method, None, &fwd, &bwd);
            }
        }
        return chains;
    }
    let Some(method) = method else {
        return chains;
    };
    let p = cfg.model.gradient_precision;
    // DCT-DP pushes to and pulls from the same servers
    let dense_ps = matches!(cfg.strategy.dense, DenseMethod::Ps | DenseMethod::Dct);
    let own_channel = (method == SparseMethod::Ps) != dense_ps;
    let channel: ChannelId = if own_channel {
        let dense = &plan.channels[0];
        plan.channels.push(ChannelSpec {
            name: "sparse".into(),
            ..dense.clone()
        });
        plan.channels.len() as ChannelId - 1
    } else {
        0
    };
    let layers = &cfg.model.layers;
    for (l, layer) in layers.iter().enumerate() {
        let Some(e) = &layer.embedding else {
            continue;
        };
        let l = l as u32;
        let name = &layer.name;
        // the AllReduce's dense table, or the AllGather's N gradients
        let bytes = message_bytes(e, method, n, p) as f64;
        let (collective, payload) = match method {
            SparseMethod::AllReduce => {
                let algo = match cfg.strategy.dense {
                    DenseMethod::AllReduce(a) => a,
                    DenseMethod::Ps | DenseMethod::TopK | DenseMethod::GTopK | DenseMethod::Dct => {
                        Algo::Ring
                    }
                };
                let c = Collective {
                    algo,
                    ..Collective::new(Op::AllReduce)
                };
                (c, Payload::Uniform(bytes))
            }
            SparseMethod::AllGather => (Collective::new(Op::AllGather), Payload::Uniform(bytes)),
            SparseMethod::Ps => {
                let (receiving, threads, fetching) =
                    ps_tasks(cfg, plan, channel, l, e, fwd(l), bwd(l));
                chains.push((l, receiving));
                receives.push((l, threads));
                fetches.push((l, fetching));
                continue;
            }
            SparseMethod::AllToAll => {
                alltoall_tasks(cfg, plan, channel, l, e, &fwd, &bwd);
                continue;
            }
        };
        if e.placement == TablePlacement::Host {
            let sync = Some((collective, payload));
            host_table_tasks(cfg, plan, channel, l, e, method, sync, &fwd, &bwd);
            continue;
        }
        // through host memory: the GPU's gradient to the host first, the
        // gathered gradients back to the GPU after
        let staged = method == SparseMethod::AllGather && cfg.strategy.host_staged_allgather;
        let copy = |plan: &mut Plan, label: String, bytes: f64, after: TaskId| {
            push_cpu(plan, l, label, host_copy_s(&cfg.cluster, bytes), after)
        };
        let after_bwd = if staged {
            copy(
                plan,
                format!("{name} sparse gradient to host"),
                bytes / n as f64,
                bwd(l),
            )
        } else {
            bwd(l)
        };
        let s = plan.tasks.len() as TaskId;
        plan.tasks.push(comm_task(
            l,
            channel,
            format!("{name} sparse gradient"),
            collective,
            payload,
            &[after_bwd],
            l as u64,
        ));
        let done = if staged {
            copy(plan, format!("{name} sparse gradients to GPU"), bytes, s)
        } else {
            s
        };
        plan.tasks[fwd(l) as usize].deps.push(Dep {
            task: done,
            back: 1,
        });
    }
    // each of a process's polling threads takes its tables' pulls one
    // after another, in the order the servers' chains answer them, and
    // each of a local chief's fetching threads its tables' fetches, in the
    // order the backward pass readies them: the last layer's first, as the
    // servers' chains (a layer has one table)
    super::chain_receives(plan, receives);
    super::chain_receives(plan, fetches);
    chains
}

/// A host CPU task of table layer `l` of `duration`, waiting for the
/// tasks `after` of the same iteration.
pub(super) fn cpu_task(l: u32, label: String, duration: SimTime, after: &[TaskId]) -> Task {
    Task {
        label: Label::Named(label),
        layer: Some(l),
        work: Work::Cpu { duration },
        deps: after.iter().map(|&task| Dep { task, back: 0 }).collect(),
        priority: l as u64,
        lead: false,
    }
}

/// Adds a host CPU task of table layer `l` of `secs` seconds, waiting
/// for task `after` of the same iteration; returns its id.
fn push_cpu(plan: &mut Plan, l: u32, label: String, secs: f64, after: TaskId) -> TaskId {
    plan.tasks
        .push(cpu_task(l, label, SimTime::from_secs(secs), &[after]));
    plan.tasks.len() as TaskId - 1
}

/// A communication task of table layer `l`: `collective` of `payload` on
/// `channel` at `priority`, waiting for the tasks `after` of the same
/// iteration.
fn comm_task(
    l: u32,
    channel: ChannelId,
    label: String,
    collective: Collective,
    payload: Payload,
    after: &[TaskId],
    priority: u64,
) -> Task {
    Task {
        label: Label::Named(label),
        layer: Some(l),
        work: Work::Comm {
            channel,
            collective,
            payload,
        },
        deps: after.iter().map(|&task| Dep { task, back: 0 }).collect(),
        priority,
        lead: false,
    }
}

/// Adds a host CPU task of table layer `l` that takes `durations[it]` in
/// iteration `it` (the same every iteration where there is one), waiting
/// for the tasks `after` of the same iteration; returns its id.
fn cpu_task_each(
    plan: &mut Plan,
    l: u32,
    label: String,
    durations: Vec<SimTime>,
    after: &[TaskId],
) -> TaskId {
    let id = plan.tasks.len() as TaskId;
    plan.tasks.push(cpu_task(l, label, durations[0], after));
    if durations.len() > 1 {
        plan.per_iteration
            .insert(id, PerIteration::Durations(durations.into()));
    }
    id
}

/// The tasks of table `e` (layer `l`) in host memory synchronised by
/// `method`, an AllGather or a dense AllReduce, through `sync` (the
/// collective and its payload on `channel`; `None` on one GPU, which
/// synchronises nothing; [`super::host`]): after the table's forward pass
/// its lookup on the host and the copy of the rows to the GPU, which the
/// next forward pass waits for; after its backward pass the copy of the
/// rows' gradient to the host (for the AllReduce, then its dense gradient
/// built there), the collective, and the update on the host, which the
/// next iteration's forward pass of the table waits for. On one GPU the
/// update applies its own gradient (dense for the AllReduce).
#[allow(clippy::too_many_arguments)]
fn host_table_tasks(
    cfg: &TrainConfig,
    plan: &mut Plan,
    channel: ChannelId,
    l: u32,
    e: &Embedding,
    method: SparseMethod,
    sync: Option<(Collective, Payload)>,
    fwd: &impl Fn(u32) -> TaskId,
    bwd: &impl Fn(u32) -> TaskId,
) {
    let name = &cfg.model.layers[l as usize].name;
    let n = cfg.cluster.gpus() as f64;
    let p = cfg.model.gradient_precision;
    let elements = (e.lookups_per_gpu() * e.dim) as f64;
    // the table's values up, their gradients down
    let (rows_bytes, grad_bytes) = (
        elements * super::host::TABLE_VALUE_BYTES as f64,
        elements * p.bytes() as f64,
    );
    let dense = e.params() as f64;
    let lookup = push_cpu(
        plan,
        l,
        format!("{name} {}", super::host::LOOKUP),
        super::host::lookup_s(&cfg.cluster, elements, rows_bytes),
        fwd(l),
    );
    plan.tasks[next_after_forward(cfg, l, fwd, bwd) as usize]
        .deps
        .push(Dep {
            task: lookup,
            back: 0,
        });
    let down = push_cpu(
        plan,
        l,
        format!("{name} {}", super::host::TO_HOST),
        host_copy_s(&cfg.cluster, grad_bytes),
        bwd(l),
    );
    let (ready, update_s) = if method == SparseMethod::AllReduce {
        // the dense gradient written, then read with the table's read
        // and write by SGD
        let built = push_cpu(
            plan,
            l,
            format!("{name} {}", super::host::DENSE),
            super::host::stream_s(dense * p.bytes() as f64) + super::host::scatter_s(elements),
            down,
        );
        (
            built,
            super::host::stream_s(dense * (p.bytes() + 2 * super::host::TABLE_VALUE_BYTES) as f64),
        )
    } else if sync.is_some() && method == SparseMethod::AllGather {
        (down, super::host::scatter_s(n * elements))
    } else {
        (down, super::host::scatter_s(elements))
    };
    let Some((collective, payload)) = sync else {
        let update = push_cpu(
            plan,
            l,
            format!("{name} {}", super::host::UPDATE),
            update_s,
            ready,
        );
        plan.tasks[fwd(l) as usize].deps.push(Dep {
            task: update,
            back: 1,
        });
        return;
    };
    let s = plan.tasks.len() as TaskId;
    plan.tasks.push(comm_task(
        l,
        channel,
        format!("{name} sparse gradient"),
        collective,
        payload,
        &[ready],
        l as u64,
    ));
    let update = push_cpu(
        plan,
        l,
        format!("{name} {}", super::host::UPDATE),
        update_s,
        s,
    );
    plan.tasks[fwd(l) as usize].deps.push(Dep {
        task: update,
        back: 1,
    });
}

/// What the stream runs after table layer `l`'s forward pass in layer
/// order: the next layer's forward pass, or the last layer's backward.
fn next_after_forward(
    cfg: &TrainConfig,
    l: u32,
    fwd: &impl Fn(u32) -> TaskId,
    bwd: &impl Fn(u32) -> TaskId,
) -> TaskId {
    if l + 1 < cfg.model.layers.len() as u32 {
        fwd(l + 1)
    } else {
        bwd(l)
    }
}

/// Seconds a copy of `bytes` between a GPU and its host's memory takes:
/// the GPU's PCIe link's latency and bandwidth ([`crate::cluster::ClusterSpec::gpu_pcie`];
/// `pcie3-x16`: 12.4 GB/s, `bandwidthTest` of pinned memory,
/// docs/network-presets.md). The copy has the link to itself: it is not
/// shared with the NIC's traffic or another GPU's on a PCIe switch.
pub fn host_copy_s(cluster: &crate::cluster::ClusterSpec, bytes: f64) -> f64 {
    let link = cluster.gpu_pcie();
    link.latency + bytes / link.bandwidth
}

/// EmbRace's AlltoAll of table `e` (layer `l`): the lookup results to
/// their GPUs after the table's forward pass (what the stream runs next
/// waits for them), and the gradients to the columns' owners after its
/// backward pass, before the next iteration's lookup. Each moves, per
/// pair, one GPU's rows in the other's ⌈dim/N⌉ columns: under the token
/// model every token's row (the lookup returns a row per token, §4.1.1;
/// the gradient leaves uncoalesced, as PyTorch's sparse gradients do,
/// Table 3's "original" size). With `vertical_scheduling` (§4.2.2,
/// Algorithm 1) a kernel after the last backward pass coalesces each
/// GPU's gradient and splits it: the rows any GPU's next batch touches
/// (prior, highest priority; the next lookup waits for them) and the
/// rest (delayed, lowest priority; the next iteration's backward pass,
/// which applies the update, waits for them).
fn alltoall_tasks(
    cfg: &TrainConfig,
    plan: &mut Plan,
    channel: ChannelId,
    l: u32,
    e: &Embedding,
    fwd: &impl Fn(u32) -> TaskId,
    bwd: &impl Fn(u32) -> TaskId,
) {
    let layers = &cfg.model.layers;
    let name = &layers[l as usize].name;
    let n = cfg.cluster.gpus();
    let p = cfg.model.gradient_precision;
    let c = Collective::new(Op::AllToAll);
    let comm = |label: String, payload: Payload, after: TaskId, priority: u64| {
        comm_task(l, channel, label, c, payload, &[after], priority)
    };
    let payload = Payload::Uniform(message_bytes(e, SparseMethod::AllToAll, n, p) as f64);
    // a table in host memory (`super::host`): each GPU's process looks up
    // every GPU's rows in its columns, and applies their gradients there
    let on_host = e.placement == TablePlacement::Host;
    let columns = e.dim.div_ceil(n as u64);
    let owned = |rows: f64| rows * columns as f64;
    // the table's values up, their gradients down
    let own_bytes = (e.lookups_per_gpu() * e.dim * super::host::TABLE_VALUE_BYTES) as f64;
    let grad_bytes = (e.lookups_per_gpu() * e.dim * p.bytes()) as f64;
    let looked_up = if on_host {
        let elements = owned((n as u64 * e.lookups_per_gpu()) as f64);
        push_cpu(
            plan,
            l,
            format!("{name} {}", super::host::LOOKUP),
            elements * super::host::HOST_GATHER_S,
            fwd(l),
        )
    } else {
        fwd(l)
    };
    // lookup results to their GPUs; whatever the stream runs after the
    // lookup waits for them. Horizontal scheduling (§4.2.1): the next
    // forward pass needs them first.
    let lookup = plan.tasks.len() as TaskId;
    plan.tasks.push(Task {
        lead: true,
        ..comm(
            format!("{name} lookup alltoall"),
            payload.clone(),
            looked_up,
            l as u64,
        )
    });
    let arrived = if on_host {
        push_cpu(
            plan,
            l,
            format!("{name} {}", super::host::TO_GPU),
            host_copy_s(&cfg.cluster, own_bytes),
            lookup,
        )
    } else {
        lookup
    };
    plan.tasks[next_after_forward(cfg, l, fwd, bwd) as usize]
        .deps
        .push(Dep {
            task: arrived,
            back: 0,
        });
    if !cfg.strategy.vertical_scheduling {
        let down = if on_host {
            push_cpu(
                plan,
                l,
                format!("{name} {}", super::host::TO_HOST),
                host_copy_s(&cfg.cluster, grad_bytes),
                bwd(l),
            )
        } else {
            bwd(l)
        };
        let grads = plan.tasks.len() as TaskId;
        plan.tasks.push(comm(
            format!("{name} gradient alltoall"),
            payload,
            down,
            l as u64,
        ));
        let applied = if on_host {
            let elements = owned((n as u64 * e.lookups_per_gpu()) as f64);
            push_cpu(
                plan,
                l,
                format!("{name} {}", super::host::UPDATE),
                super::host::scatter_s(elements),
                grads,
            )
        } else {
            grads
        };
        plan.tasks[fwd(l) as usize].deps.push(Dep {
            task: applied,
            back: 1,
        });
        return;
    }
    // vertical scheduling: per iteration, each GPU's coalesced rows and
    // how many of them are prior
    let nn = n as usize;
    let block = e.value_bytes(1, p) as f64 / e.dim as f64 * e.dim.div_ceil(n as u64) as f64;
    let bw = crate::workload::gpus::memory_bandwidth(&cfg.model.gpu);
    let split: Vec<(Vec<u64>, Vec<u64>)> = match e.token_model() {
        Some(tm) => draws::each_iteration_and_next(cfg, l, &tm, |this, next| {
            (
                this.iter().map(|r| r.len() as u64).collect(),
                draws::prior_rows(this, next, e.vocab),
            )
        }),
        None => {
            // density α: a row of a GPU's is in some GPU's next batch
            // with probability 1 − (1 − α)^N (uniform, independent draws)
            let r = e.rows_per_gpu();
            let a = r as f64 / e.vocab as f64;
            let prior = (r as f64 * (1.0 - (1.0 - a).powi(n as i32))).round() as u64;
            vec![(vec![r; nn], vec![prior.min(r); nn])]
        }
    };
    let tokens = e.lookups_per_gpu();
    let kernel: Vec<SimTime> = split
        .iter()
        .map(|(unique, _)| {
            let u = unique.iter().copied().max().unwrap_or(0);
            SimTime::from_secs(vertical_kernel_s(tokens, u, e.dim, p.bytes(), bw))
        })
        .collect();
    let per_pair = |rows: &[u64]| {
        let mut m = vec![0.0; nn * nn];
        for (i, &r) in rows.iter().enumerate() {
            for j in (0..nn).filter(|&j| j != i) {
                m[i * nn + j] = r as f64 * block;
            }
        }
        Payload::PerPair(m.into())
    };
    let (prior, delayed): (Vec<Payload>, Vec<Payload>) = split
        .iter()
        .map(|(unique, prior)| {
            let delayed: Vec<u64> = unique.iter().zip(prior).map(|(u, p)| u - p).collect();
            (per_pair(prior), per_pair(&delayed))
        })
        .unzip();
    // the kernel runs after the last backward pass (EmbRace registers it
    // on the last BP's hook, §5.1): last in stream order
    let v = plan.tasks.len() as TaskId;
    plan.tasks.push(Task {
        label: Label::Named(format!("{name} vertical scheduling")),
        layer: Some(l),
        work: Work::Compute {
            kind: ComputeKind::Kernel,
            duration: kernel[0],
        },
        deps: vec![Dep {
            task: bwd(l),
            back: 0,
        }],
        priority: l as u64,
        lead: false,
    });
    // in host memory, the coalesced rows' gradient (each iteration's
    // largest) goes down to the host before it is sent
    let sent = if on_host {
        let down: Vec<SimTime> = split
            .iter()
            .map(|(unique, _)| {
                let u = unique.iter().copied().max().unwrap_or(0);
                let bytes = (u * e.dim * p.bytes()) as f64;
                SimTime::from_secs(host_copy_s(&cfg.cluster, bytes))
            })
            .collect();
        cpu_task_each(
            plan,
            l,
            format!("{name} {}", super::host::TO_HOST),
            down,
            &[v],
        )
    } else {
        v
    };
    let first = plan.tasks.len() as TaskId;
    plan.tasks.push(comm(
        format!("{name} prior gradient alltoall"),
        prior[0].clone(),
        sent,
        0,
    ));
    plan.tasks.push(comm(
        format!("{name} delayed gradient alltoall"),
        delayed[0].clone(),
        sent,
        u64::MAX,
    ));
    if kernel.len() > 1 {
        plan.per_iteration
            .insert(v, PerIteration::Durations(kernel.into()));
        plan.per_iteration
            .insert(first, PerIteration::Payloads(prior.into()));
        plan.per_iteration
            .insert(first + 1, PerIteration::Payloads(delayed.into()));
    }
    // in host memory, each owner scatter-adds every GPU's rows in its
    // columns, the prior rows first
    let (applied_prior, applied_delayed) = if on_host {
        // each iteration's rows of all GPUs: (prior, delayed)
        let rows: Vec<(u64, u64)> = split
            .iter()
            .map(|(unique, prior)| {
                let p: u64 = prior.iter().sum();
                (p, unique.iter().sum::<u64>() - p)
            })
            .collect();
        let updates = |pick: fn(&(u64, u64)) -> u64| -> Vec<SimTime> {
            rows.iter()
                .map(|r| SimTime::from_secs(super::host::scatter_s(owned(pick(r) as f64))))
                .collect()
        };
        let prior_rows = updates(|r| r.0);
        let delayed_rows = updates(|r| r.1);
        let a = cpu_task_each(
            plan,
            l,
            format!("{name} prior {}", super::host::UPDATE),
            prior_rows,
            &[first],
        );
        let b = cpu_task_each(
            plan,
            l,
            format!("{name} delayed {}", super::host::UPDATE),
            delayed_rows,
            &[first + 1],
        );
        (a, b)
    } else {
        (first, first + 1)
    };
    plan.tasks[fwd(l) as usize].deps.push(Dep {
        task: applied_prior,
        back: 1,
    });
    plan.tasks[bwd(l) as usize].deps.push(Dep {
        task: applied_delayed,
        back: 1,
    });
}

/// CPU seconds PyTorch spends dispatching one operator on CUDA tensors,
/// the GPU idle meanwhile when nothing is queued: 3.4 µs, PyTorch's
/// operator micro-benchmarks for `split` on CUDA, which launches no
/// kernel of its own (3.33–3.42 µs, pytorch/pytorch PR #32194, 2020).
pub const TORCH_OP_S: f64 = 3.4e-6;

/// Seconds of one device-to-host copy of an output's size, which an
/// operator whose output size depends on the data (unique, coalesce,
/// masked select) waits for: 7 µs, the upper end of the 5–7 µs per-call
/// overhead of `cudaMemcpyAsync` measured by Wu et al. (DualPath,
/// arXiv 2602.21548, §5.2).
pub const D2H_SYNC_S: f64 = 7e-6;

/// PyTorch operators of EmbRace's Algorithm 1 as dtsim counts them:
/// coalesce, unique, the intersection with the next batch (isin), the two
/// masked selects that make i_prior and i_delayed, the two searches of
/// their positions in the coalesced gradient and the two index selects.
pub const VERTICAL_OPS: u32 = 9;

/// Of those, the operators whose output size the host must read: coalesce,
/// unique and the two masked selects.
pub const VERTICAL_SYNCS: u32 = 4;

/// Seconds of EmbRace's vertical-scheduling kernel on one GPU holding
/// `tokens` gradient rows of `dim` values of `bytes` bytes that coalesce
/// into `unique` rows, with memory bandwidth `bw` bytes/s: its operators'
/// dispatch and synchronisations, and its memory traffic (the coalesce
/// reads every token's row and writes the unique rows; the two index
/// selects read and write the unique rows again): (tokens + 3·unique) ×
/// dim × bytes at `bw`.
pub fn vertical_kernel_s(tokens: u64, unique: u64, dim: u64, bytes: u64, bw: f64) -> f64 {
    VERTICAL_OPS as f64 * TORCH_OP_S
        + VERTICAL_SYNCS as f64 * D2H_SYNC_S
        + (tokens + 3 * unique) as f64 * (dim * bytes) as f64 / bw
}

/// CPU seconds TensorFlow's sparse accumulator spends per element it
/// copies: 0.50 ns. Parallax aggregates each partition's sparse gradients
/// in a `tf.SparseConditionalAccumulator` (snuspl/parallax,
/// `graph_transform_lib.py`: `apply_indexed_slices_grad` per worker,
/// `take_indexed_slices_grad` once), whose kernel merges each push with
/// the sum so far into a new tensor (`sparse_conditional_accumulator.h`,
/// `AddToAccumGradFunction`): the k-th push copies every row before it as
/// well as its own. Measured by `scripts/tf-ps/accumulate_cost.py`
/// (TensorFlow 2.21, one thread, 1 to 48 pushes of 1,000 rows × 512 into
/// a 100,000-row partition, 2-core Xeon VM, 2026-11-26): 0.50 ns per
/// element copied (least squares over the pushes; 0.43–0.59 ns at each
/// count), where a cost per element pushed misses by 89%.
pub const PS_COPY_S: f64 = 0.5e-9;

/// CPU seconds a parameter server spends per element pushed applying the
/// aggregate to its partition by SGD (TensorFlow's `scatter_sub` of the
/// taken gradient): 2.0 ns, measured by the same script (1.3–2.2 ns per
/// element pushed, 1.8–2.2 ns from 4 to 48 pushes).
pub const PS_APPLY_S: f64 = 2.0e-9;

/// CPU seconds per element pushed that an accumulator filled by `pushes`
/// pushes of unsorted rows spends merging them: push k copies the k − 1
/// pushes before it and itself, (pushes + 1)/2 copies an element over
/// the arrival orders. An embedding's gradient lists its rows in batch
/// order, unsorted, so the merge rarely meets a row twice (the script
/// replays the kernel's merge on its draws: 1,175,695 rows copied for 48
/// pushes of 1,000, against 1,176,000 when no row is met twice); rows the
/// pushes share are counted as if distinct.
pub fn accumulate_s(pushes: u32) -> f64 {
    PS_COPY_S * (pushes as f64 + 1.0) / 2.0
}

/// CPU seconds per element pushed into a server's partition by `pushes`
/// pushes: the accumulator's merge ([`accumulate_s`]) and the update
/// ([`PS_APPLY_S`]). 14.3 ns for Parallax's 48 workers, 4.3 ns for its
/// 8 machines under local aggregation.
pub fn server_element_s(pushes: u32) -> f64 {
    accumulate_s(pushes) + PS_APPLY_S
}

/// CPU seconds of one TensorFlow operation's dispatch without a transfer:
/// 1 µs. TensorFlow's own measurement puts the executor's inter-op
/// latency at "hundreds of nanoseconds", hundreds of trivial ops adding
/// "hundreds of microseconds" to a step (TensorFlow commit 1736e0b, 2018,
/// introducing `_ReadVariablesOp`); we round to 1 µs per op. An order of
/// magnitude from a source, not a fit. Parallax's local aggregation runs
/// in the machine's own process (in-graph replication), its ops without
/// gRPC.
pub const PS_OP_S: f64 = 1e-6;

/// CPU seconds a server spends on one worker's op on a partition with
/// its tensor's transfer through gRPC (an accumulate and its push, or a
/// gather and its pull): 51 µs, derived from a measurement of Parallax's
/// TensorFlow: `scripts/tf-ps/partition_cost.py` (TensorFlow 1.6.0, one
/// worker and one server on localhost, 2-core AMD EPYC VM, 2026-11-28)
/// finds the server's CPU a step growing by 102.8 and 100.9 µs a
/// partition in two runs, a gather and a scatter with their transfers,
/// so 51 µs each. TensorFlow 2.21 on the same machine: 134 µs a
/// partition (on the 2-core Xeon VM, 2026-11-26: 120, which gave 60 µs
/// until 2026-11-28). That N workers cost N times one is our assumption;
/// `scripts/tf-ps/workers_cost.py` finds a worker's partition costing
/// the server 78, 84 and 118 µs with 1, 2 and 4 workers on 2 cores
/// (its threads' clocks summed, which read under the process's own:
/// 78 with one worker, where `partition_cost.py` finds 102), which
/// contention may inflate (docs/research/tf-ps-costs.md §0.5).
pub const PS_TRANSFER_S: f64 = 51e-6;

/// CPU seconds of each push's transfer ([`PS_TRANSFER_S`]) that fall on
/// the server's polling thread which completes its fetch: 16.5 µs,
/// measured. `scripts/tf-ps/thread_cost.py` (TensorFlow 1.6.0, one worker,
/// 2-core AMD EPYC VM, 2026-11-28) reads every thread's CPU and names its
/// role from a backtrace: of the server's CPU a partition, the busiest of
/// its eight polling threads (`GrpcWorkerCacheThread`) takes 16.1% and
/// 16.3% in two runs, 16.5 µs of the 101.9 µs `partition_cost.py` finds;
/// the other polling threads about 8%, its eight serving threads 17%,
/// its compute pool 50%. The rest of the transfer ([`PS_TRANSFER_S`]
/// less this) runs on the host's cores. Until 2026-11-28 the whole
/// transfer was charged to the polling thread, an upper bound. Two
/// assumptions: the thread's whole share is the push's (with one worker
/// the same thread also completes the server's fetch of each lookup's
/// ids, a pull's, which under local aggregation come from every GPU
/// while the pushes come from every machine, so the chains may be short
/// there); and the constant is this machine's, not scaled to the Xeon
/// VM of the other constants (TensorFlow 2.21 ran 12% slower here).
pub const PS_POLL_S: f64 = 16.5e-6;

/// CPU seconds of the chains each partition of a sparse variable costs
/// its server per iteration, with `pushes` pushes into it, over all its
/// polling threads: each push's share on the thread ([`PS_POLL_S`]) and
/// one apply ([`PS_OP_S`]); 0.79 ms for Parallax's 48 workers, 0.10 ms on
/// each of eight threads ([`partition_threads_s`]).
pub fn partition_cost_s(pushes: u32) -> f64 {
    pushes as f64 * PS_POLL_S + PS_OP_S
}

/// What each of a server's polling threads spends on one partition of a
/// sparse variable per iteration, `pushers` workers pushing into it, its
/// first thread first. The server is the gRPC client of its pushes
/// (TensorFlow's receiver fetches a tensor), and TensorFlow 1.6, which
/// Parallax ran, completes a process's calls on eight polling threads,
/// each remote task on one (docs/research/tf-ps-costs.md §0.4): worker
/// w's pushes on thread w mod 8 ([`super::polling_threads`], the workers
/// numbered in the order the server first fetches from them, which we
/// take as their index), each push's [`PS_POLL_S`] (the thread parses
/// the fetched tensor and runs its callbacks, `RPCState::OnCompleted`;
/// measured), one after another on the thread over all partitions and
/// tables; the first thread also takes the partition's apply
/// ([`PS_OP_S`]). The threads add up to [`partition_cost_s`]. Until
/// 2026-11-27 one thread took all (TensorFlow 1.5's client), and until
/// 2026-11-28 each took the whole transfer. The rest of each push's
/// transfer, and the pulls, which the server answers, run on the host's
/// cores: TensorFlow 1.6's server schedules each incoming call's handler
/// on the worker's compute pool (`GrpcWorkerServiceThread::Schedule`,
/// `grpc_worker_service.cc` at v1.6.0); they cost each partition's task
/// [`PS_TRANSFER_S`] a pull and [`PS_TRANSFER_S`] less [`PS_POLL_S`] a
/// push, beside the partition's elements.
pub fn partition_threads_s(pushers: u32) -> Vec<f64> {
    let mut threads = super::polling_threads(pushers, |_| PS_POLL_S);
    threads[0] += PS_OP_S;
    threads
}

/// CPU seconds a worker spends on each partition of a sparse variable at
/// the push, and again at the pull: 50 µs, half of a measurement.
/// `scripts/tf-ps/partition_cost.py` (TensorFlow 1.6.0, one worker and one
/// server on localhost, 2-core AMD EPYC VM, 2026-11-28) finds the
/// worker's CPU a step growing by 98.1 and 103.3 µs a partition in two
/// runs (TensorFlow 2.21 on the 2-core Xeon VM, 2026-11-26: 103.9, which
/// gave 52 µs until 2026-11-28): splitting the ids and the
/// gradient into the partitions, stitching the looked-up rows back into
/// one tensor (the overhead Parallax §3.2 names for its θ2), and the
/// partition's gRPC transfers. That it splits evenly between the push
/// and the pull is our assumption, the convention [`PS_TRANSFER_S`]
/// takes for the server's share (docs/research/tf-ps-costs.md §0).
///
/// Where it runs follows the servers' rule ([`partition_threads_s`]): a
/// worker is gRPC's client for its pulls (it fetches the looked-up rows),
/// so its process receives them on its polling threads, server s's on
/// thread s mod 8 (the servers numbered in the order the worker first
/// calls them, which we take as their index), each thread's partitions
/// one after another, [`WORKER_POLL_S`] each, the rest of the receipt
/// (the stitch among it) on the host's cores; it answers the servers'
/// fetches of its pushes on the host's cores in parallel (TensorFlow's
/// server runs incoming calls on its compute pool). Under local
/// aggregation a machine pushes once a partition (Parallax §5); where
/// Parallax's PS architecture replicates its GPUs in one process
/// (in-graph) that process receives every GPU's lookups, and where its
/// hybrid runs a process a GPU each receives its own.
pub const WORKER_PARTITION_S: f64 = 50e-6;

/// CPU seconds of a worker's receipt of a partition's looked-up rows
/// ([`WORKER_PARTITION_S`] at the pull) that fall on its polling thread:
/// 9.9 µs, measured by `scripts/tf-ps/thread_cost.py` as [`PS_POLL_S`]
/// is: the busiest of the worker's polling threads takes 9.8% and 9.9% of
/// its CPU a partition in two runs, of the 100.7 µs `partition_cost.py`
/// finds. Until 2026-11-28 the whole 52 µs was charged to the thread.
pub const WORKER_POLL_S: f64 = 9.9e-6;

/// CPU seconds per byte of a sparse push that the server's polling thread
/// spends completing its fetch (parsing the fetched rows): 0.64 ns,
/// measured by `scripts/tf-ps/thread_cost.py --batches` (TensorFlow 1.6.0,
/// one worker, 8 partitions, 1,024 to 65,536 ids of 256 bytes a step,
/// 2-core AMD EPYC VM, 2026-11-28): the busiest polling thread of the
/// server spends 155.0, 189.3 and 159.6 ns an id in three runs, of 264
/// bytes pushed (the row and its index): 0.59 to 0.72 ns a byte. A dense
/// push's costs its thread about as much (`ps::PS_RECV_THREAD_BYTE_S`,
/// 0.745). Since 2026-11-28 (docs/research/tf-ps-costs.md §0.5).
pub const PS_POLL_BYTE_S: f64 = 0.64e-9;

/// CPU seconds per byte of a sparse pull (the looked-up rows) that the
/// worker's polling thread spends completing its fetch: 0.74 ns, the same
/// runs' busiest polling thread of the worker, 180.8, 208.7 and 175.4 ns
/// an id of 256 bytes pulled: 0.69 to 0.82 ns a byte.
pub const WORKER_POLL_BYTE_S: f64 = 0.74e-9;

/// Bytes each polling thread of the busiest host parses, thread by thread
/// (target i on thread i mod 8, [`super::polling_threads`]): `bytes(i, j)`
/// is what target i sends server j, `targets` of them, the servers on
/// machine j mod `nodes`; each thread's bytes over the host's servers,
/// the busiest host's for each thread (an upper bound where hosts
/// differ).
fn thread_bytes(
    targets: u32,
    servers: u32,
    nodes: u32,
    bytes: impl Fn(u32, u32) -> f64,
) -> Vec<f64> {
    let threads = targets.clamp(1, super::GRPC_POLLING_THREADS) as usize;
    let mut busiest = vec![0.0; threads];
    for h in 0..nodes {
        let mut on_host = vec![0.0; threads];
        for j in (0..servers).filter(|j| j % nodes == h) {
            for i in 0..targets {
                on_host[i as usize % threads] += bytes(i, j);
            }
        }
        for (b, o) in busiest.iter_mut().zip(on_host) {
            *b = f64::max(*b, o);
        }
    }
    busiest
}

/// What `payload` carries from worker `w` to server `j` of `servers`
/// (or back): a row of [`Payload::PerWorker`], a shard of
/// [`Payload::PerServer`], an even share of [`Payload::Uniform`].
fn to_server(payload: &Payload, w: u32, j: u32, servers: u32) -> f64 {
    match payload {
        Payload::PerWorker {
            servers: s, bytes, ..
        } => bytes[(w * s + j) as usize],
        Payload::PerServer(shards) => shards[j as usize],
        Payload::Uniform(b) => b / servers as f64,
        Payload::PerRank(_) | Payload::PerPair(_) => 0.0,
    }
}

/// The sparse PS of table `e` (layer `l`): push, the servers' work, pull;
/// with local aggregation, each machine's accumulators first; the
/// workers' own CPU at both ends ([`WORKER_PARTITION_S`]). Returns the
/// tasks of the servers' push transfers, a polling thread each, which
/// `super::chain_receives` chains over the tables and the dense
/// variables, and the tasks of the workers' receiving threads and of the
/// local chiefs' fetching threads (none but under Parallax's hybrid with
/// local aggregation), which [`add`] chains over the tables.
fn ps_tasks(
    cfg: &TrainConfig,
    plan: &mut Plan,
    channel: ChannelId,
    l: u32,
    e: &Embedding,
    fwd: TaskId,
    bwd: TaskId,
) -> (Vec<TaskId>, Vec<TaskId>, Vec<TaskId>) {
    let cluster = &cfg.cluster;
    let n = cluster.gpus();
    let p = cfg.model.gradient_precision;
    let name = &cfg.model.layers[l as usize].name;
    let tokens = e.token_model();
    // with `local_aggregation` each machine's accumulators take its GPUs'
    // gradients and the machine pushes once a partition, under either
    // model (Parallax §5); under the density model the machine's push carries
    // all its GPUs' rows (they share few), under the token model, whose
    // draws say which rows its GPUs share, their union. DCT-DP's trainers
    // push their own (its strategy refuses the key; Top-k and gTop-k take
    // no tables).
    let aggregating = cfg.strategy.local_aggregation
        && cluster.gpus_per_node > 1
        && !matches!(cfg.strategy.dense, DenseMethod::Dct);
    // Parallax's PS architecture replicates a machine's GPUs in one
    // process (in-graph, `ps/graph_transform.py`: a worker task per
    // machine, a replica per GPU); its hybrid, whose dense part is
    // Horovod's, runs a process per GPU (`hybrid/runner.py`: `mpirun -np`
    // the GPUs, a worker task each), a local chief of each machine
    // pushing the machine's sum (Parallax §5)
    let in_graph = aggregating && matches!(cfg.strategy.dense, DenseMethod::Ps);
    let local = tokens.is_some() && aggregating;
    let ps = Collective {
        ps_servers: cfg.strategy.ps_servers,
        local_aggregation: local,
        ..Collective::new(Op::Ps)
    };
    let servers = ps.servers(cluster);
    let parts = partitions(cfg, servers);
    // partition k on server k mod S: server j holds ⌊P/S⌋, one more for
    // the first P mod S; server j on machine j mod M, the GPU machines or,
    // with `ps_machines`, the servers' own (whose hosts run the servers'
    // tasks apart from the workers')
    let on = |j: u32| parts / servers + u32::from(j < parts % servers);
    let dedicated = cluster.ps_machines > 0;
    let machines = cluster.server_machines();
    let host_parts = |h: u32| -> Vec<u32> {
        (0..parts)
            .filter(|&k| (k % servers) % machines == h)
            .collect()
    };
    let row_bytes = e.sparse_bytes(1, p) as f64;
    let pushers = if aggregating { cluster.nodes } else { n };
    // per iteration: the push and the pull payloads, each server task's
    // and each local task's elements (the busiest host's i-th largest)
    type Its = (Vec<(Payload, Payload)>, Vec<Vec<f64>>, Vec<Vec<f64>>);
    let (payloads, server_work, local_work): Its = match &tokens {
        Some(tm) => {
            let its =
                draws::each_ps_iteration(cfg, l, tm, e.vocab, e.dim, parts, servers, local, |it| {
                    // with local aggregation each GPU sends its own
                    // gradient, a row per token, to the machine's aggregator
                    let intra = if local {
                        tm.tokens as f64 * row_bytes
                    } else {
                        0.0
                    };
                    let per_worker = |counts: &[u64], intra: f64| Payload::PerWorker {
                        servers,
                        bytes: counts.iter().map(|&r| r as f64 * row_bytes).collect(),
                        intra,
                    };
                    let payload = (per_worker(&it.rows, intra), per_worker(&it.gpu_rows, 0.0));
                    let server = draws::envelope(
                        &(0..machines)
                            .map(|h| {
                                host_parts(h)
                                    .iter()
                                    .map(|&k| it.partition_elements[k as usize])
                                    .collect()
                            })
                            .collect::<Vec<_>>(),
                    );
                    let locals = if local {
                        draws::envelope(
                            &it.local_elements
                                .chunks(parts as usize)
                                .map(<[u64]>::to_vec)
                                .collect::<Vec<_>>(),
                        )
                    } else {
                        Vec::new()
                    };
                    let f = |v: Vec<u64>| v.into_iter().map(|x| x as f64).collect::<Vec<f64>>();
                    (payload, f(server), f(locals))
                });
            let mut payloads = Vec::with_capacity(its.len());
            let mut server = Vec::with_capacity(its.len());
            let mut locals = Vec::with_capacity(its.len());
            for (a, b, c) in its {
                payloads.push(a);
                server.push(b);
                locals.push(c);
            }
            (payloads, server, locals)
        }
        None => {
            let r = e.rows_per_gpu();
            let bytes = message_bytes(e, SparseMethod::Ps, n, p);
            let payload = if parts.is_multiple_of(servers) {
                Payload::Uniform(bytes as f64)
            } else {
                // whole bytes per server, adding up to the gradient:
                // server j's share ends at ⌊bytes·(partitions on
                // servers ≤ j)/P⌋
                let mut held = 0u64;
                let mut last = 0u64;
                Payload::PerServer(
                    (0..servers)
                        .map(|j| {
                            held += on(j) as u64;
                            let end = (bytes as u128 * held as u128 / parts as u128) as u64;
                            let shard = end - last;
                            last = end;
                            shard as f64
                        })
                        .collect(),
                )
            };
            // every host runs as many partitions as the busiest one
            // holds (the pull waits for the last server), each of an
            // even share of the elements
            let per_node = (0..machines)
                .map(|h| host_parts(h).len())
                .max()
                .unwrap_or(0)
                .max(1);
            let elements = n as f64 * r as f64 * e.dim as f64 / parts as f64;
            // each machine's accumulator of a partition: its GPUs' rows
            let locals = if aggregating {
                let g = cluster.gpus_per_node as f64;
                vec![g * r as f64 * e.dim as f64 / parts as f64; parts as usize]
            } else {
                Vec::new()
            };
            (
                vec![(payload.clone(), payload)],
                vec![vec![elements; per_node]],
                vec![locals],
            )
        }
    };
    // seconds per element pushed: the server's accumulators and updates,
    // and with local aggregation each machine's accumulators of its GPUs
    let server_rate = server_element_s(pushers);
    let local_rate = accumulate_s(cluster.gpus_per_node);
    // pulls are each GPU's own lookups: never aggregated
    let comm = |label: String, algo: Algo, payload: &Payload, after: &[TaskId]| {
        let collective = Collective {
            algo,
            local_aggregation: local && algo == Algo::Push,
            ..ps
        };
        comm_task(
            l,
            channel,
            label,
            collective,
            payload.clone(),
            after,
            l as u64,
        )
    };
    // CPU tasks `label i`, i < the most any iteration has, each task's
    // duration per iteration (`rate` seconds an element and `each`
    // seconds; 0 where an iteration has fewer), waiting for `after`; then
    // the tasks `ends`, `label`s `name` of their durations (one, or one
    // an iteration), each waiting for them all. Returns those.
    let stage = |plan: &mut Plan,
                 label: &str,
                 work: &[Vec<f64>],
                 (rate, each): (f64, f64),
                 ends: &[(String, Vec<SimTime>)],
                 after: &[TaskId]| {
        let count = work.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(count);
        for i in 0..count {
            let at = |it: &Vec<f64>| {
                SimTime::from_secs(it.get(i).map_or(0.0, |&elements| rate * elements + each))
            };
            let durations = work.iter().map(at).collect();
            ids.push(cpu_task_each(
                plan,
                l,
                format!("{name} {label} {i}"),
                durations,
                after,
            ));
        }
        ends.iter()
            .map(|(end, durations)| {
                let label = format!("{name} {label}s{end}");
                cpu_task_each(plan, l, label, durations.clone(), &ids)
            })
            .collect::<Vec<TaskId>>()
    };
    // `items` pieces of work of `item_s` seconds each, shared by as many
    // alike CPU tasks `label i` as cores (or items, if fewer), each task
    // waiting for `after`
    let shared = |plan: &mut Plan, label: &str, items: u64, item_s: f64, after: TaskId| {
        let width = items.min(cluster.cpu_cores.max(1) as u64);
        let duration = SimTime::from_secs(items as f64 * item_s / width as f64);
        (0..width)
            .map(|i| {
                plan.tasks.push(cpu_task(
                    l,
                    format!("{name} {label} {i}"),
                    duration,
                    &[after],
                ));
                plan.tasks.len() as TaskId - 1
            })
            .collect::<Vec<TaskId>>()
    };
    // local aggregation: every machine's accumulators of the partitions,
    // each (G + 1) ops of bookkeeping (G pushes, one take). Under
    // Parallax's hybrid, whose machine runs a process a GPU, the
    // accumulators are on a local chief's CPU, which fetches the other
    // G − 1 GPUs' gradients, a partition at a time, through gRPC
    // (`graph_transform_lib.py`, `_get_aggregated_sparse_grad`: each
    // replica's `apply_indexed_slices_grad` into an accumulator on
    // `/job:worker/task:<local chief>/device:CPU:0`): the peers answer
    // each fetch on the host's cores ([`WORKER_PARTITION_S`] a partition),
    // the chief completes peer k's on its polling thread k mod 8
    // ([`PS_POLL_S`] a partition and [`PS_POLL_BYTE_S`] a byte of the
    // peer's whole gradient, the largest GPU's under the token model),
    // and the rest of each transfer ([`PS_TRANSFER_S`] less the thread's
    // share) runs on its cores beside the partition's accumulator work
    let mut fetching = Vec::new();
    let before_push = if aggregating {
        let fixed =
            SimTime::from_secs((cluster.gpus_per_node as u64 + 1) as f64 * PS_OP_S * parts as f64);
        let peers = if in_graph {
            0
        } else {
            cluster.gpus_per_node - 1
        };
        let (after, each) = if peers > 0 {
            let answered = shared(
                plan,
                "local peers' sends",
                peers as u64 * parts as u64,
                WORKER_PARTITION_S,
                bwd,
            );
            let gradient = message_bytes(e, SparseMethod::Ps, n, p) as f64;
            let peer_bytes: Vec<f64> = payloads
                .iter()
                .map(|(push, _)| match push {
                    Payload::PerWorker { intra, .. } => *intra,
                    _ => gradient,
                })
                .collect();
            for (t, fetched) in super::polling_threads(peers, |_| 1.0)
                .into_iter()
                .enumerate()
            {
                let at = |b: &f64| {
                    SimTime::from_secs(fetched * (parts as f64 * PS_POLL_S + b * PS_POLL_BYTE_S))
                };
                let label = format!("{name} local chief's fetches {t}");
                let durations = peer_bytes.iter().map(at).collect();
                fetching.push(cpu_task_each(plan, l, label, durations, &answered));
            }
            (fetching.clone(), peers as f64 * (PS_TRANSFER_S - PS_POLL_S))
        } else {
            (vec![bwd], 0.0)
        };
        stage(
            plan,
            "local partition",
            &local_work,
            (local_rate, each),
            &[(String::new(), vec![fixed])],
            &after,
        )[0]
    } else {
        bwd
    };
    // the workers answer the servers' fetches of their partitions'
    // gradients (each GPU's worker, or under local aggregation once a
    // machine: the in-graph process, or the hybrid's local chief), in
    // parallel on the host's cores: as many
    // tasks as cores, or partitions to answer if fewer, sharing the work
    let answering = if aggregating {
        1
    } else {
        cluster.gpus_per_node
    };
    let answers = answering as u64 * parts as u64;
    let sends = shared(
        plan,
        "workers' sends",
        answers,
        WORKER_PARTITION_S,
        before_push,
    );
    let push = plan.tasks.len() as TaskId;
    plan.tasks.push(comm(
        format!("{name} sparse push"),
        Algo::Push,
        &payloads[0].0,
        &sends,
    ));
    // the servers' polling threads' transfers of the pushes, a task a
    // thread, each for all the partitions of the busiest host, and the
    // bytes each thread parses there, each iteration's (a machine's push
    // carrying its GPUs' rows under local aggregation)
    let per_node = server_work.iter().map(Vec::len).max().unwrap_or(1) as f64;
    let carried = if aggregating && !local {
        cluster.gpus_per_node as f64
    } else {
        1.0
    };
    let parsed: Vec<Vec<f64>> = payloads
        .iter()
        .map(|(push, _)| {
            thread_bytes(pushers, servers, machines, |w, j| {
                carried * to_server(push, w, j, servers)
            })
        })
        .collect();
    // the bytes each process's receiving threads parse, each iteration's:
    // process k of a machine takes its GPUs' pulls (GPU k's, or the
    // machine's one process all its GPUs' where it replicates them in
    // graph), server s's on thread s mod 8, the busiest machine's for each
    let (processes, gpus) = if in_graph {
        (1, cluster.gpus_per_node)
    } else {
        (cluster.gpus_per_node, 1)
    };
    let receiving = servers.clamp(1, super::GRPC_POLLING_THREADS) as usize;
    let pulled: Vec<Vec<f64>> = payloads
        .iter()
        .map(|(_, pull)| {
            let mut busiest = vec![0.0; processes as usize * receiving];
            for h in 0..cluster.nodes {
                let mut mine = vec![0.0; busiest.len()];
                for k in 0..processes {
                    let first = h * cluster.gpus_per_node + k * gpus;
                    for j in 0..servers {
                        mine[k as usize * receiving + j as usize % receiving] += (first
                            ..first + gpus)
                            .map(|g| to_server(pull, g, j, servers))
                            .sum::<f64>();
                    }
                }
                for (b, m) in busiest.iter_mut().zip(mine) {
                    *b = f64::max(*b, m);
                }
            }
            busiest
        })
        .collect();
    let threads: Vec<(String, Vec<SimTime>)> = partition_threads_s(pushers)
        .into_iter()
        .enumerate()
        .map(|(t, s)| {
            let durations = parsed
                .iter()
                .map(|b| SimTime::from_secs(s * per_node + b[t] * PS_POLL_BYTE_S))
                .collect();
            (format!("' pushes {t}"), durations)
        })
        .collect();
    // each partition's pulls, one a GPU, served beside its elements, and
    // what of its pushes' transfers the polling threads do not take
    let served = n as f64 * PS_TRANSFER_S + pushers as f64 * (PS_TRANSFER_S - PS_POLL_S);
    let first_server_task = plan.tasks.len();
    let stitch = stage(
        plan,
        "partition",
        &server_work,
        (server_rate, served),
        &threads,
        &[push],
    );
    if dedicated {
        // the partitions and the polling threads run on the servers' own
        // machines, on their cores
        plan.on_server_machines.resize(plan.tasks.len(), false);
        plan.on_server_machines[first_server_task..].fill(true);
        plan.server_host_cores = server_cores(cfg);
    }
    let pull = plan.tasks.len() as TaskId;
    plan.tasks.push(comm(
        format!("{name} sparse pull"),
        Algo::Pull,
        &payloads[0].1,
        &stitch,
    ));
    if payloads.len() > 1 {
        let (pushes, pulls): (Vec<Payload>, Vec<Payload>) = payloads.into_iter().unzip();
        plan.per_iteration
            .insert(push, PerIteration::Payloads(pushes.into()));
        plan.per_iteration
            .insert(pull, PerIteration::Payloads(pulls.into()));
    }
    // each process receives its GPUs' looked-up rows on its polling
    // threads, server s's partitions on thread s mod 8, a partition after
    // another: each GPU's worker its own, or the in-graph machine's
    // process all its GPUs'; the next lookup waits for its
    // machine's receiving threads (a process's threads in order, then the
    // next process's)
    let by_thread = super::polling_threads(servers, |j| gpus as f64 * on(j) as f64 * WORKER_POLL_S);
    let receives: Vec<TaskId> = (0..processes as usize * by_thread.len())
        .map(|i| {
            let s = by_thread[i % by_thread.len()];
            let at = |b: &Vec<f64>| SimTime::from_secs(s + b[i] * WORKER_POLL_BYTE_S);
            let label = format!("{name} workers' receives {i}");
            cpu_task_each(plan, l, label, pulled.iter().map(at).collect(), &[pull])
        })
        .collect();
    // the rest of each receipt (the stitch among it) on the host's cores,
    // a receipt a GPU a partition
    let receipts = cluster.gpus_per_node as u64 * parts as u64;
    let rest = WORKER_PARTITION_S - WORKER_POLL_S;
    let stitches = shared(plan, "workers' stitches", receipts, rest, pull);
    plan.tasks[fwd as usize].deps.extend(
        receives
            .iter()
            .chain(&stitches)
            .map(|&task| Dep { task, back: 1 }),
    );
    plan.host_cores = cluster.cpu_cores;
    (stitch, receives, fetching)
}

/// Cores of each dedicated server machine's host: `ps_machine_cores`, or
/// the GPU machines' `cpu_cores`.
pub fn server_cores(cfg: &TrainConfig) -> u32 {
    match cfg.strategy.ps_machine_cores {
        0 => cfg.cluster.cpu_cores,
        c => c,
    }
}

/// Partitions of each sparse variable on `servers` servers.
fn partitions(cfg: &TrainConfig, servers: u32) -> u32 {
    match cfg.strategy.ps_partitions {
        Partitions::Fixed(p) => p,
        // the search plans each of its samples as `Fixed`
        Partitions::PerServer | Partitions::Auto => servers,
    }
}

/// Bytes of one message that `method` sends for table `e` on `gpus`
/// GPUs (the payload size in the sense of its operation, one per table
/// per iteration and direction), of `Embedding::lookups_per_gpu` rows a
/// GPU (a row per token under the token model, padding included, as
/// frameworks send sparse gradients; α·vocab under a density): the dense
/// table (AllReduce); the N
/// sparse gradients gathered (AllGather); one GPU's sparse gradient
/// pushed, or its rows pulled (PS); one GPU's AlltoAll send buffer, its
/// rows' values in every GPU's ⌈dim/N⌉ columns, the last ones padded when
/// N does not divide `dim`, so that the blocks are equal (an AlltoAll of
/// equal counts, as `torch.distributed`'s and NCCL's take). The planner
/// sends these; validation counts the priority pieces they are cut into.
pub fn message_bytes(e: &Embedding, method: SparseMethod, gpus: u32, p: Precision) -> u64 {
    let r = e.lookups_per_gpu();
    let n = gpus as u64;
    match method {
        SparseMethod::AllReduce => e.dense_bytes(p),
        SparseMethod::AllGather => n.saturating_mul(e.sparse_bytes(r, p)),
        SparseMethod::Ps => e.sparse_bytes(r, p),
        SparseMethod::AllToAll => r * e.dim.div_ceil(n) * n * p.bytes(),
    }
}
