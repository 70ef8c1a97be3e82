//! Data parallelism through parameter servers (Parallax §2, the PS
//! architecture): every worker pushes each layer's gradient to the
//! servers, they aggregate the pushes and apply them, and every worker
//! pulls the updated parameters back. With local aggregation a machine's
//! GPUs are reduced first and the machine pushes once.
//!
//! By default (`ps_placement = "sharded"`) each layer is spread evenly
//! over the servers and synchronised by one PS collective, pushes and
//! pulls overlapped, the servers' CPU not charged. With `"whole"`, as
//! TensorFlow runs it (docs/models.md §4.3):
//!
//! * **Placement.** Parallax hands TensorFlow's `replica_device_setter` a
//!   `GreedyLoadBalancingStrategy` (snuspl/parallax,
//!   `ps/between_graph_parallel.py`): the variables, in creation
//!   order, each on the server holding the fewest bytes so far (the first
//!   such server on a tie); server j runs on machine j mod M. dtsim places
//!   the trainable variables, each layer's [`crate::workload::Layer::variables`]
//!   (a preset's from `crate::workload::variables`); Parallax's
//!   load function also counts the variables nobody pushes (batch norms'
//!   running statistics, the global step), a few percent of the bytes,
//!   which it leaves out. A layer's push goes to the servers of its
//!   variables only, a message to each on a channel of that server's
//!   (and its pull likewise), so transfers to different servers and in
//!   both directions run at once, as TensorFlow's RPCs do (to one server,
//!   one after another on its channel); a large
//!   variable's 48 pushes all reach one machine: the hot spot that a PS
//!   balanced in bytes does not have. Several servers on one machine
//!   (`ps_servers` > machines) share its host: their receiving chains
//!   and accumulators run as one, which over-serialises them.
//! * **A server's CPU** (TensorFlow's, measured by
//!   `scripts/tf-ps/dense_cost.py`: the transfers under TensorFlow 1.6,
//!   docs/research/tf-ps-costs.md §0.5, the accumulator under 2.21,
//!   §0.3):
//!   each push's share of its transfer on the polling thread that
//!   completes the server's gRPC call to its worker
//!   ([`super::sparse::PS_POLL_S`] and [`PS_RECV_THREAD_BYTE_S`] a byte;
//!   TensorFlow 1.6's eight threads, worker w's on thread w mod 8:
//!   [`super::polling_threads`]), each thread's one after another over
//!   all its variables and tables (the same chains as the sparse
//!   partitions' pushes, [`super::sparse::partition_cost_s`]); the rest
//!   of each push's receiving (the rest of its
//!   [`super::sparse::PS_TRANSFER_S`], and [`PS_RECV_BYTE_S`]) and each
//!   pull's sending
//!   ([`PS_SEND_BYTE_S`], with its [`super::sparse::PS_TRANSFER_S`]) on
//!   the host's cores, a task a transfer; and the accumulator
//!   (`tf.ConditionalAccumulator`, which Parallax uses for dense
//!   variables), whose lock takes the pushes one at a time, each adding
//!   into the sum in place ([`PS_ADD_S`] an element), then the update
//!   ([`PS_UPDATE_S`] an element).

use super::super::TrainConfig;
use super::super::task::{ChannelId, Dep, Label, PerIteration, Plan, Task, TaskId, Work};
use crate::collective::{Algo, Collective, Payload};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// CPU seconds a server's `ConditionalAccumulator` spends per element of
/// each push, adding it into the sum in place (TensorFlow's dense
/// `AddToAccumGradFunction`): 0.42 ns, measured by
/// `scripts/tf-ps/dense_cost.py` (TensorFlow 2.21, one thread, 1 to 48
/// pushes of 1M and 4M fp32 elements, 2-core Xeon VM, 2026-11-27): the
/// script's least-squares fit over the sizes of 1M elements and more,
/// a + 0.423 ns·N·E + 0.860 ns·E, each point within 8%. Smaller variables
/// stay in the caches and cost less (0.25 ns an element pushed at
/// 262,144 elements, update included); we charge them the same.
pub const PS_ADD_S: f64 = 0.42e-9;

/// CPU seconds a server spends per element of a dense variable taking the
/// average from its accumulator and applying it by SGD: 0.86 ns, the same
/// fit's.
pub const PS_UPDATE_S: f64 = 0.86e-9;

