//! Calibration from measured training runs (`dtsim calibrate training`,
//! `dtsim validate --training`): known losses recovered from runs the
//! simulator made, a paper's published scaling predicted from part of it,
//! and bad measurements refused with their line.

use calibration::calibrate::{CalibrateError, Requester};
use calibration::training::{
    self, TrainingRequest, TrainingValidateRequest, fit, predict, read_runs,
};
use sim::losses::Param;
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dtsim-training-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Four layers on 1-GPU machines over 10 or 25 GbE, each layer's
/// gradient its own message or all fused in one: communication partly
/// hidden behind the backward pass, so the overhead (by the messages),
/// the NIC efficiency (by the network) and the stragglers (by the
/// machines) each move the iteration, and differently.
const SCENARIO: &str = r#"name = "synthetic"
ideal = true
iterations = 6
warmup_iterations = 1
[cluster]
nodes = 2
gpus_per_node = 1
network = "eth-10g"
model = "analytical"
[model]
batch_per_gpu = 8
[[model.layers]]
params = 2000000
forward = "2ms"
backward = "4ms"
[[model.layers]]
params = 6000000
forward = "3ms"
backward = "6ms"
[[model.layers]]
params = 1000000
forward = "2ms"
backward = "4ms"
[[model.layers]]
params = 4000000
forward = "1ms"
backward = "2ms"
[strategy]
fusion = 0
[sweep]
"cluster.nodes" = [2, 4, 8, 16]
"cluster.network" = ["eth-10g", "eth-25g"]
"strategy.fusion" = [0, "64MiB"]
"#;

/// The losses the synthetic runs were made with, in `Param::ALL`'s order.
const TRUE: [f64; 3] = [0.04, 1e-3, 0.55];

/// Who the tests' profiles say made them.
fn tester() -> Requester {
    Requester {
        tool: "dtsim test".into(),
        command: "test".into(),
    }
}

/// Writes the scenario and a CSV of its points' iteration times under the
/// losses `TRUE`, each multiplied by exp(noise · zᵢ) for standard normal
/// zᵢ drawn from `seed`.
fn synthetic_runs(dir: &Path, noise: f64, seed: u64) -> (PathBuf, PathBuf) {
    use rand::{RngExt, SeedableRng};
    let scenario = dir.join("s.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let grid = sim::scenario::open_file(&scenario).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut csv = String::from(
        "# made by the simulator\ncluster.network,cluster.nodes,strategy.fusion,iteration_time_s\n",
    );
    for i in 0..grid.len() {
        let p = grid.point(i).unwrap();
        let mut cfg = p.config.clone();
        for (q, v) in Param::ALL.iter().zip(TRUE) {
            q.set(&mut cfg, v);
        }
        let t = sim::train::simulate(&cfg).unwrap().iteration_time_s;
        // Box–Muller from two uniforms in (0, 1]
        let (u1, u2): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        csv.push_str(&format!(
            "{},{},{},{:e}\n",
            p.sweep["cluster.network"],
            p.sweep["cluster.nodes"],
            p.sweep["strategy.fusion"],
            t * (noise * z).exp()
        ));
    }
    let measured = dir.join("runs.csv");
    std::fs::write(&measured, csv).unwrap();
    (scenario, measured)
}

/// Runs the simulator made with known losses give those losses back: to
/// the optimiser's tolerance where the runs are exact.
#[test]
fn recovers_known_losses_from_exact_runs() {
    let dir = temp_dir("exact");
    let (scenario, measured) = synthetic_runs(&dir, 0.0, 0);
    let runs = read_runs(Some(&scenario), &measured).unwrap();
    assert_eq!(runs.len(), 16);
    let f = fit(&runs, &Param::ALL).unwrap();
    for (j, q) in Param::ALL.iter().enumerate() {
        let rel = (f.values[j] - TRUE[j]).abs() / TRUE[j];
        assert!(
            rel < 1e-3,
            "{}: {} against {}",
            q.name(),
            f.values[j],
            TRUE[j]
        );
    }
    assert!(f.rms_log_residual < 1e-5, "{}", f.rms_log_residual);
    assert!(f.at_bound.is_empty() && f.unidentified.is_empty(), "{f:?}");
}

