//! The exit-code contract, one test per kind (src/error.rs): 2 for bad
//! input with a located message, 1 for a failure that is not the input's
//! (an output that cannot be written, a limit exceeded), 0 and silence when
//! the reader of standard output goes away.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::{dtsim, fixture, stderr};

fn scratch(name: &str, text: &str) -> PathBuf {
    common::scratch_file("exit-codes", name, text)
}

const SMALL: &str = r#"name = "small"
iterations = 2
[cluster]
nodes = 2
network = "ib-edr-100g"
[model]
preset = "resnet50"
batch_per_gpu = 32
gpu = "titan-xp"
"#;

/// A point that validates but cannot be simulated (its time overflows):
/// exit 2, the file named, and no table header before the message.
#[test]
fn input_that_fails_in_the_simulator_exits_2_with_no_header() {
    let text = SMALL
        .replace("iterations = 2", "iterations = 100")
        .replace(
            "network = \"ib-edr-100g\"",
            "network = \"ib-edr-100g\"\nbandwidth = \"1e3Bps\"",
        )
        .replace("resnet50", "vgg16");
    let f = scratch("overflow.toml", &text);
    let o = dtsim(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        o.stdout.is_empty(),
        "printed before the error: {:?}",
        o.stdout
    );
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!("error: {}: the simulated time", f.display())),
        "{err}"
    );
}

