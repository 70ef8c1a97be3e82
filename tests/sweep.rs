//! End-to-end tests of `dtsim sweep` and `dtsim report merge`: one row per
//! point with the right columns and types, CSV = Parquet, kill-and-resume,
//! shards, and bad input.

use polars::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{assert_bad, dtsim, repo};

fn dir(name: &str) -> PathBuf {
    common::fresh_dir("sweep", name)
}

/// `dtsim report merge SHARDS… --out OUT`.
fn merge(shards: &[&str], out: &Path) -> Output {
    let mut args = vec!["report", "merge"];
    args.extend_from_slice(shards);
    args.extend(["--out", out.to_str().unwrap()]);
    dtsim(&args)
}

/// A 24-point grid (3 node counts × 2 networks × 2 schedules × 2 models).
const GRID: &str = r#"name = "grid"
iterations = 2
warmup_iterations = 1

[cluster]
nodes = 1
gpus_per_node = 4
network = "eth-10g"
model = "analytical"

[model]
preset = "resnet50"
batch_per_gpu = 32
gpu = "titan-xp"

[sweep]
"cluster.nodes" = [1, 2, 4]
"cluster.network" = ["eth-10g", "ib-edr-100g"]
"strategy.schedule" = ["fifo", "priority"]
"model.preset" = ["resnet50", "vgg16"]
"#;

fn scenario(d: &Path) -> String {
    let p = d.join("grid.toml");
    std::fs::write(&p, GRID).unwrap();
    p.display().to_string()
}

fn read(p: &Path) -> DataFrame {
    reports::table::read(p).unwrap()
}

