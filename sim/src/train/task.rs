//! The task graph of one iteration: what runs where, and what waits for
//! what.
//!
//! A [`Plan`] is one iteration's template. Every simulated GPU runs its
//! compute tasks in plan order on its compute stream; communication tasks
//! are collectives over all GPUs, queued on a channel of the plan; CPU
//! tasks run on every node's host. A dependency names a task of the same
//! iteration or of the previous one ([`Dep::back`]), so the same template
//! serves every iteration and the graph never grows with the run.
//!
//! Scopes: a compute task completes per GPU, a CPU task per node, a
//! communication task for the whole group at once (when its last message
//! ends). A communication task is ready when its dependencies are met on
//! every GPU; a compute task waits for its dependencies on its own GPU
//! (and node); a CPU task for those of its node's GPUs.

use crate::collective::{Collective, Payload};
use crate::strategy::Schedule;
use crate::time::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Index of a task in its [`Plan`].
pub type TaskId = u32;

/// Index of a channel in its [`Plan`].
pub type ChannelId = u32;

/// What a compute task is, for results and timelines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ComputeKind {
    /// A layer's forward pass.
    Forward,
    /// A layer's backward pass (the optimizer update folded in).
    Backward,
    /// A kernel a method inserts (selection, thresholding, sorting,
    /// coalescing): counted as compression, not as model compute.
    Kernel,
}

/// The work of a task.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// GPU compute on each GPU's compute stream, `duration` at nominal
    /// speed (stragglers scale it).
    Compute {
        /// What it is.
        kind: ComputeKind,
        /// Duration on a GPU of nominal speed.
        duration: SimTime,
    },
    /// CPU work on each node's host (a PS server's aggregation), one core
    /// for `duration`.
    Cpu {
        /// Duration on one core.
        duration: SimTime,
    },
    /// A collective over all GPUs on a channel.
    Comm {
        /// The channel it is queued on.
        channel: ChannelId,
        /// The operation and algorithm.
        collective: Collective,
        /// What it carries.
        payload: Payload,
    },
}

/// A dependency: `task` of this iteration (`back = 0`) or of the previous
/// one (`back = 1`; compute tasks only: a stream waits for what the last
/// iteration left, such as synchronised parameters). In the first
/// iteration a dependency on the previous one is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dep {
    /// The task depended on.
    pub task: TaskId,
    /// 0: this iteration; 1: the previous one.
    pub back: u32,
}

/// What a task is called in timelines. The common names are built from
/// the task's layer only when a timeline asks, so planning a point of a
/// large sweep allocates no strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Label {
    /// "fwd LAYER".
    Forward,
    /// "bwd LAYER".
    Backward,
    /// "LAYER parameters": the synchronisation of a layer's gradient.
    Parameters,
    /// Any other name.
    Named(String),
}

/// One task of the template.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// What it is called ([`Plan::name`]).
    pub label: Label,
    /// The model layer it belongs to, if any.
    pub layer: Option<u32>,
    /// What it does.
    pub work: Work,
    /// What it waits for.
    pub deps: Vec<Dep>,
    /// Priority on a priority channel: lower goes first (the dense
    /// planners use the layer index, so the next forward pass's first
    /// layer goes first).
    pub priority: u64,
    /// On a priority channel, schedule the task with the previous
    /// iteration's messages (by (iteration − 1, priority)), ahead of what
    /// that iteration still has queued: EmbRace's horizontal scheduling
    /// pulls the embedding's forward AlltoAll, which the next forward pass
    /// needs first, ahead of the last iteration's gradients.
    pub lead: bool,
}

/// A communication channel: one queue, one message on the wire at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelSpec {
    /// Name for timelines and results.
    pub name: String,
    /// FIFO or priority.
    pub schedule: Schedule,
    /// Tensor fusion buffer in bytes (0 = each piece alone).
    pub fusion: u64,
    /// Priority partition size in bytes (0 = whole tensors).
    pub partition: u64,
}

/// The reverse of the dependency lists, flat ([`Plan::dependents`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependents {
    start: Vec<u32>,
    edges: Vec<(TaskId, u32)>,
}

impl Dependents {
    /// The tasks depending on `t`, each with its dependency's `back`.
    pub fn of(&self, t: TaskId) -> &[(TaskId, u32)] {
        &self.edges[self.start[t as usize] as usize..self.start[t as usize + 1] as usize]
    }
}

