//! Fuzzing the scenario reader: mutated example scenarios and random TOML
//! must be read or refused, never panic, and every refusal must be a
//! located [`ScenarioError`] (which the command line turns into exit
//! code 2).
//!
//! The normal test run tries a few thousand inputs. The million-input run
//! (docs/architecture.md, "Fuzzing the scenario reader"):
//!
//! ```text
//! DTSIM_FUZZ_CASES=1000000 cargo test --release -p sim --test fuzz -- --nocapture
//! ```
//!
//! Inputs are drawn from a seeded generator (DTSIM_FUZZ_SEED, default 1),
//! so a failure is reproduced by its case number, which the failure
//! prints with the input.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use sim::scenario::{ScenarioError, open_str_in};
use std::path::Path;

/// Every scenario file of the repository (`scenarios/` and its folders,
/// in name order), the seeds of the mutations.
fn seeds() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios"),
        &mut files,
    );
    let out: Vec<String> = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(out.len() >= 5, "the example scenarios are the seeds");
    out
}

/// Keys scenarios use, for key swaps and random tables.
const KEYS: &[&str] = &[
    "name",
    "seed",
    "iterations",
    "warmup_iterations",
    "nodes",
    "gpus_per_node",
    "network",
    "intra",
    "bandwidth",
    "latency",
    "nics_per_node",
    "oversubscription",
    "model",
    "placement",
    "preset",
    "batch_per_gpu",
    "gpu",
    "compute_jitter",
    "layers",
    "params",
    "forward",
    "backward",
    "dense",
    "allreduce",
    "schedule",
    "fusion",
    "partition",
    "ps_servers",
    "local_aggregation",
    "density",
    "dct_sparsity",
    "dct_lifespan",
    "kernel_profile",
    "mp_stages",
    "mp_sparsity",
    "mp_microbatches",
    "mp_splits",
    "sweep",
    "cluster",
    "strategy",
];

/// Values that have broken parsers before: bounds, signs, types, units.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "4.5",
    "1e9",
    "1.3e9",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "4294967296",
    "1048577",
    "\"\"",
    "\"x\"",
    "\"64MiB\"",
    "\"1e3Bps\"",
    "\"0Gbps\"",
    "\"-1us\"",
    "\"1e30s\"",
    "\"ring\"",
    "\"topk\"",
    "\"gtopk\"",
    "\"dct\"",
    "\"xeon-18c\"",
    "\"priority\"",
    "\"eth-10g\"",
    "\"profile.toml\"",
    "\"../x.toml\"",
    "true",
    "[]",
    "[1, 2]",
    "[[1]]",
    "{}",
    "{ a = 1 }",
    "1979-05-27T07:32:00Z",
];

fn pick<'a, T>(rng: &mut Xoshiro256PlusPlus, v: &'a [T]) -> &'a T {
    &v[rng.random_range(0..v.len())]
}

/// One mutation of `text`: characters, lines, values or keys.
fn mutate(rng: &mut Xoshiro256PlusPlus, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let i = rng.random_range(0..n);
    match rng.random_range(0..9) {
        // a value replaced
        0..=2 => {
            if let Some((k, _)) = lines[i].split_once('=') {
                lines[i] = format!("{k}= {}", pick(rng, VALUES));
            }
        }
        // a key renamed (a typo, another key)
        3 => {
            if let Some((k, v)) = lines[i].split_once('=') {
                let key = if rng.random_bool(0.5) {
                    pick(rng, KEYS).to_string()
                } else {
                    let mut k: Vec<char> = k.trim().chars().collect();
                    if !k.is_empty() {
                        let j = rng.random_range(0..k.len());
                        k.remove(j);
                    }
                    k.into_iter().collect()
                };
                lines[i] = format!("{key} ={v}");
            }
        }
        // a line deleted, duplicated or swapped
        4 => {
            lines.remove(i);
        }
        5 => {
            let l = lines[i].clone();
            lines.insert(rng.random_range(0..=n), l);
        }
        6 => lines.swap(i, rng.random_range(0..n)),
        // a character removed, inserted or changed
        _ => {
            let mut c: Vec<char> = lines[i].chars().collect();
            let j = rng.random_range(0..=c.len());
            let any = [
                '[', ']', '"', '=', '.', ',', '#', '\\', '0', 'e', '-', ' ', '\u{e9}',
            ];
            match rng.random_range(0..3) {
                0 if j < c.len() => {
                    c.remove(j);
                }
                1 if j < c.len() => c[j] = *pick(rng, &any),
                _ => c.insert(j, *pick(rng, &any)),
            }
            lines[i] = c.into_iter().collect();
        }
    }
    lines.join("\n")
}