/// With 1% noise on each run (a measurement's repeatability), the fit's
/// standard errors describe how far each loss lands from the truth. Over
/// ten noise draws (fixed seeds) every estimate lies within 3.5 standard
/// errors, at least 80% of them within 2 (95% for an exact
/// linearisation: an overhead or a straggler moves the iteration
/// piecewise linearly, a message entering or leaving the critical path,
/// so the linearised errors are somewhat optimistic; measured here 89%),
/// and the errors are informative (each below the value it qualifies).
/// The stragglers' CV may end at 0, its bound, in a few draws (its
/// standard error is half its value): then it has none, and it counts
/// for neither.
#[test]
fn recovers_known_losses_within_the_stated_uncertainty() {
    let dir = temp_dir("noisy");
    let (mut within2, mut estimates, mut at_bound) = (0, 0, 0);
    for seed in 1..=10 {
        let (scenario, measured) = synthetic_runs(&dir, 0.01, seed);
        let runs = read_runs(Some(&scenario), &measured).unwrap();
        let f = fit(&runs, &Param::ALL).unwrap();
        for (j, q) in Param::ALL.iter().enumerate() {
            let se = f.standard_errors[j];
            if f.at_bound.iter().any(|b| b == q.name()) {
                assert_eq!(*q, Param::ComputeJitter, "seed {seed}: {f:?}");
                at_bound += 1;
                continue;
            }
            assert!(
                se.is_finite() && se > 0.0,
                "seed {seed}, {}: {se}",
                q.name()
            );
            assert!(
                se < TRUE[j],
                "seed {seed}, {}: standard error {se} against {}",
                q.name(),
                TRUE[j]
            );
            let z = (f.values[j] - TRUE[j]) / se;
            assert!(
                z.abs() < 3.5,
                "seed {seed}, {}: fitted {} against {} (standard error {se})",
                q.name(),
                f.values[j],
                TRUE[j]
            );
            estimates += 1;
            within2 += usize::from(z.abs() <= 2.0);
        }
        // the covariance is symmetric with the squared errors on its diagonal
        for j in 0..3 {
            if f.standard_errors[j].is_finite() {
                let d = f.covariance[j][j].sqrt();
                assert!((d - f.standard_errors[j]).abs() <= 1e-12 * d);
            }
            for k in 0..3 {
                let scale = f.covariance[j][j].abs().max(f.covariance[k][k].abs());
                assert!((f.covariance[j][k] - f.covariance[k][j]).abs() <= 1e-9 * scale);
            }
        }
    }
    assert!(at_bound <= 2, "{at_bound} estimates on a bound");
    assert!(
        within2 * 10 >= estimates * 8,
        "{within2} of {estimates} estimates within 2 standard errors"
    );
}

/// A loss held out of the fit keeps the scenario's value, and a loss no
/// run depends on is said to be unknown rather than given a value.
#[test]
fn held_and_unidentifiable_losses() {
    let dir = temp_dir("held");
    let (scenario, measured) = synthetic_runs(&dir, 0.0, 0);
    let runs = read_runs(Some(&scenario), &measured).unwrap();
    let f = fit(&runs, &[Param::MessageOverhead]).unwrap();
    // the scenario is ideal: no stragglers, the whole bandwidth
    assert_eq!((f.values[0], f.values[2]), (0.0, 1.0));
    assert!(f.values[1] > TRUE[1], "{f:?}");

    // one machine: nothing crosses the network, nothing straggles behind
    // another GPU
    let one = dir.join("one.toml");
    std::fs::write(
        &one,
        SCENARIO.replace(
            "\"cluster.nodes\" = [2, 4, 8, 16]",
            "\"cluster.nodes\" = [1]",
        ),
    )
    .unwrap();
    let csv = dir.join("one.csv");
    std::fs::write(
        &csv,
        "cluster.network,cluster.nodes,strategy.fusion,iteration_time_s\neth-10g,1,0,0.03\neth-25g,1,0,0.031\neth-25g,1,64MiB,0.029\n",
    )
    .unwrap();
    let runs = read_runs(Some(&one), &csv).unwrap();
    let f = fit(&runs, &[Param::MessageOverhead, Param::NicEfficiency]).unwrap();
    assert_eq!(f.unidentified, ["message_overhead", "nic_efficiency"]);
    assert!(f.standard_errors.iter().all(|e| e.is_nan()));
    // each keeps the scenario's value (ideal: none), not the search's start
    assert_eq!((f.values[1], f.values[2]), (0.0, 1.0));
    // and the profile does not call them fitted: it holds them, as it
    // holds a loss left out of --params (a review: listed as fitted with
    // no variance, `dtsim run` took them as known)
    let who = tester();
    let (profile, _) = training::calibrate(
        &TrainingRequest {
            scenario: Some(one.clone()),
            measured: csv.clone(),
            params: vec![Param::ComputeJitter, Param::NicEfficiency],
        },
        &who,
    )
    .unwrap();
    let t = profile.training.as_ref().unwrap();
    assert_eq!(t.fitted, ["compute_jitter"]);
    assert_eq!(t.covariance.len(), 1);
    assert!(
        profile
            .provenance
            .notes
            .iter()
            .any(|n| n.contains("no measured run depends on nic_efficiency")),
        "{:?}",
        profile.provenance.notes
    );
}

