//! The MPI backend proper, over the `mpi` crate (rsmpi).
//!
//! Each operation is a [`Bench`]: buffers sized for one message, one call of
//! the collective, and a check of its result. [`warm_up_and_check`], [`time_once`] and
//! [`slowest_rank`] run any of them the same way (warm-up, one check agreed
//! by all ranks, timed repetitions in rounds over the sizes), so the timing
//! method is written once.

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::{MpiRun, Op};
use crate::{BackendError, CollectiveTiming};

/// Untimed calls before the check and the timed repetitions: the first call
/// pays for connection set-up and page faults on fresh buffers.
const WARMUP: u32 = 3;

/// Runs [`super::measure`] after its arguments have been checked.
pub(super) fn measure(ops: &[Op], sizes: &[u64], repeats: u32) -> Result<MpiRun, BackendError> {
    // `initialize` returns `None` if MPI is initialised, and `MPI_Initialized`
    // stays true after `MPI_Finalize`, so this also catches a second call.
    let universe = mpi::initialize().ok_or_else(|| {
        BackendError::Failed(
            "MPI is already initialised in this process: kernels::mpi::measure initialises \
             and finalises MPI itself, so it can run once per process"
                .into(),
        )
    })?;
    let world = universe.world();
    let rank = world.rank();
    let ranks = world.size();
    if ranks < 2 && ops.contains(&Op::PingPong) {
        return Err(BackendError::Failed(
            "MPI ping-pong needs at least 2 ranks, but this world has 1; \
             start it with `mpirun -np 2` or more"
                .into(),
        ));
    }
    let processor = mpi::environment::processor_name()
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    let library = mpi::environment::library_version()
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    // the C string's terminator comes with it
    let library = library
        .lines()
        .next()
        .unwrap_or_default()
        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .to_string();

    let mut timings = Vec::new();
    for &op in ops {
        // Every size of the operation is warmed up and checked, then timed
        // in rounds, one call of each size a round: a slow spell of the
        // cluster (another job, the host's other ranks, a retransmission)
        // then lands on one repetition of several sizes, which the median
        // drops, rather than on every repetition of one size.
        let mut benches: Vec<Bench> = sizes
            .iter()
            .map(|&size| Bench::new(op, size, rank, ranks))
            .collect();
        for bench in &mut benches {
            warm_up_and_check(&world, bench)?;
        }
        let mut local: Vec<Vec<f64>> = (0..benches.len())
            .map(|_| Vec::with_capacity(repeats as usize))
            .collect();
        for _ in 0..repeats {
            for (bench, times) in benches.iter_mut().zip(&mut local) {
                times.push(time_once(&world, bench));
            }
        }
        for (bench, local) in benches.iter().zip(local) {
            if let Some(mut times) = slowest_rank(&world, bench, local) {
                timings.push(CollectiveTiming {
                    op: op.name().to_string(),
                    size_bytes: bench.size_bytes(),
                    time_s: median(&mut times),
                    ranks: bench.ranks() as u32,
                });
            }
        }
    }
    Ok(MpiRun {
        rank: rank as u32,
        size: ranks as u32,
        processor,
        library,
        timings,
    })
}

/// Warms `bench` up and checks its result on every rank.
fn warm_up_and_check(world: &SimpleCommunicator, bench: &mut Bench) -> Result<(), BackendError> {
    for i in 0..WARMUP {
        bench.step(world);
        if i == 0 {
            // Every rank learns the total, so all return the same error and
            // none is left waiting in the next collective.
            let local = bench.wrong_elements();
            let mut total = 0u64;
            world.all_reduce_into(&local, &mut total, SystemOperation::sum());
            if total > 0 {
                return Err(BackendError::Failed(format!(
                    "MPI {} of {} bytes across {} ranks returned {total} wrong element(s) \
                     ({local} on rank {}); the MPI installation is broken",
                    bench.op.name(),
                    bench.size_bytes(),
                    bench.ranks(),
                    world.rank()
                )));
            }
        }
    }

    Ok(())
}

/// One timed call of `bench`, on this rank: `barrier; t0; op; t1`.
fn time_once(world: &SimpleCommunicator, bench: &mut Bench) -> f64 {
    world.barrier();
    let t0 = mpi::time();
    bench.step(world);
    mpi::time() - t0
}