/// CPU seconds per byte of a pushed tensor that a server spends on the
/// polling thread that completes the gRPC call: 0.745 ns, measured on
/// Parallax's TensorFlow 1.6.0 by `scripts/tf-ps/dense_cost.py` (one
/// worker and one server on localhost, pushes of 64 kB to 64 MB, 2-core
/// AMD EPYC VM, 2026-11-28): the busiest server thread's share of a push,
/// 0.738 and 0.751 ns a byte in two runs, the thread a polling thread
/// (`GrpcWorkerCacheThread`, named by `--roles` from a gdb backtrace;
/// docs/research/tf-ps-costs.md §0.5). TensorFlow 2.21 puts 0.16 to 0.18
/// ns a byte there (its gRPC reads its sockets on event-engine threads
/// beside it), which dtsim used until 2026-11-28. Each worker's pushes
/// fall on one of the eight ([`super::polling_threads`], §0.4).
pub const PS_RECV_THREAD_BYTE_S: f64 = 0.745e-9;

/// CPU seconds per byte of a pushed tensor that a server spends receiving
/// it besides [`PS_RECV_THREAD_BYTE_S`] and the accumulator's add, on its
/// other threads: 0.76 ns, the same TensorFlow 1.6 measurement's server
/// CPU for a push (1.567 and 1.587 ns a byte in the two runs, 1.577
/// taken) less those two (0.745 ns, and 0.068 ns for the measurement's
/// `assign_add`: the TensorFlow 1.6 accumulator fit's 0.27 ns an element
/// of 4 bytes, taken for it, a fit §0.5 does not otherwise use). dtsim
/// charges the add at [`PS_ADD_S`] (0.105 ns a byte), so a modelled push
/// costs the server 1.61 ns a byte against the 1.58 measured. Until
/// 2026-11-28 0.48 ns, TensorFlow 2.21's.
pub const PS_RECV_BYTE_S: f64 = 0.76e-9;

/// CPU seconds per byte of a pulled tensor that a server spends sending
/// it: 0.17 ns, the same TensorFlow 1.6 measurement's server CPU for a
/// pull (0.168 and 0.179 ns in the two runs). Until 2026-11-28 0.27 ns,
/// TensorFlow 2.21's.
pub const PS_SEND_BYTE_S: f64 = 0.17e-9;

/// The plan: [`super::data_parallel`], which builds the servers' tasks of
/// each layer with [`placement`] and [`server_tasks`].
pub fn plan(cfg: &TrainConfig) -> Plan {
    super::data_parallel(cfg, cfg.strategy.dense_collective(), "communication")
}

/// Each layer's dense variables, by layer: (elements, server) of each,
/// placed greedily by bytes in creation order (layer by layer, each
/// layer's variables in order) on `servers` servers.
pub fn placement(cfg: &TrainConfig, servers: u32) -> Vec<Vec<(u64, u32)>> {
    let mut load = vec![0u64; servers.max(1) as usize];
    cfg.model
        .layers
        .iter()
        .map(|layer| {
            if layer.params == 0 {
                return Vec::new();
            }
            layer
                .variable_sizes()
                .into_iter()
                .map(|elements| {
                    let (j, _) = load
                        .iter()
                        .enumerate()
                        .min_by_key(|&(j, &b)| (b, j))
                        .expect("at least one server");
                    load[j] += elements;
                    (elements, j as u32)
                })
                .collect()
        })
        .collect()
}

/// Where a run's dense variables sit on the servers with whole variables
/// (`ps_placement = "whole"`), and what their pushes cost each server an
/// iteration: the placement's imbalance in bytes and in the receiving
/// thread's time, which the busiest server sets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// Dense variables on each server, by server.
    pub variables: Vec<u32>,
    /// Bytes every pusher sends each server an iteration (a GPU's, or a
    /// machine's with local aggregation), by server.
    pub bytes_per_push: Vec<f64>,
    /// Seconds an iteration each server's busiest receiving thread (of
    /// its eight polling threads, [`super::polling_threads`]) spends on
    /// the dense pushes (their transfers' share,
    /// [`super::sparse::PS_POLL_S`], and [`PS_RECV_THREAD_BYTE_S`] a
    /// byte), by server; the sparse
    /// tables' pushes come on top.
    pub receive_thread_s: Vec<f64>,
}

impl Placement {
    /// The server whose receiving thread is busiest (the first of equals).
    pub fn busiest(&self) -> usize {
        let mut best = 0;
        for (j, &s) in self.receive_thread_s.iter().enumerate() {
            if s > self.receive_thread_s[best] {
                best = j;
            }
        }
        best
    }
}

/// Workers that push each variable through `collective`: the machines
/// with local aggregation (a machine's GPUs reduced first), else the GPUs.
pub fn pushers(cfg: &TrainConfig, collective: Collective) -> u32 {
    let cluster = &cfg.cluster;
    if collective.local_aggregation && cluster.gpus_per_node > 1 {
        cluster.nodes
    } else {
        cluster.gpus()
    }
}

