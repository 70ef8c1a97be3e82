//! Every command the documentation tells users to type is run as written.
//!
//! For README.md and each docs/*.md page, every line of a fenced block
//! that starts with `dtsim SUBCOMMAND`, `$ dtsim`, `cargo …` or `mpirun …`
//! (with `\` continuations joined and trailing `# comments` dropped) is a
//! command, and each is classified:
//! * `dtsim …` and `cargo run --release -- …`: run by `sh` in a scratch
//!   directory per page, in document order, where `dtsim` is this build
//!   and the inputs the page names exist (`scenarios/` is the
//!   repository's; log and profile names are real fixtures copied under
//!   those names); it must succeed and write the files it names (`-o`,
//!   `--out`, `--trace`);
//! * a backend this build lacks (`--backend mpi|nccl|cuda`, also under
//!   `mpirun`): it must exit with code 2 and say how to rebuild;
//! * toolchain commands (`cargo test`, `cargo bench`) and the OpenMPI
//!   flags fragment are listed in [`NOT_RUN`] with why; any other line
//!   fails the test until it is classified, so a new page stays covered.
//!
//! Commands in running text (inline code such as `dtsim plot --timeline
//! OUT.json`) are synopses with placeholders: for those, the subcommand
//! must exist and every `--flag` must be one its `--help` lists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SUBCOMMANDS: &[&str] = &[
    "run",
    "sweep",
    "report",
    "plot",
    "collective",
    "calibrate",
    "validate",
];

/// Lines that look like commands and are not run, with why.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "cargo test --workspace",
        "the test suite itself: CI runs it as written",
    ),
    (
        "cargo bench --bench scale",
        "minutes of benchmarks; results are dated in docs/benchmarks.md",
    ),
    (
        "cargo bench --bench engine",
        "minutes of benchmarks; results are dated in docs/benchmarks.md",
    ),
    (
        "mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4 --mca coll_tuned_allgather_algorithm 4 --mca coll_tuned_alltoall_algorithm 2 --mca coll_tuned_bcast_algorithm 6 ...",
        "a fragment: the flags to add to your own mpirun line",
    ),
    (
        "cargo build --release --features mpi",
        "minutes of build with OpenMPI; .ci/run builds it (with cuda) and runs the harness below",
    ),
    (
        "sudo HOSTS=\"4 8\" RATE=100mbit DELAY=50us scripts/emulated-cluster.sh",
        "needs root and network namespaces; .ci/run runs it (3 repeats) where they are allowed",
    ),
];

