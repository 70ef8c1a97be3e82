//! What the engine executed, span by span, for traces and timeline plots.
//!
//! Recorded as the engine runs (never recomputed from the configuration):
//! every compute task on every simulated GPU, every wait of a compute
//! stream on a dependency, and every message on every channel. When the
//! engine follows one representative GPU ([`Timeline::gpus`] = 1), its
//! spans stand for every GPU.

use super::channel::Slice;
use super::task::{ChannelId, ComputeKind, TaskId};
use crate::collective::Collective;
use crate::time::SimTime;

/// What a timeline needs to know of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskInfo {
    /// Its name ("fwd conv1", "fc8 parameters").
    pub name: String,
    /// The layer it belongs to, if any.
    pub layer: Option<u32>,
    /// For compute tasks, what it is.
    pub kind: Option<ComputeKind>,
}

/// One compute task on one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeSpan {
    /// The simulated GPU (0 for the representative).
    pub gpu: u32,
    /// Iteration.
    pub iter: u32,
    /// The task ([`Timeline::tasks`]).
    pub task: TaskId,
    /// Forward, backward or an inserted kernel.
    pub kind: ComputeKind,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
}

impl ComputeSpan {
    /// Whether it is a forward pass.
    pub fn forward(&self) -> bool {
        self.kind == ComputeKind::Forward
    }
}

/// One message on a channel: a collective over all GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct CommSpan {
    /// The channel.
    pub channel: ChannelId,
    /// The collective.
    pub collective: Collective,
    /// Start.
    pub start: SimTime,
    /// End (when its last participant finished).
    pub end: SimTime,
    /// Bytes of the (fused) message, in the sense of its operation.
    pub bytes: u64,
    /// Bytes each GPU sends for it (every endpoint's bytes over the GPUs).
    pub sent_per_gpu: f64,
    /// Whether its payload is the same on every rank.
    pub uniform: bool,
    /// The tasks' pieces it carries, by task.
    pub pieces: Vec<Slice>,
}

/// A compute stream waiting for a dependency of its next task.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    /// The simulated GPU.
    pub gpu: u32,
    /// Iteration of the waiting task.
    pub iter: u32,
    /// The waiting compute task.
    pub task: TaskId,
    /// The dependency it was waiting for when the wait began.
    pub on: TaskId,
    /// Start of the wait.
    pub start: SimTime,
    /// End of the wait.
    pub end: SimTime,
}

/// What happened when.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// GPUs simulated: 1 when one representative stands for all.
    pub gpus: u32,
    /// The plan's tasks, by [`TaskId`].
    pub tasks: Vec<TaskInfo>,
    /// The plan's channel names, by [`ChannelId`].
    pub channels: Vec<String>,
    /// Compute tasks, in start order.
    pub compute: Vec<ComputeSpan>,
    /// Messages, in start order.
    pub comm: Vec<CommSpan>,
    /// Waits of compute streams.
    pub stalls: Vec<Stall>,
    /// Start of each iteration (when the last GPU started it).
    pub iteration_starts: Vec<SimTime>,
}

impl Timeline {
    /// The layer of a task, if any.
    pub fn layer(&self, task: TaskId) -> Option<u32> {
        self.tasks.get(task as usize).and_then(|t| t.layer)
    }
}