/// Seconds a server's receiving thread spends on `pushes` pushes of a
/// variable of `bytes` (the pushes of the workers it completes calls to:
/// [`super::polling_threads`]): each push's share of its transfer on the
/// thread ([`super::sparse::PS_POLL_S`]) and its bytes
/// ([`PS_RECV_THREAD_BYTE_S`]).
pub fn receive_thread_s(pushes: f64, bytes: f64) -> f64 {
    pushes * (super::sparse::PS_POLL_S + bytes * PS_RECV_THREAD_BYTE_S)
}

/// How many pushes each of a server's polling threads completes of a
/// variable that `pushers` workers push: worker w's on thread w mod 8
/// ([`super::polling_threads`]).
pub fn pushes_by_thread(pushers: u32) -> Vec<f64> {
    super::polling_threads(pushers, |_| 1.0)
}

/// The placement summary of `cfg`, where its dense variables sit whole
/// on parameter servers (`dense = "ps"`, `ps_placement = "whole"`, more
/// than one GPU, data parallelism); `None` otherwise.
pub fn summary(cfg: &TrainConfig) -> Option<Placement> {
    let st = &cfg.strategy;
    let cluster = &cfg.cluster;
    if st.dense != crate::strategy::DenseMethod::Ps
        || !st.ps_whole_variables
        || st.mp_stages > 1
        || cluster.gpus() < 2
    {
        return None;
    }
    let collective = st.dense_collective();
    let servers = collective.servers(cluster);
    let pushers = pushers(cfg, collective);
    let busiest = pushes_by_thread(pushers).into_iter().fold(0.0, f64::max);
    let bpe = cfg.model.gradient_precision.bytes();
    let mut out = Placement {
        variables: vec![0; servers as usize],
        bytes_per_push: vec![0.0; servers as usize],
        receive_thread_s: vec![0.0; servers as usize],
    };
    for (elements, j) in placement(cfg, servers).into_iter().flatten() {
        let bytes = (elements * bpe) as f64;
        let j = j as usize;
        out.variables[j] += 1;
        out.bytes_per_push[j] += bytes;
        out.receive_thread_s[j] += receive_thread_s(busiest, bytes);
    }
    Some(out)
}

/// Bytes of layer `vars`'s variables on server `j` of `servers`: what
/// every worker pushes to, and pulls from, it (the other servers' shares
/// empty).
pub fn server_bytes(vars: &[(u64, u32)], j: u32, servers: u32, bytes_per_element: u64) -> Payload {
    let mut shards = vec![0.0; servers as usize];
    shards[j as usize] = vars
        .iter()
        .filter(|&&(_, s)| s == j)
        .map(|&(elements, _)| (elements * bytes_per_element) as f64)
        .sum();
    Payload::PerServer(shards.into())
}

/// The channel of the pushes to server `j`: channel 0 is the plan's own,
/// then one a server for the pushes and one a server for the pulls.
pub fn push_channel(j: u32) -> ChannelId {
    1 + j
}

/// The channel of the pulls from server `j` of `servers`.
pub fn pull_channel(j: u32, servers: u32) -> ChannelId {
    1 + servers + j
}

/// The servers of `vars`, ascending, each once.
fn servers_of(vars: &[(u64, u32)]) -> Vec<u32> {
    let mut js: Vec<u32> = vars.iter().map(|&(_, j)| j).collect();
    js.sort_unstable();
    js.dedup();
    js
}

/// A transfer of layer `l` (`algo` push or pull) on `channel`, waiting
/// for the tasks `after`.
fn transfer(
    l: u32,
    label: Label,
    (channel, algo): (ChannelId, Algo),
    collective: Collective,
    payload: Payload,
    after: &[TaskId],
) -> Task {
    Task {
        label,
        layer: Some(l),
        work: Work::Comm {
            channel,
            collective: Collective { algo, ..collective },
            payload,
        },
        deps: after.iter().map(|&task| Dep { task, back: 0 }).collect(),
        priority: l as u64,
        lead: false,
    }
}

/// The push of layer `l`'s gradient to one server, on `channel` with
/// `collective`'s servers (`payload` that server's bytes).
pub fn push_task(
    l: u32,
    channel: ChannelId,
    collective: Collective,
    payload: Payload,
    after: TaskId,
) -> Task {
    transfer(
        l,
        Label::Parameters,
        (channel, Algo::Push),
        collective,
        payload,
        &[after],
    )
}

