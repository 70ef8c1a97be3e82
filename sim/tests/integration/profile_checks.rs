//! Calibration profiles' values: impossible measurements and kernel
//! models are refused where the profile is read, at their line, and every
//! committed profile is still read.

use sim::profile::{Profile, ProfileError};
use sim::scenario::load_str;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every committed profile (`calibration/profiles`, the MPI fixtures of
/// `tests/fixtures/profiles`) still reads: the checks refuse nothing a
/// calibration wrote.
#[test]
fn every_committed_profile_reads() {
    let mut n = 0;
    for dir in ["calibration/profiles", "tests/fixtures/profiles"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let text = std::fs::read_to_string(&p).unwrap();
                Profile::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                n += 1;
            }
        }
    }
    assert!(n >= 40, "{n} profiles");
}

/// The black-box report's reproducer: the MPI fixture with its line 312
/// (a ping-pong's `time_s`) made impossible is refused at that line,
/// naming the measurement; until 2026-11-28 `dtsim validate
/// --measurements` read it, dropped the point and fitted without it.
#[test]
fn an_impossible_measured_time_is_refused_at_its_line() {
    let text =
        std::fs::read_to_string(root().join("tests/fixtures/profiles/mpi-emulated-4hosts.toml"))
            .unwrap();
    for v in ["-1", "nan", "inf", "1e300", "0"] {
        let bad: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 == 312 {
                    format!("time_s = {v}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let e = Profile::from_toml(&bad).unwrap_err();
        assert!(
            matches!(
                e,
                ProfileError::Value {
                    line: Some(312),
                    ..
                }
            ),
            "{v}: {e}"
        );
        let m = e.to_string();
        assert!(
            m.starts_with("line 312: [[measurement]] #")
                && m.contains("(`pingpong`, 262144 bytes on 2 ranks) has time_s = ")
                && m.contains("finite, positive and at most 1e6"),
            "{v}: {m}"
        );
    }
}

/// A scenario's `model.kernel_profile` whose profile has an unknown
/// backend, a kernel modelled twice or a cost term out of range is
/// refused at the key, the message naming the profile, the line in it
/// and the kernel. `b_s = 1` (a second an element) was read until
/// 2026-11-28 and overflowed the simulated time, naming neither.
#[test]
fn a_scenario_refuses_a_kernel_profile_at_the_profile_line() {
    let dir = std::env::temp_dir().join(format!("dtsim-profile-checks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let topk = |backend: &str, b: &str| {
        format!(
            "[[kernel_model]]\nkernel = \"topk\"\nbackend = \"{backend}\"\nform = \"a + b*m\"\na_s = 0.0001\nb_s = {b}\nc_s = 0.0\nmedian_abs_residual = 0.05\n\n"
        )
    };
    let cases = [
        (
            "tpu.toml",
            topk("tpu", "1e-11"),
            "line 3: [[kernel_model]] `topk` has backend `tpu`, which dtsim does not know (known: cpu, cuda, the backends of `dtsim calibrate kernels`)",
        ),
        (
            "twice.toml",
            format!("{}{}", topk("cuda", "1e-11"), topk("cuda", "2e-11")),
            "line 11: [[kernel_model]] `topk` is modelled twice (#1 at line 2, and #2)",
        ),
        (
            "slow.toml",
            topk("cuda", "1"),
            "line 6: [[kernel_model]] `topk` has b_s = 1: a kernel's per-element terms are seconds, finite, not negative and at most 1e-3 (a millisecond an element)",
        ),
        (
            "huge.toml",
            topk("cuda", "1e300"),
            "line 6: [[kernel_model]] `topk` has b_s = 1e300: ",
        ),
    ];
    for (name, profile, want) in cases {
        let path = dir.join(name);
        std::fs::write(&path, profile).unwrap();
        let path = path.to_str().unwrap().replace('\\', "/");
        let text = format!(
            "name = \"t\"\niterations = 2\n[cluster]\nnodes = 2\nnode = \"dgx-h100\"\n[model]\npreset = \"resnet50\"\nbatch_per_gpu = 128\ngpu = \"h200\"\nkernel_profile = \"{path}\"\n[strategy]\ndense = \"topk\"\n"
        );
        let e = load_str(&text, "t.toml", "t").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("model.kernel_profile"), "{e}");
        assert_eq!(e.line, Some(10), "{e}");
        assert!(
            e.message
                .starts_with(&format!("kernel profile {path}: {want}")),
            "{name}: {}",
            e.message
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