/// Runs no loss can reach are warned about with their line: a run faster
/// than its prediction with no loss at all, and a fit that leaves the
/// runs far off (a review: milliseconds written as seconds, or a
/// throughput 170 times the compute alone, fitted without a word); exact
/// runs warn of nothing.
#[test]
fn runs_no_loss_can_reach_are_warned_about() {
    let dir = temp_dir("unreachable");
    let (scenario, measured) = synthetic_runs(&dir, 0.0, 0);
    let who = tester();
    let req = |measured: PathBuf| TrainingRequest {
        scenario: Some(scenario.clone()),
        measured,
        params: Param::ALL.to_vec(),
    };
    let (_, f) = training::calibrate(&req(measured.clone()), &who).unwrap();
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    // the last run (line 18: a comment, the header, 16 runs) 100 times
    // too fast
    let text = std::fs::read_to_string(&measured).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let last = lines.last_mut().unwrap();
    let (head, t) = last.rsplit_once(',').unwrap();
    *last = format!("{head},{:e}", t.parse::<f64>().unwrap() / 100.0);
    let fast = dir.join("fast.csv");
    std::fs::write(&fast, lines.join("\n") + "\n").unwrap();
    let (profile, f) = training::calibrate(&req(fast), &who).unwrap();
    assert!(
        f.warnings.iter().any(|w| w.starts_with("line 18 (")
            && w.contains("faster than the scenario allows with no loss at all")),
        "{:?}",
        f.warnings
    );
    assert!(
        profile
            .provenance
            .notes
            .iter()
            .any(|n| n.starts_with("warning: line 18")),
        "{:?}",
        profile.provenance.notes
    );
}