/// The servers' work on layer `l` (variables `vars` on `servers`
/// servers, pushed by `pushers` workers, pulled by `pullers`), its
/// gradient ready at task `ready` and its push to the lowest of its
/// servers task `push`: the pushes to its other servers, the servers' CPU, and a pull
/// from each of its servers. Returns (the pulls, the receiving tasks, a
/// polling thread each, that join the server's chains of push
/// transfers).
pub fn server_tasks(
    cfg: &TrainConfig,
    plan: &mut Plan,
    l: u32,
    vars: &[(u64, u32)],
    (pushers, pullers): (u32, u32),
    (collective, servers): (Collective, u32),
    (ready, push): (TaskId, TaskId),
) -> (Vec<TaskId>, Vec<TaskId>) {
    let cluster = &cfg.cluster;
    let nodes = cluster.nodes;
    // server j on machine j mod M: the GPU machines, or (at most one a
    // GPU machine, validated) the servers' own, machine m's host standing
    // beside node m's ([`Plan::on_server_machines`]), the others idle
    let dedicated = cluster.ps_machines > 0;
    let machines = cluster.server_machines();
    debug_assert!(
        machines <= nodes,
        "validated: a machine a GPU machine at most"
    );
    let bpe = cfg.model.gradient_precision.bytes();
    let name = &cfg.model.layers[l as usize].name;
    let js = servers_of(vars);
    let mut pushes = vec![push];
    for &j in &js[1..] {
        pushes.push(plan.tasks.len() as TaskId);
        plan.tasks.push(push_task(
            l,
            push_channel(j),
            collective,
            server_bytes(vars, j, servers, bpe),
            ready,
        ));
    }
    // per node: each polling thread's chain's share, each transfer's, the
    // accumulator's
    let threads = pushes_by_thread(pushers);
    let mut chain = vec![vec![0.0; nodes as usize]; threads.len()];
    let mut recv = vec![0.0; nodes as usize];
    let mut send = vec![0.0; nodes as usize];
    let mut accum = vec![0.0; nodes as usize];
    for &(elements, j) in vars {
        let h = (j % machines) as usize;
        let bytes = (elements * bpe) as f64;
        let e = elements as f64;
        for (c, &pushes) in chain.iter_mut().zip(&threads) {
            c[h] += receive_thread_s(pushes, bytes);
        }
        recv[h] += super::sparse::PS_TRANSFER_S - super::sparse::PS_POLL_S + bytes * PS_RECV_BYTE_S;
        send[h] += super::sparse::PS_TRANSFER_S + bytes * PS_SEND_BYTE_S;
        accum[h] += pushers as f64 * e * PS_ADD_S + e * PS_UPDATE_S;
    }
    let per_node = |v: &[f64]| -> PerIteration {
        PerIteration::PerNode(v.iter().map(|&s| SimTime::from_secs(s)).collect())
    };
    // a host task lasting `each[h]` on node h's host, or beside it on
    // server machine h's (its `work` the longest)
    let cpu = |plan: &mut Plan, label: String, each: &[f64], after: &[TaskId]| -> TaskId {
        let id = plan.tasks.len() as TaskId;
        let longest = each.iter().copied().fold(0.0, f64::max);
        plan.tasks.push(super::sparse::cpu_task(
            l,
            label,
            SimTime::from_secs(longest),
            after,
        ));
        plan.per_iteration.insert(id, per_node(each));
        if dedicated {
            plan.on_server_machines.resize(plan.tasks.len(), false);
            plan.on_server_machines[id as usize] = true;
        }
        id
    };
    // the transfers each on a core (of the server's machine): one task a
    // push, then one a pull
    let cores = cluster.cpu_cores.max(1);
    let server_cores = if dedicated {
        super::sparse::server_cores(cfg).max(1)
    } else {
        cores
    };
    let ways = |count: u32| count.min(server_cores).max(1);
    let receiving: Vec<TaskId> = chain
        .iter()
        .enumerate()
        .map(|(t, c)| cpu(plan, format!("{name} receiving thread {t}"), c, &[ready]))
        .collect();
    let mut received = receiving.clone();
    let k = ways(pushers);
    let share: Vec<f64> = recv
        .iter()
        .map(|&s| s * pushers as f64 / k as f64)
        .collect();
    for i in 0..k {
        received.push(cpu(plan, format!("{name} receive {i}"), &share, &[ready]));
    }
    let applied = cpu(plan, format!("{name} accumulate"), &accum, &[ready]);
    received.push(applied);
    received.extend(&pushes);
    let k = ways(pullers);
    let share: Vec<f64> = send
        .iter()
        .map(|&s| s * pullers as f64 / k as f64)
        .collect();
    let mut served = Vec::with_capacity(k as usize);
    for i in 0..k {
        served.push(cpu(plan, format!("{name} serve {i}"), &share, &received));
    }
    let mut pulls = Vec::with_capacity(js.len());
    for &j in &js {
        pulls.push(plan.tasks.len() as TaskId);
        let label = if js.len() == 1 {
            format!("{name} pull")
        } else {
            format!("{name} pull {j}")
        };
        plan.tasks.push(transfer(
            l,
            Label::Named(label),
            (pull_channel(j, servers), Algo::Pull),
            collective,
            server_bytes(vars, j, servers, bpe),
            &served,
        ));
    }
    plan.host_cores = cores;
    if dedicated {
        plan.server_host_cores = server_cores;
    }
    (pulls, receiving)
}
