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
//!
//! Under `priority`, tasks of equal (iteration, priority) go whole, one
//! after the other, the lower task id first (their pieces are not
//! interleaved). A task's pieces are thus consecutive in either order, so
//! the queue holds one entry per task (its pieces not yet sent) rather
//! than one per piece: a 400 MB tensor cut into 4 MiB pieces costs one
//! ordered-map entry.

use super::task::{ChannelSpec, TaskId};
use crate::collective::Collective;
use crate::strategy::Schedule;
use std::collections::BTreeMap;

/// Consecutive pieces of one task in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// Iteration of the task.
    pub iter: u32,
    /// The task.
    pub task: TaskId,
    /// How many of its pieces.
    pub pieces: u32,
    /// Their bytes (for a per-rank payload, its
    /// [`crate::collective::Payload::bytes`]).
    pub bytes: u64,
}

/// A task's pieces not yet sent.
#[derive(Debug, Clone, Copy)]
struct Run {
    iter: u32,
    task: TaskId,
    /// Bytes of a full piece.
    part: u64,
    /// Bytes of the whole payload.
    bytes: u64,
    /// Pieces sent so far, and in all.
    next: u32,
    n: u32,
    /// Index of its collective in the channel's list, for fusion; `None`
    /// for a payload that never fuses.
    class: Option<u32>,
}

impl Run {
    /// Bytes of piece `i`: full pieces, the last one the remainder.
    fn piece(&self, i: u32) -> u64 {
        (self.bytes - i as u64 * self.part).min(self.part)
    }
}