/// Repeats of a point measure its noise, not the losses: a fit needs one
/// more distinct point than losses, however many rows repeat one (a
/// review: five rows of one job fitted three losses, exit 0, into a
/// covariance with negative variances that `dtsim run` refused).
#[test]
fn repeats_of_a_point_are_one_point() {
    let dir = temp_dir("repeats");
    let (scenario, _) = synthetic_runs(&dir, 0.0, 0);
    let csv = dir.join("repeats.csv");
    let rows: String = [0.470, 0.475, 0.472, 0.480, 0.468]
        .iter()
        .map(|t| format!("eth-10g,2,0,{t}\n"))
        .collect();
    std::fs::write(
        &csv,
        format!("cluster.network,cluster.nodes,strategy.fusion,iteration_time_s\n{rows}"),
    )
    .unwrap();
    let runs = read_runs(Some(&scenario), &csv).unwrap();
    match fit(&runs, &Param::ALL) {
        Err(CalibrateError::Input(m)) => assert!(
            m.starts_with("1 measured point (5 runs: repeats of a point")
                && m.contains("at least 4 distinct points"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    // one loss, two points, each twice: fitted
    std::fs::write(
        &csv,
        "cluster.network,cluster.nodes,strategy.fusion,iteration_time_s\neth-10g,2,0,0.47\neth-10g,2,0,0.48\neth-10g,4,0,0.52\neth-10g,4,0,0.53\n",
    )
    .unwrap();
    let runs = read_runs(Some(&scenario), &csv).unwrap();
    assert!(fit(&runs, &[Param::MessageOverhead]).is_ok());
}

/// The profile carries the fit and every run's prediction, and a
/// scenario that names it takes its losses (each loss's own key still
/// wins); `ideal = true` beside it is refused.
#[test]
fn the_profile_is_what_scenarios_name() {
    let dir = temp_dir("profile");
    let (scenario, measured) = synthetic_runs(&dir, 0.0, 0);
    let who = tester();
    let (profile, f) = training::calibrate(
        &TrainingRequest {
            scenario: Some(scenario.clone()),
            measured,
            params: Param::ALL.to_vec(),
        },
        &who,
    )
    .unwrap();
    let t = profile.training.as_ref().unwrap();
    assert_eq!(
        [t.compute_jitter, t.message_overhead_s, t.nic_efficiency],
        f.values
    );
    assert_eq!(profile.training_points.len(), 16);
    for p in &profile.training_points {
        assert!((p.predicted_s / p.measured_s - 1.0).abs() < 1e-5, "{p:?}");
    }
    let path = dir.join("p.toml");
    calibration::calibrate::write_profile(&profile, &path).unwrap();

    let text = SCENARIO
        .replace("ideal = true\n", "training_profile = \"p.toml\"\n")
        .replace(
            "[sweep]\n\"cluster.nodes\" = [2, 4, 8, 16]\n\"cluster.network\" = [\"eth-10g\", \"eth-25g\"]\n\"strategy.fusion\" = [0, \"64MiB\"]\n",
            "",
        );
    let pts = sim::scenario::load_str_in(&text, "x.toml", "x", Some(&dir)).unwrap();
    let cfg = &pts[0].config;
    for (q, v) in Param::ALL.iter().zip(f.values) {
        assert_eq!(q.get(cfg), v, "{}", q.name());
    }
    let fl = cfg.fitted_losses.as_ref().unwrap();
    assert_eq!(fl.params, Param::ALL);
    assert!(cfg.draws());

    // a key of the scenario's own wins, and leaves the fit's uncertainty
    let own = text.replace("fusion = 0\n", "fusion = 0\nmessage_overhead = \"5us\"\n");
    let pts = sim::scenario::load_str_in(&own, "x.toml", "x", Some(&dir)).unwrap();
    let cfg = &pts[0].config;
    assert!((cfg.strategy.message_overhead_s - 5e-6).abs() < 1e-18);
    let fl = cfg.fitted_losses.as_ref().unwrap();
    assert_eq!(fl.params, [Param::ComputeJitter, Param::NicEfficiency]);
    assert_eq!(fl.covariance.len(), 2);

    let both = format!("ideal = true\n{text}");
    let e = sim::scenario::load_str_in(&both, "x.toml", "x", Some(&dir)).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("training_profile"), "{e}");
    assert!(e.message.contains("ideal"), "{e}");

    // a profile without [training]
    std::fs::write(
        dir.join("net.toml"),
        "[network]\nlatency_s = 1e-6\nbandwidth_bps = 1e9\n",
    )
    .unwrap();
    let e = sim::scenario::load_str_in(
        &text.replace("p.toml", "net.toml"),
        "x.toml",
        "x",
        Some(&dir),
    )
    .unwrap_err();
    assert!(e.message.contains("[training]"), "{e}");
    assert_eq!(e.line, Some(2), "{e}");
}

/// gTop-k's authors' release publishes ResNet-20's per-worker throughput
/// at 4, 8, 16 and 32 workers for dense S-SGD, Top-k and gTop-k
/// (tests/fixtures/training/gtopk-release-resnet20.csv, from
/// docs/research/gtopk-release.md). Fitted on 4 and 8 workers, the losses
/// predict 16 and 32 better than the uncalibrated simulator at every
/// point. What they cannot do is pinned: the release's dense iteration
/// nearly doubles from 16 to 32 workers (0.25 to 0.44 s: its host-side
/// MPI AllReduce grows with the workers, docs/reproductions.md), which
/// no per-message, per-byte or straggler loss of a ring produces; the
/// 32-worker dense point stays more than 40% short.
#[test]
fn gtopk_release_scaling_from_4_and_8_workers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let v = training::validate(&TrainingValidateRequest {
        scenario: Some(root.join("scenarios/papers/gtopk/fig10-cifar.toml")),
        measured: root.join("tests/fixtures/training/gtopk-release-resnet20.csv"),
        params: Param::ALL.to_vec(),
        fit_on: Some(training::parse_fit_on("cluster.nodes=4,8").unwrap()),
    })
    .unwrap();
    assert_eq!(v.held_out.len(), 6);
    for h in &v.held_out {
        assert!(
            h.error.abs() < h.uncalibrated_error.abs(),
            "{}: calibrated {:+.3}, uncalibrated {:+.3}",
            h.point,
            h.error,
            h.uncalibrated_error
        );
    }
    assert!(v.median_abs_error < v.uncalibrated_median_abs_error);
    let dense32 = v
        .held_out
        .iter()
        .find(|h| h.point.contains("nodes=32") && h.point.contains("allreduce"))
        .unwrap();
    assert!(dense32.error < -0.4, "{dense32:?}");
    // Top-k and gTop-k, whose growth the losses do describe, within 25%
    for h in v.held_out.iter().filter(|h| !h.point.contains("allreduce")) {
        assert!(h.error.abs() < 0.25, "{h:?}");
    }
}

/// Leave-one-out predicts each run from a fit on the others.
#[test]
fn leave_one_out_predicts_every_run() {
    let dir = temp_dir("loo");
    let (scenario, measured) = synthetic_runs(&dir, 0.0, 0);
    let v = training::validate(&TrainingValidateRequest {
        scenario: Some(scenario),
        measured,
        params: vec![
            Param::MessageOverhead,
            Param::NicEfficiency,
            Param::ComputeJitter,
        ],
        fit_on: None,
    })
    .unwrap();
    assert_eq!(v.split, "leave one out");
    assert_eq!(v.held_out.len(), 16);
    // exact runs: every held-out run predicted from the five others
    assert!(v.max_abs_error < 1e-3, "{v:?}");
    assert!(v.uncalibrated_median_abs_error > 0.05, "{v:?}");
}

fn refused(scenario_text: &str, csv: &str) -> String {
    let dir = temp_dir(&format!("bad-{:x}", fxhash(csv)));
    let s = dir.join("s.toml");
    std::fs::write(&s, scenario_text).unwrap();
    let m = dir.join("runs.csv");
    std::fs::write(&m, csv).unwrap();
    match read_runs(Some(&s), &m) {
        Err(CalibrateError::Input(msg)) => msg,
        Err(e) => panic!("not an input error: {e}"),
        Ok(_) => panic!("accepted: {csv}"),
    }
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Bad measurements are refused with the file, the line and what is
/// wrong.
#[test]
fn bad_measurements_say_where() {
    let head = "cluster.network,cluster.nodes,strategy.fusion";
    for (csv, line, says) in [
        ("", None, "no header"),
        (
            &format!("{head}\neth-10g,2,0\n") as &str,
            Some(1),
            "no measured column",
        ),
        (
            &format!("{head},throughput,iteration_time_s\neth-10g,2,0,1,1\n"),
            Some(1),
            "not both",
        ),
        (
            "cluster.network,cluster.nodes,iteration_time_s\neth-10g,2,0.1\n",
            Some(1),
            "add a column `strategy.fusion`",
        ),
        (
            &format!("{head},cluster.nods,iteration_time_s\n"),
            Some(1),
            "did you mean `cluster.nodes`",
        ),
        (
            &format!("{head},iteration_time_s\n"),
            None,
            "no measured run",
        ),
        (
            &format!("# c\n{head},iteration_time_s\neth-10g,2,0,0.1\neth-10g,2,0\n"),
            Some(4),
            "3 cells where the header has 4",
        ),
        (
            &format!("{head},iteration_time_s\neth-10g,2,0,fast\n"),
            Some(2),
            "`fast` is not a positive number",
        ),
        (
            &format!("{head},iteration_time_s\neth-10g,2,0,-1\n"),
            Some(2),
            "not a positive number",
        ),
        (
            &format!("{head},iteration_time_s\neth-10g,0,0,0.1\n"),
            Some(2),
            "column `cluster.nodes`",
        ),
        (
            &format!("{head},iteration_time_s\neth-10g,many,0,0.1\n"),
            Some(2),
            "column `cluster.nodes`",
        ),
        (
            &format!("{head},iteration_time_s\neth-11g,2,0,0.1\n"),
            Some(2),
            "column `cluster.network`",
        ),
        (
            &format!("{head},iteration_time_s\neth-10g,2,,0.1\n"),
            Some(2),
            "column `strategy.fusion` is empty",
        ),
        (
            &format!("{head},{head},iteration_time_s\n"),
            Some(1),
            "appears twice",
        ),
        (
            &format!("{head},throughput\neth-10g,2,0,1e-300\n"),
            Some(2),
            "more than a day",
        ),
    ] {
        let m = refused(SCENARIO, csv);
        assert!(m.contains("runs.csv"), "{m}");
        if let Some(l) = line {
            assert!(m.contains(&format!("runs.csv:{l}:")), "line {l}: {m}");
        }
        assert!(m.contains(says), "{says}: {m}");
    }
    // a line of spaces is a blank line, and lines keep their numbers
    let dir = temp_dir("spaces");
    let s = dir.join("s.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let m = dir.join("runs.csv");
    std::fs::write(
        &m,
        "cluster.network,cluster.nodes,strategy.fusion,iteration_time_s\n   \neth-10g,2,0,0.1\n  \t\neth-10g,4,0,-1\n",
    )
    .unwrap();
    let e = read_runs(Some(&s), &m).unwrap_err().to_string();
    assert!(e.contains("runs.csv:5:"), "{e}");
    // a fitted loss the runs set to different values
    let swept = SCENARIO.replace(
        "\"strategy.fusion\" = [0, \"64MiB\"]",
        "\"strategy.fusion\" = [0, \"64MiB\"]\n\"cluster.nic_efficiency\" = [0.5, 1.0]",
    );
    std::fs::write(&s, swept).unwrap();
    std::fs::write(
        &m,
        "cluster.network,cluster.nodes,strategy.fusion,cluster.nic_efficiency,iteration_time_s\neth-10g,2,0,0.5,0.1\neth-10g,4,0,1.0,0.1\neth-10g,8,0,1.0,0.1\n",
    )
    .unwrap();
    let runs = read_runs(Some(&s), &m).unwrap();
    let e = fit(&runs, &[Param::NicEfficiency]).unwrap_err().to_string();
    assert!(
        e.contains("line 3") && e.contains("cluster.nic_efficiency"),
        "{e}"
    );
    // held, it must be one value too: the profile keeps one of each loss
    let e = fit(&runs, &[Param::MessageOverhead])
        .unwrap_err()
        .to_string();
    assert!(e.contains("held loss"), "{e}");
    // a missing file, and too few runs for the losses asked
    let dir = temp_dir("missing");
    let s = dir.join("s.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let e = read_runs(Some(&s), &dir.join("nope.csv")).unwrap_err();
    assert!(e.is_input() && e.to_string().contains("nope.csv"), "{e}");
    let m = dir.join("two.csv");
    std::fs::write(
        &m,
        "cluster.network,cluster.nodes,strategy.fusion,iteration_time_s\neth-10g,2,0,0.1\neth-10g,4,0,0.1\n",
    )
    .unwrap();
    let runs = read_runs(Some(&s), &m).unwrap();
    let e = fit(&runs, &Param::ALL).unwrap_err();
    assert!(e.to_string().contains("at least 4"), "{e}");
    // throughput is the job's, in the scenario's unit: the same point as
    // its time
    let t = predict(&runs[..1], Some(&[0.0, 0.0, 1.0])).unwrap()[0];
    let r = sim::train::simulate(&runs[0].config).unwrap();
    std::fs::write(
        &m,
        format!(
            "cluster.network,cluster.nodes,strategy.fusion,throughput\neth-10g,2,0,{}\n",
            r.throughput
        ),
    )
    .unwrap();
    let runs = read_runs(Some(&s), &m).unwrap();
    assert!((runs[0].measured_s / t - 1.0).abs() < 1e-12);
}

/// A hand-edited profile is refused where its numbers cannot describe a
/// fit: a loss out of its range, a parameter named twice, a covariance
/// that is not symmetric, has a negative variance, or would draw numbers
/// that are not finite.
#[test]
fn bad_training_profiles_are_refused() {
    let dir = temp_dir("bad-profiles");
    let scenario = SCENARIO
        .replace("ideal = true\n", "training_profile = \"p.toml\"\n")
        .replace(
            "[sweep]\n\"cluster.nodes\" = [2, 4, 8, 16]\n\"cluster.network\" = [\"eth-10g\", \"eth-25g\"]\n\"strategy.fusion\" = [0, \"64MiB\"]\n",
            "",
        );
    let good = "[training]\ncompute_jitter = 0.01\nmessage_overhead_s = 1e-5\nnic_efficiency = 0.9\nfitted = [\"compute_jitter\", \"nic_efficiency\"]\ncovariance = [[1e-6, 0.0], [0.0, 1e-4]]\n";
    let load = |profile: &str| {
        std::fs::write(dir.join("p.toml"), profile).unwrap();
        sim::scenario::load_str_in(&scenario, "x.toml", "x", Some(&dir))
    };
    let p = load(good).unwrap();
    let f = p[0].config.fitted_losses.as_ref().unwrap();
    assert_eq!(f.params, [Param::ComputeJitter, Param::NicEfficiency]);
    assert!(f.uncertain());
    for ((change, says), line) in [
        (
            ("nic_efficiency = 0.9", "nic_efficiency = 0"),
            "outside (0, 1]",
        ),
        (
            ("compute_jitter = 0.01", "compute_jitter = 2"),
            "outside [0, 1]",
        ),
        (("\"nic_efficiency\"]", "\"compute_jitter\"]"), "twice"),
        (("[0.0, 1e-4]]", "[0.5, 1e-4]]"), "symmetric"),
        (("[[1e-6, 0.0]", "[[-1e-6, 0.0]"), "positive semi-definite"),
        (
            ("[[1e-6, 0.0], [0.0, 1e-4]]", "[[1e-6, 1e-4], [1e-4, 1e-4]]"),
            "positive semi-definite",
        ),
        (
            (
                "[[1e-6, 0.0], [0.0, 1e-4]]",
                "[[1e-300, 1e300], [1e300, 1.0]]",
            ),
            "finite",
        ),
        (("[[1e-6, 0.0], [0.0, 1e-4]]", "[[1e-6]]"), "2 × 2"),
        (
            ("covariance = [[1e-6, 0.0], [0.0, 1e-4]]\n", ""),
            "there is no covariance",
        ),
    ]
    .into_iter()
    // the profile's line of the value at fault (a review: only the
    // scenario's line was named)
    .zip([4, 2, 5, 6, 6, 6, 6, 6, 5])
    {
        let e = load(&good.replace(change.0, change.1)).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("training_profile"), "{e}");
        assert!(e.message.contains(says), "{says}: {e}");
        assert!(
            e.message.contains(&format!("p.toml:{line}: [training]")),
            "line {line}: {e}"
        );
    }
}

/// DESIGN's `dtsim calibrate training --measured RUNS.csv -o P.toml`,
/// without `--scenario`: a `scenario` column names each run's file,
/// relative to the measurements' file. Rows naming one file read as
/// `--scenario` reads them (the same points and times); rows may name
/// several files, each giving its own swept keys and leaving the other
/// files' columns empty; the profile records every file. Refused: the
/// column beside `--scenario`, neither, an empty or missing file, a key
/// the row's file does not sweep, a swept key without its column.
#[test]
fn runs_name_their_scenarios() {
    let dir = temp_dir("scenario-column");
    let (scenario, measured) = synthetic_runs(&dir, 0.0, 3);
    // the same runs, each naming the file
    let text = std::fs::read_to_string(&measured).unwrap();
    let mut named = String::new();
    for (i, l) in text.lines().enumerate() {
        match (l.starts_with('#'), i) {
            (true, _) => named.push_str(l),
            (false, 1) => named.push_str(&format!("scenario,{l}")),
            _ => named.push_str(&format!("s.toml,{l}")),
        }
        named.push('\n');
    }
    let by_column = dir.join("named.csv");
    std::fs::write(&by_column, &named).unwrap();
    let a = read_runs(Some(&scenario), &measured).unwrap();
    let b = read_runs(None, &by_column).unwrap();
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.config, y.config, "{}", y.label);
        assert_eq!(x.measured_s, y.measured_s);
        assert_eq!(x.keys, y.keys);
        assert_eq!(y.label, format!("scenario=s.toml, {}", x.label));
        assert_eq!(y.scenario, dir.join("s.toml").display().to_string());
    }
    // a second file that sweeps nothing: its rows leave the keys empty
    let one = SCENARIO[..SCENARIO.find("[sweep]").unwrap()].replace("nodes = 2", "nodes = 3");
    std::fs::create_dir_all(dir.join("more")).unwrap();
    std::fs::write(dir.join("more/one.toml"), &one).unwrap();
    let first = named.lines().nth(2).unwrap().to_string();
    let mixed = format!(
        "scenario,cluster.network,cluster.nodes,strategy.fusion,iteration_time_s\n{first}\nmore/one.toml,,,,0.05\n"
    );
    let m = dir.join("mixed.csv");
    std::fs::write(&m, &mixed).unwrap();
    let runs = read_runs(None, &m).unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].label, "scenario=more/one.toml");
    assert!(runs[1].keys.is_empty());
    assert_eq!(runs[1].config.cluster.nodes, 3);
    assert_eq!(
        training::scenarios_of(&runs),
        [dir.join("s.toml"), dir.join("more/one.toml")].map(|p| p.display().to_string())
    );
    // a whole file held out: fit on s.toml's sixteen runs (however the
    // value spells it), predict more/one.toml's
    let held = dir.join("held.csv");
    std::fs::write(&held, format!("{named}more/one.toml,,,,0.05\n")).unwrap();
    for spelled in ["s.toml", "./s.toml"] {
        let v = training::validate(&TrainingValidateRequest {
            scenario: None,
            measured: held.clone(),
            params: vec![Param::MessageOverhead],
            fit_on: Some(("scenario".into(), vec![toml::Value::String(spelled.into())])),
        })
        .unwrap();
        assert_eq!(v.held_out.len(), 1, "{spelled}");
        assert_eq!(v.held_out[0].point, "scenario=more/one.toml");
    }
    let e = training::validate(&TrainingValidateRequest {
        scenario: None,
        measured: held.clone(),
        params: vec![Param::MessageOverhead],
        fit_on: Some((
            "scenario".into(),
            vec![toml::Value::String("x.toml".into())],
        )),
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("no run has x.toml; the runs' values are more/one.toml, s.toml"),
        "{e}"
    );
    // refusals, each with its line
    let bad = |csv: &str, scenario: Option<&Path>| -> String {
        let m = dir.join(format!("bad-{:x}.csv", fxhash(csv)));
        std::fs::write(&m, csv).unwrap();
        match read_runs(scenario, &m) {
            Err(CalibrateError::Input(msg)) => msg,
            Err(e) => panic!("not an input error: {e}"),
            Ok(_) => panic!("accepted: {csv}"),
        }
    };
    let e = bad(&named, Some(&scenario));
    assert!(
        e.ends_with(
            ":2: column `scenario` names each run's scenario file: give it or --scenario, not both"
        ),
        "{e}"
    );
    let e = bad(&text, None);
    assert!(
        e.contains(":2: which scenario") && e.contains("--scenario FILE"),
        "{e}"
    );
    let head = "scenario,cluster.network,cluster.nodes,strategy.fusion,iteration_time_s";
    let e = bad(&format!("{head}\n,eth-10g,2,0,0.1\n"), None);
    assert!(e.contains(":2: column `scenario` is empty"), "{e}");
    let e = bad(&format!("{head}\nnope.toml,eth-10g,2,0,0.1\n"), None);
    assert!(
        e.contains(":2: column `scenario`: ") && e.contains("nope.toml"),
        "{e}"
    );
    let e = bad(
        &format!("{head}\n{first}\nmore/one.toml,eth-10g,,,0.1\n"),
        None,
    );
    assert!(
        e.contains(
            ":3: column `cluster.network`: this run's scenario more/one.toml does not sweep it"
        ),
        "{e}"
    );
    let e = bad(
        "scenario,cluster.network,cluster.nodes,iteration_time_s\ns.toml,eth-10g,2,0.1\n",
        None,
    );
    assert!(
        e.contains(":2: this run's scenario s.toml sweeps `strategy.fusion`"),
        "{e}"
    );
    let e = bad(
        &format!("{head},model.batch_per_gpu\ns.toml,eth-10g,2,0,0.1,8\n"),
        None,
    );
    assert!(
        e.contains(":1: unknown column `model.batch_per_gpu`"),
        "{e}"
    );
    let e = bad(&format!("{head}\n"), None);
    assert!(
        e.ends_with(": has no measured run (a row a run after the header)"),
        "{e}"
    );
    // one file however the rows spell it
    let spelt = named.replacen("\ns.toml,", "\n./s.toml,", 1);
    let m = dir.join("spelt.csv");
    std::fs::write(&m, &spelt).unwrap();
    let runs = read_runs(None, &m).unwrap();
    assert_eq!(training::scenarios_of(&runs).len(), 1);
    assert!(
        runs[0].label.starts_with("scenario=./s.toml, "),
        "{}",
        runs[0].label
    );
    // --fit-on a key one file sweeps: the other file's runs are predicted
    // (2026-11-29 review: a run without the key panicked)
    let rows: Vec<&str> = named.lines().skip(2).take(5).collect();
    let fit_on = format!(
        "scenario,cluster.network,cluster.nodes,strategy.fusion,iteration_time_s\n{}\nmore/one.toml,,,,0.05\n",
        rows.join("\n")
    );
    let m = dir.join("fit-on.csv");
    std::fs::write(&m, &fit_on).unwrap();
    let v = training::validate(&TrainingValidateRequest {
        scenario: None,
        measured: m.clone(),
        params: vec![Param::MessageOverhead],
        fit_on: Some(training::parse_fit_on("cluster.nodes=2,4,8,16").unwrap()),
    })
    .unwrap();
    assert_eq!(v.held_out.len(), 1, "{v:?}");
    assert_eq!(v.held_out[0].point, "scenario=more/one.toml");
    let e = training::validate(&TrainingValidateRequest {
        scenario: None,
        measured: m,
        params: vec![Param::MessageOverhead],
        fit_on: Some(training::parse_fit_on("cluster.nods=2").unwrap()),
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("did you mean `cluster.nodes`"), "{e}");
}