#[test]
fn one_row_per_point_with_typed_columns_and_csv_equals_parquet() {
    let d = dir("rows");
    let s = scenario(&d);
    let csv = d.join("r.csv");
    let pq = d.join("r.parquet");
    for out in [&csv, &pq] {
        let o = dtsim(&["sweep", &s, "--out", out.to_str().unwrap(), "--jobs", "2"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // the same sweep gives the same bytes, whatever the thread count
    for out in [&csv, &pq] {
        let again = d.join(format!(
            "again.{}",
            out.extension().unwrap().to_str().unwrap()
        ));
        let o = dtsim(&["sweep", &s, "--out", again.to_str().unwrap(), "--jobs", "1"]);
        assert!(o.status.success());
        assert!(
            std::fs::read(&again).unwrap() == std::fs::read(out).unwrap(),
            "{} differs between runs",
            out.display()
        );
    }
    let a = read(&csv);
    let b = read(&pq);
    assert_eq!(a.height(), 24);
    for c in [
        "point",
        "grid_points",
        "cluster.nodes",
        "cluster.network",
        "strategy.schedule",
        "model.preset",
        "iteration_time_s",
        "throughput",
        "scaling_efficiency",
        "exposed_comm_s",
        "bytes_sent_per_gpu",
    ] {
        assert!(a.column(c).is_ok(), "missing column {c}");
    }
    assert_eq!(a.column("cluster.nodes").unwrap().dtype(), &DataType::Int64);
    assert_eq!(
        a.column("cluster.network").unwrap().dtype(),
        &DataType::String
    );
    assert_eq!(a.column("throughput").unwrap().dtype(), &DataType::Float64);
    let points: Vec<u64> = a
        .column("point")
        .unwrap()
        .cast(&DataType::UInt64)
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .map(|v| v.unwrap())
        .collect();
    assert_eq!(points, (0..24).collect::<Vec<u64>>());
    // CSV and Parquet hold the same table (CSV infers point as i64)
    let cast = |df: &DataFrame| {
        let mut df = df.clone();
        for c in [
            "point",
            "grid_points",
            "nodes",
            "gpus",
            "batch_per_gpu",
            "events",
        ] {
            let col = df.column(c).unwrap().cast(&DataType::Int64).unwrap();
            df.with_column(col).unwrap();
        }
        df
    };
    assert!(cast(&a).equals_missing(&cast(&b)), "{a}\n{b}");
    // the sweep's values match a plain `run` of the same grid
    let run = dtsim(&["run", &s, "--json"]);
    let lines: Vec<serde_json::Value> = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let thr = b.column("throughput").unwrap().f64().unwrap().clone();
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(thr.get(i), l["throughput"].as_f64());
    }
}

#[test]
fn a_killed_sweep_resumes_without_recomputing() {
    let d = dir("kill");
    let s = scenario(&d);
    let out = d.join("r.parquet");
    let ck = reports::sweep::checkpoint_path(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_dtsim"))
        .args(["sweep", &s, "--out", out.to_str().unwrap(), "--jobs", "1"])
        .env("DTSIM_SWEEP_TEST_DELAY_MS", "100")
        .env("DTSIM_SWEEP_TEST_BLOCK", "5")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // wait until a few points are in the checkpoint, then SIGKILL
    let t0 = std::time::Instant::now();
    loop {
        let n = std::fs::read_to_string(&ck)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n >= 5 || t0.elapsed().as_secs() > 30 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out.exists(), "the table is written only at the end");
    let finished = std::fs::read_to_string(&ck).unwrap().lines().count() - 1;
    assert!(
        (4..24).contains(&finished),
        "{finished} points finished before the kill"
    );
    // resume in blocks of 5: finished and missing points mix in each block
    let o = Command::new(env!("CARGO_BIN_EXE_dtsim"))
        .args(["sweep", &s, "--out", out.to_str().unwrap()])
        .env("DTSIM_SWEEP_TEST_BLOCK", "5")
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains(&format!("resumed {finished} finished points")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{} computed", 24 - finished)),
        "{err}"
    );
    assert!(
        !ck.exists(),
        "the checkpoint is removed once the table is written"
    );
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp") || n.ends_with(".new"))
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
    // the resumed table equals a clean run (in one block)
    let clean = d.join("clean.parquet");
    assert!(
        dtsim(&["sweep", &s, "--out", clean.to_str().unwrap()])
            .status
            .success()
    );
    assert!(read(&out).equals_missing(&read(&clean)));
}

#[test]
fn shards_merge_to_the_whole_and_bad_merges_are_refused() {
    let d = dir("shards");
    let s = scenario(&d);
    let whole = d.join("whole.parquet");
    assert!(
        dtsim(&["sweep", &s, "--out", whole.to_str().unwrap()])
            .status
            .success()
    );
    let mut parts = Vec::new();
    for i in 1..=3 {
        let p = d.join(format!("s{i}.parquet"));
        // in blocks of 3 points: a shard's table is written block by block
        let o = Command::new(env!("CARGO_BIN_EXE_dtsim"))
            .args([
                "sweep",
                &s,
                "--out",
                p.to_str().unwrap(),
                "--shard",
                &format!("{i}/3"),
            ])
            .env("DTSIM_SWEEP_TEST_BLOCK", "3")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(read(&p).height(), 8);
        parts.push(p.display().to_string());
    }
    let merged = d.join("merged.parquet");
    let mut args = vec!["report", "merge"];
    args.extend(parts.iter().map(|s| s.as_str()));
    args.extend(["--out", merged.to_str().unwrap()]);
    let o = dtsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(read(&merged).equals_missing(&read(&whole)));
    // overlapping and missing shards
    let o = merge(&[&parts[0], &parts[0], &parts[1], &parts[2]], &merged);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("overlapping"));
    let o = merge(&[&parts[0], &parts[2]], &merged);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing points"));
}

#[test]
fn bad_sweep_input_exits_2() {
    let d = dir("bad");
    let s = scenario(&d);
    // one bad value in the grid is reported before anything runs
    let bad = d.join("bad.toml");
    std::fs::write(
        &bad,
        GRID.replace(
            "\"cluster.nodes\" = [1, 2, 4]",
            "\"cluster.nodes\" = [1, 2, 0]",
        ),
    )
    .unwrap();
    let bad_out = d.join("bad.parquet");
    let o = dtsim(&[
        "sweep",
        bad.to_str().unwrap(),
        "--out",
        bad_out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.toml:") && err.contains("cluster.nodes"),
        "{err}"
    );
    assert!(!bad_out.exists() && !reports::sweep::checkpoint_path(&bad_out).exists());
    // the table's directory is missing: created (every output's policy)
    let deep = d.join("new/dir/r.csv");
    let o = dtsim(&["sweep", &s, "--out", deep.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(deep.exists());
    // a directory where the table should be: bad input, named
    let in_the_way = d.join("in-the-way.csv");
    std::fs::create_dir_all(&in_the_way).unwrap();
    let o = dtsim(&["sweep", &s, "--out", in_the_way.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}: is a directory", in_the_way.display())),
        "{err}"
    );
    let cases: [&[&str]; 4] = [
        &["sweep", &s, "--out", "r.xlsx"],
        &["sweep", &s, "--out", "r.csv", "--shard", "4/3"],
        &["sweep", "missing.toml", "--out", "r.csv"],
        &["report", "merge", "nothing.parquet", "--out", "x.parquet"],
    ];
    for args in cases {
        let o = dtsim(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn plots_from_a_sweep_and_a_trace() {
    let d = dir("plot");
    let s = scenario(&d);
    let csv = d.join("r.csv");
    assert!(
        dtsim(&["sweep", &s, "--out", csv.to_str().unwrap()])
            .status
            .success()
    );
    let png = d.join("p.png");
    let o = dtsim(&[
        "plot",
        csv.to_str().unwrap(),
        "--x",
        "cluster.nodes",
        "--y",
        "throughput",
        "--series",
        "strategy.schedule",
        "-o",
        png.to_str().unwrap(),
    ]);
    // two models and two networks share each (nodes, schedule): refused with a hint
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // one model and network: a clean line chart
    let one = d.join("one.toml");
    std::fs::write(
        &one,
        GRID.replace("\"cluster.network\" = [\"eth-10g\", \"ib-edr-100g\"]\n", "")
            .replace("\"model.preset\" = [\"resnet50\", \"vgg16\"]\n", ""),
    )
    .unwrap();
    let csv1 = d.join("one.csv");
    assert!(
        dtsim(&[
            "sweep",
            one.to_str().unwrap(),
            "--out",
            csv1.to_str().unwrap()
        ])
        .status
        .success()
    );
    for out in [png.clone(), d.join("p.svg")] {
        let o = dtsim(&[
            "plot",
            csv1.to_str().unwrap(),
            "--x",
            "gpus",
            "--y",
            "throughput",
            "--series",
            "strategy.schedule",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(std::fs::metadata(&out).unwrap().len() > 1000);
    }
    let svg = std::fs::read_to_string(d.join("p.svg")).unwrap();
    assert!(svg.contains("Throughput") && svg.contains("fifo") && svg.contains("priority"));
    // refusals of a plot of the one-model table, each at exit 2 with what
    // its message must say (and, for the first, must not)
    let refused_plot = |y: &str, extra: &[&str], says: &[&str]| {
        let mut args = vec![
            "plot",
            csv1.to_str().unwrap(),
            "--x",
            "gpus",
            "--y",
            y,
            "-o",
            png.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = dtsim(&args);
        assert_bad(&o, says);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // without the series, the hint names the swept key that tells the
    // rows apart, not the sweep's row number (a review: "make point the
    // series")
    let err = refused_plot(
        "throughput",
        &[],
        &[
            "but differ in strategy.schedule",
            "or make strategy.schedule the series",
        ],
    );
    assert!(!err.contains("point"), "{err}");
    refused_plot("nope", &[], &["no column `nope`"]);
    // options of the other kind of plot are refused, not ignored (a
    // review: --iterations on a table, --y beside --timeline)
    refused_plot(
        "throughput",
        &["--iterations", "2"],
        &["--iterations: the iterations of a timeline"],
    );
    assert_bad(
        &dtsim(&[
            "plot",
            "--timeline",
            "t.json",
            "--y",
            "throughput",
            "-o",
            png.to_str().unwrap(),
        ]),
        &["cannot be used with"],
    );
    // a misspelt column gets the nearest (a review: none)
    refused_plot(
        "thruput",
        &[],
        &["no column `thruput` in the table (did you mean `throughput`?)"],
    );
    // speedup over a baseline series
    let sp = d.join("sp.svg");
    let base = [
        "plot",
        csv1.to_str().unwrap(),
        "--x",
        "gpus",
        "--series",
        "strategy.schedule",
        "--kind",
        "bar",
        "-o",
        sp.to_str().unwrap(),
    ];
    let with = |extra: &[&str]| {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        dtsim(&v)
    };
    let o = with(&["--y", "throughput", "--baseline", "fifo"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&sp).unwrap();
    for text in [
        "Speedup in throughput over Schedule = fifo",
        "Speedup (×)",
        "priority",
    ] {
        assert!(svg.contains(text), "no `{text}` in the SVG");
    }
    let o = with(&["--y", "throughput", "--baseline", "lifo"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("it has: fifo, priority"));
    let o = with(&["--y", "throughput,iteration_time_s", "--baseline", "fifo"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exactly one --y"));
    let o = dtsim(&[
        "plot",
        csv1.to_str().unwrap(),
        "--x",
        "gpus",
        "--y",
        "throughput",
        "--baseline",
        "fifo",
        "-o",
        sp.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "--baseline needs --series");
    // a series over the x column itself is named as such
    let o = dtsim(&[
        "plot",
        csv1.to_str().unwrap(),
        "--x",
        "gpus",
        "--y",
        "throughput",
        "--series",
        "gpus",
        "-o",
        sp.to_str().unwrap(),
    ]);
    common::assert_bad(&o, &["--series gpus is also the x axis's column"]);
    // timeline
    let single = d.join("single.toml");
    std::fs::write(&single, GRID.split("[sweep]").next().unwrap()).unwrap();
    let trace = d.join("t.json");
    assert!(
        dtsim(&[
            "run",
            single.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap()
        ])
        .status
        .success()
    );
    let t = d.join("t.png");
    let o = dtsim(&[
        "plot",
        "--timeline",
        trace.to_str().unwrap(),
        "-o",
        t.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::metadata(&t).unwrap().len() > 1000);
}

#[test]
fn a_shard_with_no_points_merges_as_nothing() {
    let d = dir("empty-shard");
    let one = d.join("one.toml");
    std::fs::write(&one, GRID.split("[sweep]").next().unwrap()).unwrap();
    let mut parts = Vec::new();
    for i in 1..=2 {
        let p = d.join(format!("s{i}.csv"));
        let o = dtsim(&[
            "sweep",
            one.to_str().unwrap(),
            "--out",
            p.to_str().unwrap(),
            "--shard",
            &format!("{i}/2"),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        parts.push(p.display().to_string());
    }
    // shard 2/2 of a one-point grid: a header and no rows, and a warning
    assert_eq!(read(Path::new(&parts[1])).height(), 0);
    let merged = d.join("all.csv");
    let o = merge(&[&parts[0], &parts[1]], &merged);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read(&merged).height(), 1);
    let o = merge(&[&parts[1]], &merged);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no rows"));
}

/// Shards in different formats merge; rows whose point is not a point of
/// the grid are refused by file and row; an output that is a directory is
/// refused before anything runs; a point the simulator refuses is the
/// scenario's fault (exit 2, named by file).
#[test]
fn merges_and_outputs_that_must_be_refused_or_accepted() {
    let d = dir("merge-edges");
    let s = scenario(&d);
    let whole = d.join("whole.parquet");
    assert!(
        dtsim(&["sweep", &s, "--out", whole.to_str().unwrap()])
            .status
            .success()
    );
    let mut parts = Vec::new();
    for (i, ext) in [(1, "csv"), (2, "parquet")] {
        let p = d.join(format!("s{i}.{ext}"));
        let o = dtsim(&[
            "sweep",
            &s,
            "--out",
            p.to_str().unwrap(),
            "--shard",
            &format!("{i}/2"),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        parts.push(p.display().to_string());
    }
    let merged = d.join("merged.parquet");
    let o = merge(&[&parts[0], &parts[1]], &merged);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read(&merged).height(), read(&whole).height());
    // a row whose point lies outside the grid (edited by hand)
    let text = std::fs::read_to_string(&parts[0]).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let first = lines[1].split_once(',').unwrap().1.to_string();
    lines[1] = format!("99,{first}");
    let edited = d.join("edited.csv");
    std::fs::write(&edited, lines.join("\n") + "\n").unwrap();
    let o = merge(&[edited.to_str().unwrap(), &parts[1]], &merged);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("edited.csv: row 1: point 99 is not a point of a grid of 24"),
        "{err}"
    );
    // the output is a directory: refused at once, nothing left behind
    let as_dir = d.join("dir.csv");
    std::fs::create_dir(&as_dir).unwrap();
    let o = dtsim(&["sweep", &s, "--out", as_dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is a directory"), "{err}");
    assert!(!reports::sweep::checkpoint_path(&as_dir).exists());
    // 1000 iterations of two simulated days each overflow the clock
    let long = d.join("long.toml");
    std::fs::write(
        &long,
        r#"iterations = 1000
[cluster]
nodes = 1
gpus_per_node = 2
network = "eth-10g"
model = "analytical"
[model]
batch_per_gpu = 1
[[model.layers]]
name = "slow"
params = 1000
forward = "86400s"
backward = "86400s"
[sweep]
"cluster.nodes" = [1, 2]
"#,
    )
    .unwrap();
    let o = dtsim(&[
        "sweep",
        long.to_str().unwrap(),
        "--out",
        d.join("long.csv").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("long.toml: point 0"), "{err}");
}

/// `--where` that matches nothing lists the values; a malformed one says
/// the form; an unknown column is named. (The commands of docs/sweeps.md
/// themselves are run by tests/docs.rs.)
#[test]
fn where_filters_that_match_nothing_say_what_there_is() {
    let d = dir("where");
    let r = d.join("results.parquet");
    let example = repo("scenarios/examples/scaling-10gbe-vs-ib.toml");
    let o = dtsim(&["sweep", &example, "--out", r.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plot = |w: &str| {
        dtsim(&[
            "plot",
            r.to_str().unwrap(),
            "--x",
            "gpus",
            "--y",
            "throughput",
            "--where",
            w,
            "-o",
            d.join("never.png").to_str().unwrap(),
        ])
    };
    for (w, says) in [
        ("cluster.network=eth-1g", "it takes eth-10g, ib-edr-100g"),
        ("cluster.network", "expected COL=VALUE"),
        ("nosuch=1", "nosuch"),
    ] {
        let o = plot(w);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{w}: {err}");
        assert!(err.contains(says), "{w}: {err}");
    }
    assert!(!d.join("never.png").exists());
}

/// `dtsim plot --xlabel/--ylabel/--legend-title` replace the titles, and a
/// `--where` filter is stated in the picture's title.
#[test]
fn plot_labels_are_the_users_and_filters_are_stated() {
    let d = dir("labels");
    let r = d.join("results.csv");
    let example = repo("scenarios/examples/scaling-10gbe-vs-ib.toml");
    assert!(
        dtsim(&["sweep", &example, "--out", r.to_str().unwrap()])
            .status
            .success()
    );
    let svg = d.join("p.svg");
    let o = dtsim(&[
        "plot",
        r.to_str().unwrap(),
        "--x",
        "gpus",
        "--y",
        "throughput",
        "--series",
        "strategy.dense",
        "--where",
        "cluster.network=eth-10g",
        "--xlabel",
        "Workers",
        "--ylabel",
        "Images per second",
        "--legend-title",
        "Method",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    for want in [
        "\nWorkers\n",
        "\nImages per second\n",
        "\nMethod\n",
        "(Inter-node network = eth-10g)\n",
    ] {
        assert!(text.contains(want), "no {want} in the SVG");
    }
    assert!(!text.contains('`'), "no backticks in a picture");
}

/// `dtsim sweep --uncertainty N` adds each point's percentiles, and `dtsim
/// plot` draws them as error bars (a picture unlike the one without);
/// a count outside 2..10000 is refused.
#[test]
fn uncertainty_columns_become_error_bars() {
    let d = dir("uncertainty");
    let scenario = d.join("grid.toml");
    std::fs::write(&scenario, GRID).unwrap();
    let with = d.join("with.csv");
    let o = dtsim(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--out",
        with.to_str().unwrap(),
        "--uncertainty",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let df = CsvReadOptions::default()
        .try_into_reader_with_file_path(Some(with.clone()))
        .unwrap()
        .finish()
        .unwrap();
    for c in ["uncertainty_samples", "throughput_p5", "throughput_p95"] {
        assert!(df.column(c).is_ok(), "{c}");
    }
    let plot = |name: &str, table: &Path| {
        let out = d.join(name);
        let o = dtsim(&[
            "plot",
            table.to_str().unwrap(),
            "--x",
            "gpus",
            "--y",
            "throughput",
            "--series",
            "network",
            "--where",
            "model=resnet50",
            "--where",
            "schedule=fifo",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
        std::fs::read(out).unwrap()
    };
    let without = d.join("without.csv");
    let o = dtsim(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--out",
        without.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    assert!(plot("bars.png", &with) != plot("plain.png", &without));
    let o = dtsim(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--out",
        d.join("x.csv").to_str().unwrap(),
        "--uncertainty",
        "1",
    ]);
    common::assert_bad(&o, &["--uncertainty 1", "2 to 10000"]);
    // the file after the flag is taken for its optional N: the message
    // says where the file goes, for every command with the flag
    for cmd in ["run", "sweep", "report"] {
        let o = dtsim(&[cmd, "--uncertainty", scenario.to_str().unwrap()]);
        common::assert_bad(
            &o,
            &["is a file, not a number of runs", "FILE --uncertainty"],
        );
    }
    let o = dtsim(&["run", scenario.to_str().unwrap(), "--uncertainty", "many"]);
    common::assert_bad(&o, &["`many` is not a whole number of runs"]);
}

/// `dtsim report SCENARIO --uncertainty N` runs its sweep with the
/// percentiles, which its table keeps; a results table is refused the
/// flag (it cannot be run again), with exit 2.
#[test]
fn reports_take_uncertainty_for_a_scenario_only() {
    let d = dir("report-uncertainty");
    let scenario = d.join("grid.toml");
    std::fs::write(&scenario, GRID).unwrap();
    let out = d.join("r");
    let o = dtsim(&[
        "report",
        scenario.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--uncertainty",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(
        csv.lines().next().unwrap().ends_with("throughput_p95"),
        "{csv}"
    );
    let o = dtsim(&[
        "report",
        out.join("results.csv").to_str().unwrap(),
        "-o",
        d.join("again").to_str().unwrap(),
        "--uncertainty",
        "4",
    ]);
    common::assert_bad(
        &o,
        &[
            "--uncertainty",
            "results table",
            "dtsim sweep --uncertainty",
        ],
    );
}