/// Output that cannot be written is not the input's fault: exit 1.
#[test]
fn an_unwritable_output_exits_1() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full on this system");
        return;
    }
    let f = scratch("small.toml", SMALL);
    // standard output
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_dtsim"))
        .args(["run", f.to_str().unwrap(), "--json"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("error: writing output: "),
        "{}",
        stderr(&o)
    );
    // a profile whose folder cannot be made (a file is in the way; a
    // device as the output is refused as bad input since 2026-11-29, as
    // the file renamed into place would replace it)
    let log = fixture("nccl-tests/gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
    let blocked = f.with_file_name("small.toml/x.toml");
    let o = dtsim(&[
        "calibrate",
        "net",
        "--nccl-tests",
        &log,
        "-o",
        blocked.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(&format!(
            "error: {}: cannot write the profile: ",
            blocked.display()
        )),
        "{}",
        stderr(&o)
    );
}

/// A limit `dtsim validate` was asked to enforce and that does not hold is
/// a failure (1), not bad input; a limit that is not a number is bad
/// input (2).
#[test]
fn a_validation_limit_exceeded_exits_1_and_a_bad_limit_2() {
    let log = fixture("nccl-tests/gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt");
    let o = dtsim(&["validate", "--nccl-tests", &log, "--max-median-error", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("exceeds --max-median-error 0.0%"),
        "{}",
        stderr(&o)
    );
    let o = dtsim(&["validate", "--nccl-tests", &log, "--max-median-error=-1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: --max-median-error must be a finite number, 0 or more, got -1\n"
    );
    // a percentage given for the fraction, and the training flags beside
    // logs
    for (args, says) in [
        (
            vec!["--max-median-error", "5"],
            "error: --max-median-error is a fraction (0.05 = 5%), and 5 is 500%: give 0.05 for 5%\n",
        ),
        (
            vec!["--scenario", "s.toml"],
            "error: --scenario goes with --training (measured training runs); it means nothing beside logs or profiles\n",
        ),
        (
            vec!["--fit-on", "cluster.nodes=1"],
            "error: --fit-on goes with --training (measured training runs); it means nothing beside logs or profiles\n",
        ),
    ] {
        let mut a = vec!["validate", "--nccl-tests", &log];
        a.extend(args);
        let o = dtsim(&a);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(stderr(&o), says);
    }
    // --ranks beside a log that states its own: the log's, and a warning
    let o = dtsim(&["validate", "--nccl-tests", &log, "--ranks", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: --ranks 3: ")
            && stderr(&o).contains("and that count is used"),
        "{}",
        stderr(&o)
    );
}

/// `dtsim run … | head -1`: the reader leaves after one line; the run ends
/// quietly with exit code 0, as a Unix filter does. The sweep prints far
/// more than a pipe buffers (64 KiB), so later writes meet the closed pipe.
#[test]
fn a_closed_standard_output_ends_quietly_with_0() {
    let text = format!(
        "{SMALL}[sweep]\n\"model.batch_per_gpu\" = [{}]\n",
        (1..=400)
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let f = scratch("long.toml", &text);
    let mut child = Command::new(env!("CARGO_BIN_EXE_dtsim"))
        .args(["run", f.to_str().unwrap(), "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // the reader is dropped here: the pipe's read end closes
    assert!(first.starts_with('{'), "{first}");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "a closed pipe is not an error");
}

/// `dtsim calibrate training … 2>&1 | head -1`: standard error closed
/// before the fit prints; the profile is still written and the exit code
/// is 0 (a review: 101, a panic, sometimes before the profile was
/// written).
#[test]
fn a_closed_standard_error_loses_messages_not_the_work() {
    let s = scratch(
        "fit.toml",
        &format!("{SMALL}[sweep]\n\"cluster.nodes\" = [2, 4, 8]\n"),
    );
    let m = scratch(
        "fit.csv",
        "cluster.nodes,iteration_time_s\n2,0.30\n4,0.31\n8,0.33\n",
    );
    let out = s.with_file_name("fit-profile.toml");
    let _ = std::fs::remove_file(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_dtsim"))
        .args([
            "calibrate",
            "training",
            "--scenario",
            s.to_str().unwrap(),
            "--measured",
            m.to_str().unwrap(),
            "--params",
            "message_overhead",
            "-o",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the read end closes before the fit has printed anything
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("[training]")
    );
}

/// Outputs that would destroy what they replace are refused before any
/// work, exit 2, and the file is untouched (a review: each was replaced,
/// exit 0): the scenario as its own trace, a report's table over its
/// input, merged shards over a shard, a symbolic link (the link was
/// replaced, not its target written) and a device (as root, /dev/full
/// became a regular file).
#[test]
fn outputs_that_would_destroy_what_they_replace_are_refused() {
    let f = scratch("own-trace.toml", SMALL);
    let dir = f.parent().unwrap().join("own-outputs");
    std::fs::create_dir_all(&dir).unwrap();
    let table = dir.join("results.csv");
    std::fs::write(&table, "point,throughput\n0,1\n").unwrap();
    let link = dir.join("link.json");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(dir.join("target.json"), &link).unwrap();
    let (fs, ts, ds, ls) = (
        f.to_str().unwrap(),
        table.to_str().unwrap(),
        dir.to_str().unwrap(),
        link.to_str().unwrap(),
    );
    for (args, says) in [
        (vec!["run", fs, "--trace", fs], "that is an input"),
        (vec!["report", ts, "-o", ds], "that is an input"),
        (vec!["report", "merge", ts, "--out", ts], "that is an input"),
        (vec!["run", fs, "--trace", ls], "is a symbolic link"),
        (
            vec!["run", fs, "--trace", "/dev/null"],
            "is not a regular file",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_dtsim"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(&f).unwrap(), SMALL);
    assert_eq!(
        std::fs::read_to_string(&table).unwrap(),
        "point,throughput\n0,1\n"
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// Model parallelism's bad input, through the command line: stages that
/// do not divide the GPUs, DCT-MP without stages, stages beside Top-k;
/// each exit 2 with file, line and key.
#[test]
fn model_parallel_bad_input_exits_2_with_file_line_and_key() {
    let cases = [
        ("mp_stages = 3", "strategy.mp_stages", "divide"),
        ("mp_sparsity = 0.9", "strategy.mp_sparsity", "mp_stages"),
        (
            "mp_stages = 2\ndense = \"topk\"",
            "strategy.mp_stages",
            "not modelled",
        ),
    ];
    for (i, (extra, key, says)) in cases.into_iter().enumerate() {
        let text = format!("{SMALL}[strategy]\n{extra}\n");
        let f = scratch(&format!("mp{i}.toml"), &text);
        let o = dtsim(&["run", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{extra}: {}", stderr(&o));
        let err = stderr(&o);
        let line = text
            .lines()
            .position(|l| l.starts_with(key.trim_start_matches("strategy.")))
            .unwrap()
            + 1;
        assert!(
            err.starts_with(&format!("error: {}:{line}: `{key}`", f.display())),
            "{extra}: {err}"
        );
        assert!(err.contains(says), "{extra}: {err}");
    }
}