/// Each repetition's time as the maximum over ranks of this rank's `local`
/// times, on rank 0 only.
fn slowest_rank(
    world: &SimpleCommunicator,
    bench: &Bench,
    mut local: Vec<f64>,
) -> Option<Vec<f64>> {
    if bench.op == Op::PingPong {
        // Only rank 0 timed a whole round trip; rank 1's time starts at its
        // own barrier exit, which may be earlier, so it must not win the max.
        for t in &mut local {
            *t = if world.rank() == 0 { *t / 2.0 } else { 0.0 };
        }
    }

    let root = world.process_at_rank(0);
    if world.rank() == 0 {
        let mut max = vec![0.0f64; local.len()];
        root.reduce_into_root(&local[..], &mut max[..], SystemOperation::max());
        Some(max)
    } else {
        root.reduce_into(&local[..], SystemOperation::max());
        None
    }
}

/// Median of `xs` (mean of the middle two for an even count); `xs` is
/// sorted in place and must not be empty.
fn median(xs: &mut [f64]) -> f64 {
    assert!(!xs.is_empty(), "median of no repetitions");
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    }
}

/// Buffers for one operation at one size, and what this rank expects to
/// find in them after a call.
struct Bench {
    op: Op,
    rank: i32,
    ranks: i32,
    /// Elements each rank contributes: the whole buffer for ping-pong,
    /// AllReduce and Broadcast; one block for AllGather and AlltoAll.
    count: usize,
    send: Vec<f32>,
    recv: Vec<f32>,
}

/// Marks a receive buffer as not yet written; no check pattern uses it.
const UNSET: f32 = -1.0;

/// Values every pattern is built from: small integers, exact in `f32` and in
/// sums of up to 2^21 ranks.
fn pattern(i: usize) -> f32 {
    (i % 8) as f32
}

/// Element `j` of the AlltoAll block that rank `from` sends to rank `to`:
/// even slots say who sent it, odd slots whom it was for, so a misrouted
/// block shows.
fn alltoall_value(from: usize, to: usize, j: usize) -> f32 {
    match j % 2 {
        0 => from as f32,
        _ => to as f32,
    }
}

impl Bench {
    /// Allocates and fills the buffers for `op` at `size` bytes (nccl-tests'
    /// meaning, rounded down to whole `f32` per rank, at least one).
    fn new(op: Op, size: u64, rank: i32, ranks: i32) -> Bench {
        let elements = ((size / 4) as usize).max(1);
        let p = ranks as usize;
        let r = rank as usize;
        let (count, send, recv) = match op {
            Op::PingPong => {
                let send = if rank == 0 {
                    (0..elements).map(pattern).collect()
                } else {
                    Vec::new()
                };
                let recv = if rank <= 1 {
                    vec![UNSET; elements]
                } else {
                    Vec::new()
                };
                (elements, send, recv)
            }
            Op::AllReduce => {
                let send = (0..elements).map(|i| pattern(i + r)).collect();
                (elements, send, vec![UNSET; elements])
            }
            Op::Broadcast => {
                // Rank 0 broadcasts from `recv` in place; the others start
                // from UNSET and must end with rank 0's pattern.
                let buf = if rank == 0 {
                    (0..elements).map(pattern).collect()
                } else {
                    vec![UNSET; elements]
                };
                (elements, Vec::new(), buf)
            }
            Op::AllGather => {
                let count = (elements / p).max(1);
                let send = (0..count).map(|j| rank as f32 + pattern(j)).collect();
                (count, send, vec![UNSET; count * p])
            }
            Op::AllToAll => {
                let count = (elements / p).max(1);
                let send = (0..count * p)
                    .map(|i| alltoall_value(r, i / count, i % count))
                    .collect();
                (count, send, vec![UNSET; count * p])
            }
        };
        Bench {
            op,
            rank,
            ranks,
            count,
            send,
            recv,
        }
    }

    /// Bytes one call moves, in nccl-tests' meaning (see the module docs).
    fn size_bytes(&self) -> u64 {
        let per_rank = self.count as u64 * 4;
        match self.op {
            Op::PingPong | Op::AllReduce | Op::Broadcast => per_rank,
            Op::AllGather | Op::AllToAll => per_rank * self.ranks as u64,
        }
    }

    /// Ranks taking part in the operation.
    fn ranks(&self) -> i32 {
        match self.op {
            Op::PingPong => 2,
            _ => self.ranks,
        }
    }

