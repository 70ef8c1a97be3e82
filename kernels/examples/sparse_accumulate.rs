//! Times a parameter server's work on a sparse gradient, on one core, as
//! a linear accumulator would do it (rows coalesced through a hash map).
//! dtsim charged this (3.0 ns an element at 48 workers) until 2026-11-26;
//! it now charges TensorFlow's own accumulator, which copies the sum so
//! far at every push (`scripts/tf-ps/accumulate_cost.py`,
//! `sim::train::planner::sparse::server_element_s`, docs/models.md §4.2).
//! The example stays as the comparison.
//!
//! ```text
//! cargo run --release -p kernels --example sparse_accumulate [WORKERS]
//! ```
//!
//! A server holds a shard of an embedding table (`ROWS` rows of `DIM`
//! fp32 values, larger than the caches, as a real shard is). Each of
//! `WORKERS` (default 48, Parallax's GPUs) pushes a sparse gradient of
//! `PUSH` rows (uniformly drawn row ids, seeded) with their values. The
//! server aggregates them, coalescing duplicate rows (a map from row to
//! its accumulated slot, then the values added into the slot) and applies SGD to the touched
//! rows of the table. The time over the pushed elements (WORKERS × PUSH ×
//! DIM) is printed in ns per element, the median of 5 runs.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Instant;

const ROWS: usize = 200_000;
const DIM: usize = 512;
const PUSH: usize = 2_000;

fn main() -> ExitCode {
    let workers = match std::env::args().nth(1).map(|s| s.parse::<usize>()) {
        None => 48,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: sparse_accumulate [WORKERS]  (a positive integer)");
            return ExitCode::from(2);
        }
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut table: Vec<f32> = (0..ROWS * DIM).map(|i| (i % 97) as f32 * 1e-3).collect();
    let pushes: Vec<(Vec<u32>, Vec<f32>)> = (0..workers)
        .map(|_| {
            let ids: Vec<u32> = (0..PUSH)
                .map(|_| rng.random_range(0..ROWS as u32))
                .collect();
            let vals: Vec<f32> = (0..PUSH * DIM).map(|_| rng.random::<f32>() - 0.5).collect();
            (ids, vals)
        })
        .collect();
    let mut runs = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        // aggregate: coalesce rows into slots
        let mut slot: HashMap<u32, usize> = HashMap::with_capacity(workers * PUSH);
        let mut acc: Vec<f32> = Vec::with_capacity(workers * PUSH * DIM);
        let mut rows: Vec<u32> = Vec::with_capacity(workers * PUSH);
        for (ids, vals) in &pushes {
            for (i, &id) in ids.iter().enumerate() {
                let v = &vals[i * DIM..(i + 1) * DIM];
                match slot.get(&id) {
                    Some(&s) => {
                        for (a, x) in acc[s * DIM..(s + 1) * DIM].iter_mut().zip(v) {
                            *a += x;
                        }
                    }
                    None => {
                        slot.insert(id, rows.len());
                        rows.push(id);
                        acc.extend_from_slice(v);
                    }
                }
            }
        }
        // apply: SGD on the touched rows
        let lr = 0.1f32 / workers as f32;
        for (s, &id) in rows.iter().enumerate() {
            let row = &mut table[id as usize * DIM..(id as usize + 1) * DIM];
            for (w, a) in row.iter_mut().zip(&acc[s * DIM..(s + 1) * DIM]) {
                *w -= lr * a;
            }
        }
        let dt = t0.elapsed().as_secs_f64();
        std::hint::black_box(&table);
        runs.push(dt / (workers * PUSH * DIM) as f64);
    }
    runs.sort_by(f64::total_cmp);
    println!(
        "workers {workers}, {PUSH} rows x {DIM} values each: {:.3} ns per pushed element (median of 5; min {:.3}, max {:.3})",
        runs[2] * 1e9,
        runs[0] * 1e9,
        runs[4] * 1e9
    );
    ExitCode::SUCCESS
}
