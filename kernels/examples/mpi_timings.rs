//! Times MPI collectives across the ranks of `mpirun` and prints, on rank 0,
//! one line per timing: `op size_bytes time_s ranks`.
//!
//! ```text
//! cargo build --release -p kernels --features mpi --examples
//! mpirun --allow-run-as-root --oversubscribe -np 4 \
//!     --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4 \
//!     target/release/examples/mpi_timings [REPEATS]
//! ```
//!
//! Sizes run from 4 KiB to 4 MiB by factors of 4; `REPEATS` (default 20) is
//! the number of timed repetitions per point. The API is the same with and
//! without the `mpi` feature, so this example needs no `cfg`: a build without
//! it prints the backend's own "not enabled in this build" message and exits
//! with status 1.

use std::process::ExitCode;

const SIZES: [u64; 6] = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20];

fn main() -> ExitCode {
    let repeats = match std::env::args().nth(1).map(|s| s.parse::<u32>()) {
        None => 20,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: mpi_timings [REPEATS]  (REPEATS: a positive integer)");
            return ExitCode::from(2);
        }
    };
    match kernels::mpi::measure(&kernels::mpi::OPS, &SIZES, repeats) {
        Ok(run) => {
            if run.rank == 0 {
                eprintln!(
                    "mpi_timings: {} ranks, rank 0 on {}, {repeats} repeats",
                    run.size, run.processor
                );
                for t in &run.timings {
                    println!("{} {} {:.3e} {}", t.op, t.size_bytes, t.time_s, t.ranks);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mpi_timings: {e}");
            ExitCode::FAILURE
        }
    }
}