    /// One call of the operation, on this rank.
    fn step(&mut self, world: &SimpleCommunicator) {
        match self.op {
            Op::PingPong => match self.rank {
                0 => {
                    world.process_at_rank(1).send(&self.send[..]);
                    world.process_at_rank(1).receive_into(&mut self.recv[..]);
                }
                1 => {
                    world.process_at_rank(0).receive_into(&mut self.recv[..]);
                    world.process_at_rank(0).send(&self.recv[..]);
                }
                _ => {}
            },
            Op::AllReduce => {
                world.all_reduce_into(&self.send[..], &mut self.recv[..], SystemOperation::sum())
            }
            Op::Broadcast => world.process_at_rank(0).broadcast_into(&mut self.recv[..]),
            Op::AllGather => world.all_gather_into(&self.send[..], &mut self.recv[..]),
            Op::AllToAll => world.all_to_all_into(&self.send[..], &mut self.recv[..]),
        }
    }

    /// Elements of this rank's result that differ from what the operation
    /// must produce.
    fn wrong_elements(&self) -> u64 {
        let p = self.ranks as usize;
        let me = self.rank as usize;
        let c = self.count;
        let expected = |i: usize| -> f32 {
            match self.op {
                // Rank 1 echoes what it got, so both see rank 0's pattern.
                Op::PingPong | Op::Broadcast => pattern(i),
                Op::AllReduce => (0..p).map(|r| pattern(i + r)).sum(),
                Op::AllGather => (i / c) as f32 + pattern(i % c),
                Op::AllToAll => alltoall_value(i / c, me, i % c),
            }
        };
        match self.op {
            // AllReduce sums repeat with period 8: check the sums once each
            // rather than summing over all ranks per element.
            Op::AllReduce => {
                let sums: Vec<f32> = (0..8).map(expected).collect();
                self.recv
                    .iter()
                    .enumerate()
                    .filter(|&(i, &x)| x != sums[i % 8])
                    .count() as u64
            }
            _ => self
                .recv
                .iter()
                .enumerate()
                .filter(|&(i, &x)| x != expected(i))
                .count() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [7.0]), 7.0);
    }

    #[test]
    fn sizes_follow_nccl_tests_and_round_down_to_whole_f32_per_rank() {
        // 4 ranks, 4 KiB: 1024 f32 in all, 256 per rank for the split ops.
        let b = |op| Bench::new(op, 4096, 0, 4);
        assert_eq!(b(Op::AllReduce).size_bytes(), 4096);
        assert_eq!(b(Op::AllGather).count, 256);
        assert_eq!(b(Op::AllGather).size_bytes(), 4096);
        assert_eq!(b(Op::AllToAll).send.len(), 1024);
        // 4 ranks, 10 bytes: rounded up to one f32 per rank.
        assert_eq!(Bench::new(Op::AllGather, 10, 0, 4).size_bytes(), 16);
        assert_eq!(Bench::new(Op::AllReduce, 10, 0, 4).size_bytes(), 8);
        // 3 ranks, 4 KiB: 1024 / 3 = 341 f32 per rank.
        assert_eq!(
            Bench::new(Op::AllToAll, 4096, 0, 3).size_bytes(),
            341 * 3 * 4
        );
        assert_eq!(Bench::new(Op::PingPong, 4096, 5, 8).ranks(), 2);
    }

    #[test]
    fn checks_catch_an_untouched_receive_buffer() {
        for op in [
            Op::PingPong,
            Op::AllReduce,
            Op::Broadcast,
            Op::AllGather,
            Op::AllToAll,
        ] {
            let b = Bench::new(op, 64, 1, 4);
            assert!(b.wrong_elements() > 0, "{op:?}");
        }
    }

    #[test]
    fn checks_pass_on_a_simulated_correct_result() {
        // Fill rank 1's receive buffer with what 4 ranks would produce.
        let (p, me) = (4, 1);
        let mut ar = Bench::new(Op::AllReduce, 256, me, p);
        for (i, x) in ar.recv.iter_mut().enumerate() {
            *x = (0..p as usize).map(|r| pattern(i + r)).sum();
        }
        assert_eq!(ar.wrong_elements(), 0);

        let mut ag = Bench::new(Op::AllGather, 256, me, p);
        let blocks: Vec<Vec<f32>> = (0..p)
            .map(|r| Bench::new(Op::AllGather, 256, r, p).send)
            .collect();
        ag.recv = blocks.concat();
        assert_eq!(ag.wrong_elements(), 0);

        let mut aa = Bench::new(Op::AllToAll, 256, me, p);
        let c = aa.count;
        let senders: Vec<Vec<f32>> = (0..p)
            .map(|r| Bench::new(Op::AllToAll, 256, r, p).send)
            .collect();
        aa.recv = (0..p as usize)
            .flat_map(|s| senders[s][me as usize * c..(me as usize + 1) * c].to_vec())
            .collect();
        assert_eq!(aa.wrong_elements(), 0);
    }
}