/// A random document: tables and keys from [`KEYS`], values from
/// [`VALUES`], and now and then a sweep.
fn random_toml(rng: &mut Xoshiro256PlusPlus) -> String {
    let mut out = String::new();
    for _ in 0..rng.random_range(0..4) {
        out.push_str(&format!("{} = {}\n", pick(rng, KEYS), pick(rng, VALUES)));
    }
    for _ in 0..rng.random_range(0..5) {
        let table = pick(
            rng,
            &[
                "cluster",
                "model",
                "strategy",
                "sweep",
                "[model.layers]",
                "x",
            ],
        );
        // "[model.layers]" becomes an array of tables
        out.push_str(&format!("[{table}]\n"));
        for _ in 0..rng.random_range(0..6) {
            let key = pick(rng, KEYS);
            if *table == "sweep" {
                out.push_str(&format!(
                    "\"{}.{key}\" = [{}, {}]\n",
                    pick(rng, &["cluster", "model", "strategy"]),
                    pick(rng, VALUES),
                    pick(rng, VALUES)
                ));
            } else {
                out.push_str(&format!("{key} = {}\n", pick(rng, VALUES)));
            }
        }
    }
    out
}

/// Reads `text` as a scenario and builds its first points: `Ok` or a
/// located refusal. Large sweeps are sampled (the first 8 points), as
/// building a billion points is not the reader's test.
fn read(text: &str) -> Result<(), ScenarioError> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let grid = open_str_in(text, "f.toml", "f", Some(dir))?;
    for i in 0..grid.len().min(8) {
        grid.point(i)?;
    }
    Ok(())
}

#[test]
fn the_scenario_reader_never_panics() {
    let cases: u64 = std::env::var("DTSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            4_000
        } else {
            50_000
        });
    let seed: u64 = std::env::var("DTSIM_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let seeds = seeds();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut read_ok, mut refused) = (0u64, 0u64);
    let start = std::time::Instant::now();
    // the default hook would print every caught panic
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..cases {
        let text = if case % 4 == 3 {
            random_toml(&mut rng)
        } else {
            let mut t = pick(&mut rng, &seeds).clone();
            for _ in 0..rng.random_range(1..4) {
                t = mutate(&mut rng, &t);
            }
            t
        };
        match std::panic::catch_unwind(|| read(&text)) {
            Ok(Ok(())) => read_ok += 1,
            Ok(Err(e)) => {
                assert!(
                    e.file == "f.toml" && !e.message.is_empty(),
                    "case {case}: a refusal that does not say where or what: {e:?}\n{text}"
                );
                assert!(
                    !e.message.contains("Raw") && !e.message.contains("i64"),
                    "case {case}: an internal type name reached the user: {e}\n{text}"
                );
                refused += 1;
            }
            Err(_) => {
                let _ = std::panic::take_hook();
                panic!("case {case} (seed {seed}) panicked on:\n{text}");
            }
        }
    }
    let _ = std::panic::take_hook();
    eprintln!(
        "fuzz: {cases} inputs (seed {seed}): {read_ok} read, {refused} refused, none panicked, in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert_eq!(read_ok + refused, cases);
    assert!(read_ok > 0 && refused > 0, "the inputs exercise both paths");
}