/// Inputs the pages name, and the real files they are here.
const INPUTS: &[(&str, &str)] = &[
    (
        "all_reduce_perf.log",
        "tests/fixtures/nccl-tests/gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt",
    ),
    (
        "osu_latency.log",
        "tests/fixtures/osu/libfabric_cray_pr859_osu_latency_2node_aries.txt",
    ),
    (
        "osu_bw.log",
        "tests/fixtures/osu/cscs_alps_osu_bw_cpu_internode_slingshot.txt",
    ),
    (
        "osu_allreduce.log",
        "tests/fixtures/osu/nwtnni_collective_osu_allreduce_ring_8node_full.txt",
    ),
    (
        "osu_allgather.log",
        "tests/fixtures/osu/olcf_riker_osu_allgather_4node_16ranks.txt",
    ),
    ("mpi.toml", "tests/fixtures/profiles/mpi-4ranks-ci-vm.toml"),
    (
        "runs.csv",
        "tests/fixtures/training/gtopk-release-resnet20.csv",
    ),
    (
        "big-grid.toml",
        "scenarios/examples/scaling-10gbe-vs-ib.toml",
    ),
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pages: README.md and docs/*.md, in name order.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, repo().join("README.md"));
    pages
}

/// The command lines of a page's fenced blocks, continuations joined.
fn fenced_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if !inside {
            continue;
        }
        // a continuation may carry a comment after its backslash
        let (body, _) = split_comment(line);
        let body = body.trim_end();
        if let Some(head) = body.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
            continue;
        }
        let whole = format!("{pending}{}", body.trim_start());
        pending.clear();
        let cmd = whole
            .trim()
            .strip_prefix("$ ")
            .unwrap_or(whole.trim())
            .to_string();
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let is_command = match words.as_slice() {
            ["dtsim", sub, ..] => SUBCOMMANDS.contains(sub),
            ["cargo", ..] | ["mpirun", ..] => true,
            _ => false,
        };
        if is_command {
            out.push(words.join(" "));
        }
    }
    out
}

/// A line without its trailing `# comment` (a `#` after a space, outside
/// quotes).
fn split_comment(line: &str) -> (&str, &str) {
    let mut quoted = false;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'#' if !quoted && i > 0 && bytes[i - 1] == b' ' => return (&line[..i], &line[i..]),
            _ => {}
        }
    }
    (line, "")
}

/// How a command is checked.
#[derive(Debug, PartialEq)]
enum Check {
    /// Run; must succeed.
    Succeeds(String),
    /// Run; a backend this build lacks: exit 2, "not enabled".
    NotEnabled(String),
    /// Not run, for the reason given.
    NotRun(&'static str),
}

fn classify(cmd: &str) -> Result<Check, String> {
    if let Some((_, why)) = NOT_RUN.iter().find(|(c, _)| *c == cmd) {
        return Ok(Check::NotRun(why));
    }
    let dtsim = if let Some(rest) = cmd.strip_prefix("cargo run --release -- ") {
        format!("dtsim {rest}")
    } else if cmd.starts_with("mpirun ") {
        match cmd.find(" dtsim ") {
            Some(i) => cmd[i + 1..].to_string(),
            None => return Err(format!("an mpirun line without dtsim: {cmd}")),
        }
    } else if cmd.starts_with("dtsim ") {
        cmd.to_string()
    } else {
        return Err(format!(
            "not classified (add it to NOT_RUN with why): {cmd}"
        ));
    };
    let lacking = ["--backend mpi", "--backend nccl", "--backend cuda"]
        .iter()
        .any(|b| dtsim.contains(b));
    Ok(if lacking {
        Check::NotEnabled(dtsim)
    } else {
        Check::Succeeds(dtsim)
    })
}

/// A scratch directory for one page: `scenarios/` linked, the inputs
/// copied, and `bin/dtsim` this build.
fn scratch(page: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("docs")
        .join(page);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("bin")).unwrap();
    std::os::unix::fs::symlink(repo().join("scenarios"), d.join("scenarios")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_dtsim"), d.join("bin/dtsim")).unwrap();
    for (name, from) in INPUTS {
        std::fs::copy(repo().join(from), d.join(name)).unwrap();
    }
    d
}

fn sh(dir: &Path, cmd: &str, env: &[(&str, String)]) -> Output {
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env("PATH", path)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap()
}

/// The files a command says it writes: the word after `-o`, `--out`,
/// `--output` or `--trace`, where it holds no shell variable.
fn outputs(cmd: &str) -> Vec<String> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| ["-o", "--out", "--output", "--trace"].contains(&w[0]))
        .map(|w| w[1].trim_matches('"').to_string())
        .filter(|w| !w.contains('$'))
        .collect()
}

#[test]
fn every_documented_command_runs_as_written() {
    let mut failures = Vec::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for page in pages() {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let commands = fenced_commands(&std::fs::read_to_string(&page).unwrap());
        if commands.is_empty() {
            continue;
        }
        let dir = scratch(&name);
        for cmd in commands {
            let check = match classify(&cmd) {
                Ok(c) => c,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            match check {
                Check::NotRun(_) => *counts.entry("not run").or_default() += 1,
                Check::Succeeds(c) => {
                    *counts.entry("run").or_default() += 1;
                    // a job-array line runs as every task of its array
                    let tasks = if c.contains("SLURM_ARRAY_TASK_ID") {
                        16
                    } else {
                        1
                    };
                    for task in 1..=tasks {
                        let env = [
                            ("SLURM_CPUS_PER_TASK", "1".to_string()),
                            ("SLURM_ARRAY_TASK_ID", task.to_string()),
                        ];
                        let o = sh(&dir, &c, &env);
                        if !o.status.success() {
                            failures.push(format!(
                                "{name}: `{c}` exited {:?}: {}",
                                o.status.code(),
                                String::from_utf8_lossy(&o.stderr)
                            ));
                        }
                    }
                    for out in outputs(&c) {
                        if !dir.join(&out).exists() {
                            failures.push(format!("{name}: `{c}` did not write {out}"));
                        }
                    }
                }
                Check::NotEnabled(c) => {
                    *counts.entry("backend not in this build").or_default() += 1;
                    let o = sh(&dir, &c, &[]);
                    let err = String::from_utf8_lossy(&o.stderr);
                    if o.status.code() != Some(2) || !err.contains("not enabled in this build") {
                        failures.push(format!(
                            "{name}: `{c}`: expected exit 2 and 'not enabled in this build', got {:?}: {err}",
                            o.status.code()
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("documented commands: {counts:?}");
    assert!(counts["run"] >= 15, "{counts:?}");
}

/// Whole scenarios in the pages' ```toml blocks (a `[cluster]` and a
/// `[model]` table: the others are fragments) run with `dtsim run` as
/// written, without a warning; at least docs/scenarios.md's own model.
#[test]
fn every_documented_scenario_runs_as_written() {
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    for page in pages() {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&page).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("```toml\n") {
            let body = &rest[at + 8..];
            let end = body.find("```").expect("a closed block");
            let block = &body[..end];
            rest = &body[end + 3..];
            if !(block.contains("[cluster]") && block.contains("[model]")) {
                continue;
            }
            let dir = scratch(&format!("{name}-toml-{}", ran.len()));
            std::fs::write(dir.join("scenario.toml"), block).unwrap();
            let o = sh(&dir, "dtsim run scenario.toml", &[]);
            let err = String::from_utf8_lossy(&o.stderr);
            if !o.status.success() || !err.is_empty() {
                failures.push(format!(
                    "{name}: exited {:?}: {err}\n{block}",
                    o.status.code()
                ));
            }
            ran.push(name.clone());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran.iter().any(|p| p == "scenarios.md"), "{ran:?}");
}

/// Inline synopses (`dtsim run FILE --trace OUT.json`): the subcommand
/// exists and every flag is one its help lists.
#[test]
fn every_inline_synopsis_names_real_flags() {
    let mut helps: BTreeMap<String, String> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        // inline code spans: between single backticks, outside fences
        let mut inside = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                inside = !inside;
                continue;
            }
            if inside {
                continue;
            }
            for span in line.split('`').skip(1).step_by(2) {
                let words: Vec<&str> = span.split_whitespace().collect();
                let (sub, rest) = match words.as_slice() {
                    ["dtsim", sub, rest @ ..] if SUBCOMMANDS.contains(sub) => (*sub, rest),
                    _ => continue,
                };
                // nested subcommands: calibrate net|kernels|collectives|training, report merge
                let nested = rest
                    .first()
                    .filter(|w| ["net", "kernels", "collectives", "training", "merge"].contains(w));
                let key = match nested {
                    Some(n) => format!("{sub} {n}"),
                    None => sub.to_string(),
                };
                let help = helps.entry(key.clone()).or_insert_with(|| {
                    let mut args: Vec<&str> = key.split(' ').collect();
                    args.push("--help");
                    let o = Command::new(env!("CARGO_BIN_EXE_dtsim"))
                        .args(&args)
                        .output()
                        .unwrap();
                    String::from_utf8_lossy(&o.stdout).into_owned()
                });
                for w in rest {
                    let flag: String = w
                        .trim_start_matches(['[', '('])
                        .split(['=', ']', '|', ')', ','])
                        .next()
                        .unwrap_or("")
                        .to_string();
                    if flag.starts_with("--") && flag.len() > 2 {
                        checked += 1;
                        if !help.contains(&format!("{flag} "))
                            && !help.contains(&format!("{flag}\n"))
                            && !help.contains(&format!("{flag}="))
                            && !help.contains(&format!("{flag} <"))
                        {
                            failures.push(format!("{name}: `{span}`: `dtsim {key}` has no {flag}"));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 20, "{checked} flags checked");
}

#[test]
fn commands_are_found_and_classified() {
    let text = "x\n```\n$ dtsim run a.toml   # a comment\ndtsim sweep b.toml \\\n    --out \"c.parquet\"\ndtsim (src/) ──▶ sim\n#SBATCH --array=1-2\n```\n`dtsim run` in text\n";
    assert_eq!(
        fenced_commands(text),
        ["dtsim run a.toml", "dtsim sweep b.toml --out \"c.parquet\""]
    );
    assert_eq!(
        classify("mpirun -np 16 dtsim calibrate collectives --backend mpi -o m.toml"),
        Ok(Check::NotEnabled(
            "dtsim calibrate collectives --backend mpi -o m.toml".into()
        ))
    );
    assert_eq!(
        classify("cargo run --release -- run x.toml"),
        Ok(Check::Succeeds("dtsim run x.toml".into()))
    );
    assert!(classify("cargo fmt").is_err());
    assert_eq!(
        outputs("dtsim sweep x --out \"a.csv\" -o b"),
        ["a.csv", "b"]
    );
}