/// One iteration's task graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The tasks; compute tasks run in this order on every GPU.
    pub tasks: Vec<Task>,
    /// The channels communication tasks are queued on.
    pub channels: Vec<ChannelSpec>,
    /// Cores of each node's host for CPU tasks.
    pub host_cores: u32,
    /// The CPU tasks that run on the hosts of the machines dedicated to
    /// the parameter servers (`strategy.ps_machines`), not on the GPU
    /// machines': by task, empty where none does. Beside each node's host
    /// stands a server machine's host of its own `server_host_cores` cores, which
    /// runs these tasks for that node: a sparse PS's at the busiest server
    /// machine's durations on every such host, whole variables' machine
    /// m's work beside node m ([`PerIteration::PerNode`]).
    pub on_server_machines: Vec<bool>,
    /// Cores of each dedicated server machine's host (0: `host_cores`).
    pub server_host_cores: u32,
    /// Tasks whose work changes from one iteration to the next (the token
    /// model's rows): in iteration i a task listed here carries entry
    /// i mod len; its `work` holds iteration 0's.
    pub per_iteration: BTreeMap<TaskId, PerIteration>,
    /// Model-parallel stages S (1: every GPU runs every compute task).
    /// With S > 1 the GPUs are GPUs / S trainers of S stages, placed
    /// stage-major (rank r is stage r / (GPUs / S)); a compute task runs on
    /// the GPUs of its stage only ([`Plan::stage`]), in plan order.
    pub stages: u32,
    /// The stage of each task (compute tasks'; empty when `stages` is 1).
    pub stage: Vec<u32>,
}

/// A task's work, iteration by iteration.
#[derive(Debug, Clone, PartialEq)]
pub enum PerIteration {
    /// A communication task's payloads.
    Payloads(Arc<[Payload]>),
    /// A CPU task's durations on one core, or a compute task's at
    /// nominal speed.
    Durations(Arc<[SimTime]>),
    /// A compute or CPU task that runs `first` in every iteration whose
    /// index is a multiple of `every` (0, every, 2·every, …) and its
    /// `work`'s duration in the others: DCT-DP's threshold, re-sorted
    /// once every life-span L.
    Periodic {
        /// The period, in iterations (at least 1).
        every: u32,
        /// The duration in iterations 0, every, 2·every, ….
        first: SimTime,
    },
    /// A CPU task's duration on each node's host, by node, the same in
    /// every iteration: the work of a parameter server's variables, which
    /// sit on some servers and not on others.
    PerNode(Arc<[SimTime]>),
}

impl Plan {
    /// The name of task `t` for timelines ("fwd conv1", "fc8 parameters"),
    /// with layer names from `layer_name`.
    pub fn name(&self, t: TaskId, layer_name: impl Fn(u32) -> String) -> String {
        let task = &self.tasks[t as usize];
        let layer = || task.layer.map_or_else(|| format!("task {t}"), &layer_name);
        match &task.label {
            Label::Forward => format!("fwd {}", layer()),
            Label::Backward => format!("bwd {}", layer()),
            Label::Parameters => format!("{} parameters", layer()),
            Label::Named(n) => n.clone(),
        }
    }

    /// What communication task `t` carries in iteration `iter`.
    ///
    /// # Panics
    /// If `t` is not a communication task.
    pub fn payload(&self, t: TaskId, iter: u32) -> &Payload {
        if let Some(PerIteration::Payloads(p)) = self.per_iteration.get(&t) {
            return &p[iter as usize % p.len()];
        }
        match &self.tasks[t as usize].work {
            Work::Comm { payload, .. } => payload,
            _ => panic!("task {t} is not a communication task"),
        }
    }

    /// How long CPU or compute task `t` runs in iteration `iter` (a
    /// compute task at nominal speed).
    ///
    /// # Panics
    /// If `t` is a communication task.
    pub fn duration(&self, t: TaskId, iter: u32) -> SimTime {
        match self.per_iteration.get(&t) {
            Some(PerIteration::Durations(d)) => return d[iter as usize % d.len()],
            Some(&PerIteration::Periodic { every, first }) if iter.is_multiple_of(every.max(1)) => {
                return first;
            }
            _ => {}
        }
        match self.tasks[t as usize].work {
            Work::Cpu { duration } | Work::Compute { duration, .. } => duration,
            Work::Comm { .. } => panic!("task {t} is a communication task"),
        }
    }

    /// How long CPU task `t` runs in iteration `iter` on node `node`'s
    /// host: [`PerIteration::PerNode`]'s duration there, else
    /// [`Plan::duration`].
    pub fn host_duration(&self, t: TaskId, iter: u32, node: u32) -> SimTime {
        match self.per_iteration.get(&t) {
            Some(PerIteration::PerNode(d)) => d[node as usize],
            _ => self.duration(t, iter),
        }
    }