/// A channel's queue.
#[derive(Debug, Clone)]
pub struct Channel {
    spec: ChannelSpec,
    /// Ready tasks by scheduling key: (arrival, 0, 0) for FIFO,
    /// (iteration, priority, task) for priority.
    ready: BTreeMap<(u64, u64, u64), Run>,
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
            ready: BTreeMap::new(),
            classes: Vec::new(),
            seq: 0,
            busy: false,
        }
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
        self.enqueue_at(iter, iter, task, priority, bytes, collective)
    }

    /// [`Channel::enqueue`], ordered on a priority channel as a task of
    /// iteration `order` ([`super::task::Task::lead`]).
    pub fn enqueue_at(
        &mut self,
        order: u32,
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
        let class = collective.map(|c| super::intern(&mut self.classes, c) as u32);
        let n = if bytes == 0 { 1 } else { bytes.div_ceil(part) };
        let key = match self.spec.schedule {
            Schedule::Fifo => (self.seq, 0, 0),
            Schedule::Priority => (order as u64, priority, task as u64),
        };
        self.seq += 1;
        self.ready.insert(
            key,
            Run {
                iter,
                task,
                part,
                bytes,
                next: 0,
                n: n as u32,
                class,
            },
        );
        n as u32
    }

    /// If the channel is idle and has ready pieces, takes the next message
    /// into `out` (the head piece and the pieces behind it that fuse with
    /// it, by task) and marks the channel busy.
    pub fn next_message(&mut self, out: &mut Vec<Slice>) -> bool {
        out.clear();
        if self.busy || self.ready.is_empty() {
            return false;
        }
        let mut total = 0u64;
        let mut head_class = None;
        'runs: while let Some(mut entry) = self.ready.first_entry() {
            let run = entry.get_mut();
            if !out.is_empty() && (run.class.is_none() || run.class != head_class) {
                break;
            }
            let mut slice = Slice {
                iter: run.iter,
                task: run.task,
                pieces: 0,
                bytes: 0,
            };
            while run.next < run.n {
                let b = run.piece(run.next);
                let first = out.is_empty() && slice.pieces == 0;
                if !first && total + b > self.spec.fusion {
                    break;
                }
                if first {
                    head_class = run.class;
                }
                total += b;
                slice.pieces += 1;
                slice.bytes += b;
                run.next += 1;
                if run.class.is_none() {
                    break; // never fused
                }
            }
            let done = run.next == run.n;
            if slice.pieces > 0 {
                out.push(slice);
            }
            if !done {
                break 'runs;
            }
            entry.remove();
            if head_class.is_none() {
                break;
            }
        }
        self.busy = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::Op;

    fn channel(schedule: Schedule, fusion: u64, partition: u64) -> Channel {
        Channel::new(ChannelSpec {
            name: "c".into(),
            schedule,
            fusion,
            partition,
        })
    }

    /// FIFO with fusion: whole tensors in arrival order, fused up to the
    /// buffer, a tensor larger than the buffer alone.
    #[test]
    fn fifo_fuses_whole_tensors_in_arrival_order() {
        let ar = Some(Collective::new(Op::AllReduce));
        let mut c = channel(Schedule::Fifo, 100, 10);
        assert_eq!(c.enqueue(0, 5, 5, 40, ar), 1);
        assert_eq!(c.enqueue(0, 3, 3, 50, ar), 1);
        assert_eq!(c.enqueue(0, 1, 1, 30, ar), 1);
        assert_eq!(c.enqueue(0, 0, 0, 500, ar), 1);
        let mut out = Vec::new();
        assert!(c.next_message(&mut out));
        assert_eq!(out.iter().map(|s| s.task).collect::<Vec<_>>(), [5, 3]);
        assert!(!c.next_message(&mut out), "busy");
        c.busy = false;
        assert!(c.next_message(&mut out));
        assert_eq!((out.len(), out[0].task, out[0].bytes), (1, 1, 30));
        c.busy = false;
        assert!(c.next_message(&mut out));
        assert_eq!((out[0].task, out[0].bytes), (0, 500));
    }

    /// Priority: pieces of `partition` bytes, the lowest (iteration,
    /// priority) first, fused across tasks up to the buffer; a per-rank
    /// payload is neither cut nor fused.
    #[test]
    fn priority_cuts_orders_and_fuses_pieces() {
        let ar = Some(Collective::new(Op::AllReduce));
        let mut c = channel(Schedule::Priority, 25, 10);
        assert_eq!(c.enqueue(0, 7, 7, 35, ar), 4); // 10 10 10 5
        assert_eq!(c.enqueue(0, 2, 2, 12, ar), 2); // 10 2
        assert_eq!(c.enqueue(1, 0, 0, 10, ar), 1);
        assert_eq!(c.enqueue(0, 9, 1, 60, None), 1);
        let mut out = Vec::new();
        let mut next = |c: &mut Channel| {
            c.busy = false;
            assert!(c.next_message(&mut out));
            out.iter()
                .map(|s| (s.task, s.pieces, s.bytes))
                .collect::<Vec<_>>()
        };
        // priority 1 (task 9, never fused) first
        assert_eq!(next(&mut c), [(9, 1, 60)]);
        // task 2's 12 bytes, then one 10-byte piece of task 7 (22 ≤ 25)
        assert_eq!(next(&mut c), [(2, 2, 12), (7, 1, 10)]);
        // the rest of task 7 fills the buffer exactly; task 0 does not fit
        assert_eq!(next(&mut c), [(7, 3, 25)]);
        assert_eq!(next(&mut c), [(0, 1, 10)]);
        c.busy = false;
        assert!(!c.next_message(&mut out));
    }

    /// Tasks of equal (iteration, priority) go whole, the lower id first.
    #[test]
    fn equal_priorities_go_whole_by_task_id() {
        let ar = Some(Collective::new(Op::AllReduce));
        let mut c = channel(Schedule::Priority, 15, 10);
        c.enqueue(0, 2, 0, 20, ar);
        c.enqueue(0, 1, 0, 20, ar);
        let mut out = Vec::new();
        let mut sent = Vec::new();
        while {
            c.busy = false;
            c.next_message(&mut out)
        } {
            sent.extend(out.iter().map(|s| s.task));
        }
        assert_eq!(sent, [1, 1, 2, 2]);
    }

    /// A task ordered with the previous iteration (`enqueue_at`) goes
    /// ahead of that iteration's queued pieces on a priority channel, and
    /// keeps its own iteration in the message.
    #[test]
    fn a_leading_task_goes_with_the_previous_iteration() {
        let mut c = Channel::new(ChannelSpec {
            name: "c".into(),
            schedule: Schedule::Priority,
            fusion: 0,
            partition: 0,
        });
        let ar = Some(Collective::new(crate::collective::Op::AllReduce));
        c.enqueue(0, 4, 3, 100, ar);
        c.enqueue(0, 5, 5, 100, ar);
        c.enqueue_at(0, 1, 9, 0, 100, ar);
        let mut out = Vec::new();
        assert!(c.next_message(&mut out));
        assert_eq!((out[0].iter, out[0].task), (1, 9));
        // without the lead it would wait for iteration 0's tasks
        let mut d = Channel::new(c.spec.clone());
        d.enqueue(0, 4, 3, 100, ar);
        d.enqueue(1, 9, 0, 100, ar);
        assert!(d.next_message(&mut out));
        assert_eq!((out[0].iter, out[0].task), (0, 4));
    }
}
