//! Fuzzing the log parsers: mutated real logs (every fixture under
//! `tests/fixtures/nccl-tests` and `tests/fixtures/osu`) must parse or be
//! refused, never panic, and every refusal must name a line of the input
//! and quote it.
//!
//! The normal test run tries a few thousand inputs. The million-input run
//! (docs/calibration.md, "Logs as users have them"):
//!
//! ```text
//! DTSIM_FUZZ_CASES=1000000 cargo test --release -p calibration --test fuzz_logs -- --nocapture
//! ```
//!
//! Inputs are drawn from a seeded generator (DTSIM_FUZZ_SEED, default 1),
//! so a failure is reproduced by its case number, which the failure
//! prints with the input.

use calibration::logs::{Log, parse_text};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::path::Path;

/// Every fixture log, with its file name (which may name the collective).
fn seeds() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut out = Vec::new();
    for dir in ["nccl-tests", "osu"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&f).unwrap()));
        }
    }
    assert!(out.len() >= 10, "the fixture logs are the seeds");
    out
}

/// Fields that have broken number parsers before.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "-0",
    "1e400",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "N/A",
    "",
    "18446744073709551616",
    "4294967296",
    "1.",
    ".5",
    "0x10",
    "1,5",
    "\u{e9}",
    "float",
    "sum",
    "#wrong",
    "(us)",
];

/// Lines real runs interleave with the benchmark's, and garbage.
const LINES: &[&str] = &[
    "[node:123] 15 more processes have sent help message help-mpi-btl-openib.txt / no active ports found",
    "[node:123] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages",
    "srun: error: node7: task 3: Exited with exit code 1",
    "node:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 4 - Init COMPLETE",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 0.507636",
    "# Avg bus bandwidth    : -3",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "# OSU MPI Latency Test v7.1",
    "# Size          Latency (us)",
    "# Collective test starting: all_reduce_perf",
    "#  Rank  0 Group  0 Pid 1 on n device  0 [0x00] X",
    "0: ",
    "[1,0]<stdout>:",
    "          8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0",
    "1048576 1.5",
    "\u{feff}",
];

fn pick<'a, T>(rng: &mut Xoshiro256PlusPlus, v: &'a [T]) -> &'a T {
    &v[rng.random_range(0..v.len())]
}

/// One mutation of `text`: a field, a line, a prefix or a character.
fn mutate(rng: &mut Xoshiro256PlusPlus, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let i = rng.random_range(0..n);
    match rng.random_range(0..10) {
        // a field replaced
        0..=2 => {
            let mut f: Vec<String> = lines[i].split_whitespace().map(str::to_string).collect();
            if !f.is_empty() {
                let j = rng.random_range(0..f.len());
                f[j] = pick(rng, VALUES).to_string();
                lines[i] = f.join("  ");
            }
        }
        // a line deleted, duplicated, swapped or inserted
        3 => {
            lines.remove(i);
        }
        4 => {
            let l = lines[i].clone();
            lines.insert(rng.random_range(0..=n), l);
        }
        5 => lines.swap(i, rng.random_range(0..n)),
        6 => lines.insert(rng.random_range(0..=n), pick(rng, LINES).to_string()),
        // a launcher prefix
        7 => {
            lines[i] = format!(
                "{}{}",
                pick(rng, &["0: ", "[1,0]<stdout>:", "[0,1]<stderr>: ", " 12: "]),
                lines[i]
            )
        }
        // the file cut mid-line
        8 => {
            let cut = rng.random_range(0..=lines[i].len());
            let cut = (0..=cut)
                .rev()
                .find(|&c| lines[i].is_char_boundary(c))
                .unwrap_or(0);
            lines[i].truncate(cut);
            lines.truncate(i + 1);
        }
        // a character removed, inserted or changed
        _ => {
            let mut c: Vec<char> = lines[i].chars().collect();
            let j = rng.random_range(0..=c.len());
            let any = ['#', ' ', '0', '9', '.', '-', 'e', ':', '[', '\t', '\u{e9}'];
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

/// What a parse must give: rows that are numbers a model can use, or a
/// refusal that names a line of the input and quotes it.
fn check(case: u64, text: &str, got: &Result<Vec<Log>, calibration::logs::ParseError>) {
    match got {
        Ok(logs) => {
            for log in logs {
                assert!(
                    !log.rows.is_empty(),
                    "case {case}: a log without rows\n{text}"
                );
                for r in &log.rows {
                    assert!(
                        r.time_s.is_finite() && r.time_s >= 0.0,
                        "case {case}: a time of {} s\n{text}",
                        r.time_s
                    );
                }
                assert!(log.ranks != Some(0), "case {case}: 0 ranks\n{text}");
            }
        }
        Err(e) => {
            let lines = text.lines().count().max(1);
            assert!(
                e.line() >= 1 && e.line() <= lines + 1,
                "case {case}: line {} of {lines}: {e}\n{text}",
                e.line()
            );
            assert!(!e.to_string().is_empty());
        }
    }
}

#[test]
fn the_log_parsers_never_panic() {
    let cases: u64 = std::env::var("DTSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            3_000
        } else {
            50_000
        });
    let seed: u64 = std::env::var("DTSIM_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let seeds = seeds();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut parsed, mut refused) = (0u64, 0u64);
    let start = std::time::Instant::now();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..cases {
        let (name, text) = pick(&mut rng, &seeds);
        let mut t = text.clone();
        for _ in 0..rng.random_range(1..5) {
            t = mutate(&mut rng, &t);
        }
        // with and without the file name (which may name the collective)
        let name = rng.random_bool(0.5).then_some(name.as_str());
        match std::panic::catch_unwind(|| parse_text(&t, name)) {
            Ok(got) => {
                check(case, &t, &got);
                if got.is_ok() {
                    parsed += 1;
                } else {
                    refused += 1;
                }
            }
            Err(_) => {
                let _ = std::panic::take_hook();
                panic!("case {case} (seed {seed}) panicked on:\n{t}");
            }
        }
    }
    let _ = std::panic::take_hook();
    eprintln!(
        "fuzz: {cases} logs (seed {seed}): {parsed} parsed, {refused} refused, none panicked, in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert_eq!(parsed + refused, cases);
    assert!(parsed > 0 && refused > 0, "the inputs exercise both paths");
}