    /// Whether CPU task `t` runs on a dedicated server machine's host
    /// ([`Plan::on_server_machines`]).
    pub fn on_server_machine(&self, t: TaskId) -> bool {
        self.on_server_machines
            .get(t as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The stage task `t` belongs to (0 with one stage).
    pub fn stage_of(&self, t: TaskId) -> u32 {
        self.stage.get(t as usize).copied().unwrap_or(0)
    }

    /// The compute tasks in stream order (of every stage, in plan order).
    pub fn compute_order(&self) -> Vec<TaskId> {
        (0..self.tasks.len() as TaskId)
            .filter(|&t| matches!(self.tasks[t as usize].work, Work::Compute { .. }))
            .collect()
    }

    /// Each stage's compute tasks in stream order.
    pub fn stage_orders(&self) -> Vec<Vec<TaskId>> {
        let mut orders = vec![Vec::new(); self.stages.max(1) as usize];
        for t in self.compute_order() {
            orders[self.stage_of(t) as usize].push(t);
        }
        orders
    }

    /// For every task, the tasks that depend on it, with the dependency's
    /// `back`: task t's are `edges[start[t]..start[t + 1]]`.
    pub fn dependents(&self) -> Dependents {
        let n = self.tasks.len();
        let mut start = vec![0u32; n + 1];
        for task in &self.tasks {
            for d in &task.deps {
                start[d.task as usize + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut edges = vec![(0, 0); start[n] as usize];
        for (t, task) in self.tasks.iter().enumerate() {
            for d in &task.deps {
                let at = &mut fill[d.task as usize];
                edges[*at as usize] = (t as TaskId, d.back);
                *at += 1;
            }
        }
        Dependents { start, edges }
    }

    /// The invariants a linear pass can check: dependencies name existing
    /// tasks, go back at most one iteration (compute tasks only), and a
    /// compute task's dependencies on compute tasks of its own iteration
    /// come earlier in stream order; channels exist and have distinct
    /// names.
    ///
    /// # Panics
    /// With a message naming the task, if one does not hold.
    pub fn check_links(&self) {
        let n = self.tasks.len();
        for (t, task) in self.tasks.iter().enumerate() {
            for d in &task.deps {
                assert!((d.task as usize) < n, "task {t}: unknown dependency");
                assert!(d.back <= 1, "task {t}: depends {} iterations back", d.back);
                assert!(
                    d.back == 0 || matches!(task.work, Work::Compute { .. }),
                    "task {t}: only compute tasks wait on the previous iteration"
                );
                let on = &self.tasks[d.task as usize];
                if matches!(task.work, Work::Compute { .. })
                    && matches!(on.work, Work::Compute { .. })
                {
                    // a stream waits on its own stage's compute only (by
                    // stream order); across stages through a transfer
                    assert_eq!(
                        self.stage_of(t as TaskId),
                        self.stage_of(d.task),
                        "task {t} waits on compute task {} of another stage",
                        d.task
                    );
                }
                if d.back == 0
                    && matches!(task.work, Work::Compute { .. })
                    && matches!(on.work, Work::Compute { .. })
                {
                    assert!(
                        (d.task as usize) < t,
                        "task {t} depends on task {}, later in stream order",
                        d.task
                    );
                }
            }
            if let Work::Comm { channel, .. } = task.work {
                assert!(
                    (channel as usize) < self.channels.len(),
                    "task {t}: unknown channel"
                );
            }
        }
        assert!(
            self.stage.is_empty() || self.stage.len() == n,
            "a stage for every task, or none"
        );
        assert!(
            self.on_server_machines.is_empty() || self.on_server_machines.len() == n,
            "a host for every task, or none"
        );
        for (t, task) in self.tasks.iter().enumerate() {
            assert!(
                !self.on_server_machine(t as TaskId) || matches!(task.work, Work::Cpu { .. }),
                "task {t}: only CPU tasks run on server machines"
            );
        }
        assert!(
            self.stage.iter().all(|&s| s < self.stages.max(1)),
            "a task of a stage past the plan's {}",
            self.stages
        );
        for (i, c) in self.channels.iter().enumerate() {
            assert!(
                !self.channels[..i].iter().any(|d| d.name == c.name),
                "two channels named `{}`",
                c.name
            );
        }
    }

    /// Checks the plan's invariants (a planner bug otherwise):
    /// [`Plan::check_links`], and that no task waits, through any chain
    /// within one iteration (stream order included), on itself.
    ///
    /// # Panics
    /// With a message naming the task, if one does not hold.
    pub fn check(&self) {
        self.check_links();
        let n = self.tasks.len();
        // no cycle within an iteration: Kahn's algorithm over the
        // same-iteration edges plus stream order
        let mut indeg = vec![0u32; n];
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
        for order in self.stage_orders() {
            for w in order.windows(2) {
                edges[w[0] as usize].push(w[1] as usize);
                indeg[w[1] as usize] += 1;
            }
        }
        for (t, task) in self.tasks.iter().enumerate() {
            for d in task.deps.iter().filter(|d| d.back == 0) {
                edges[d.task as usize].push(t);
                indeg[t] += 1;
            }
        }
        let mut stack: Vec<usize> = (0..n).filter(|&t| indeg[t] == 0).collect();
        let mut seen = 0;
        while let Some(t) = stack.pop() {
            seen += 1;
            for &u in &edges[t] {
                indeg[u] -= 1;
                if indeg[u] == 0 {
                    stack.push(u);
                }
            }
        }
        assert_eq!(seen, n, "the plan waits on itself within an iteration");
    }
}
