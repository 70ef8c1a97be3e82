//! Channels: which ready pieces go on the wire next, and fused how.
//!
//! A channel is one queue with one message on the wire at a time, as one
//! NCCL stream or one PS communication thread is. When a communication
//! task is ready (on every rank), its payload joins the queue:
//!
//! * `fifo`: in the order tasks became ready (wait-free backpropagation);
//! * `priority`: lowest (iteration, task priority) first, tensors cut into
//!   `partition`-byte pieces so that a long transfer can be overtaken
//!   (ByteScheduler, P3);
//! * fusion: whenever the channel frees up, the ready pieces at the head of
//!   the queue are fused into one message of at most `fusion` bytes (at
//!   least one piece), as Horovod's fusion buffer does, without its cycle
//!   timer. Only pieces of the same collective fuse, and a payload that
//!   differs per rank is never cut or fused.

use super::task::{ChannelSpec, TaskId};
use crate::collective::Collective;
use crate::strategy::Schedule;
use std::collections::BTreeSet;

/// A piece of a communication task, waiting for or on the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Piece {
    /// Scheduling key: (arrival, 0, 0) for FIFO, (iteration, priority,
    /// index) for priority.
    key: (u64, u64, u64),
    /// Iteration of its task.
    pub iter: u32,
    /// Its task.
    pub task: TaskId,
    /// Bytes (for a per-rank payload, its [`crate::collective::Payload::bytes`]).
    pub bytes: u64,
    /// Index of the collective it belongs to in the channel's list, for
    /// fusion; `None` for payloads that never fuse.
    class: Option<u32>,
}

/// A channel's queue.
#[derive(Debug, Clone)]
pub struct Channel {
    spec: ChannelSpec,
    ready: BTreeSet<Piece>,
    classes: Vec<Collective>,
    seq: u64,
    /// Whether a message is on the wire.
    pub busy: bool,
}

impl Channel {
    /// An empty, idle channel.
    pub fn new(spec: ChannelSpec) -> Channel {
        Channel {
            spec,
            ready: BTreeSet::new(),
            classes: Vec::new(),
            seq: 0,
            busy: false,
        }
    }

    /// The channel's description.
    pub fn spec(&self) -> &ChannelSpec {
        &self.spec
    }

    /// Queues a ready task's payload of `bytes`; returns the number of
    /// pieces it was cut into. `collective` is `None` for a payload that
    /// may not be cut or fused.
    pub fn enqueue(
        &mut self,
        iter: u32,
        task: TaskId,
        priority: u64,
        bytes: u64,
        collective: Option<Collective>,
    ) -> u32 {
        let part = match (self.spec.schedule, collective) {
            (Schedule::Priority, Some(_)) if self.spec.partition > 0 => self.spec.partition,
            _ => bytes,
        };
        let class = collective.map(|c| match self.classes.iter().position(|&k| k == c) {
            Some(i) => i as u32,
            None => {
                self.classes.push(c);
                (self.classes.len() - 1) as u32
            }
        });
        let n = if bytes == 0 { 1 } else { bytes.div_ceil(part) };
        for i in 0..n {
            let key = match self.spec.schedule {
                Schedule::Fifo => (self.seq, 0, 0),
                Schedule::Priority => (iter as u64, priority, i),
            };
            self.seq += 1;
            self.ready.insert(Piece {
                key,
                iter,
                task,
                bytes: (bytes - i * part).min(part),
                class,
            });
        }
        n as u32
    }

    /// If the channel is idle and has ready pieces, takes the next message
    /// (the head piece and the pieces behind it that fuse with it) into
    /// `out` and marks the channel busy.
    pub fn next_message(&mut self, out: &mut Vec<Piece>) -> bool {
        out.clear();
        if self.busy {
            return false;
        }
        let Some(head) = self.ready.pop_first() else {
            return false;
        };
        let mut total = head.bytes;
        out.push(head);
        if head.class.is_some() {
            while let Some(&p) = self.ready.first() {
                if p.class != head.class || total + p.bytes > self.spec.fusion {
                    break;
                }
                self.ready.pop_first();
                total += p.bytes;
                out.push(p);
            }
        }
        self.busy = true;
        true
    }
}
