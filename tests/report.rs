//! End-to-end tests of `dtsim report` and of the figures `dtsim plot`
//! draws: from a scenario and from a results table, the files they write
//! (decoded PNGs, SVG text), the numbers in report.md against the table,
//! the labels, notes and speedups the pictures show, byte determinism,
//! and bad input with its exit code.

use polars::prelude::*;
use std::path::{Path, PathBuf};

mod common;
use common::{assert_bad, dtsim, stderr};

fn dir(name: &str) -> PathBuf {
    common::fresh_dir("report", name)
}

/// 3 node counts × 2 methods × 2 networks × 2 schedules = 24 points: 8
/// series at most, so one of the 2-valued keys is held in the plots.
const GRID: &str = r#"name = "ps-vs-ring"
iterations = 2
warmup_iterations = 1

[cluster]
nodes = 1
gpus_per_node = 4
network = "eth-10g"
model = "analytical"

[model]
preset = "vgg16"
batch_per_gpu = 32
gpu = "titan-xp"

[sweep]
"cluster.nodes" = [1, 2, 4]
"cluster.network" = ["eth-10g", "ib-edr-100g"]
"strategy.dense" = ["allreduce", "ps"]
"strategy.schedule" = ["fifo", "priority"]
"model.batch_per_gpu" = [16, 32]
"#;

/// Decodes a PNG; returns (width, height, grey-level standard deviation).
fn decode(path: &Path) -> (u32, u32, f64) {
    let file = std::fs::File::open(path).unwrap();
    let mut r = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).unwrap();
    let grey: Vec<f64> = buf[..info.buffer_size()]
        .chunks(3)
        .map(|p| (p[0] as f64 + p[1] as f64 + p[2] as f64) / 3.0)
        .collect();
    let n = grey.len() as f64;
    let mean = grey.iter().sum::<f64>() / n;
    let sd = (grey.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n).sqrt();
    (info.width, info.height, sd)
}

fn f64s(df: &DataFrame, c: &str) -> Vec<f64> {
    df.column(c)
        .unwrap()
        .cast(&DataType::Float64)
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .map(|v| v.unwrap())
        .collect()
}

#[test]
fn a_report_from_a_scenario_has_its_plots_and_the_tables_numbers() {
    let d = dir("scenario");
    let s = d.join("grid.toml");
    std::fs::write(&s, GRID).unwrap();
    let out = d.join("out");
    let o = dtsim(&["report", s.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "throughput.png",
        "scaling_efficiency.png",
        "speedup.png",
        "breakdown.png",
        "timeline-fastest.png",
        "timeline-slowest.png",
    ] {
        let (w, h, sd) = decode(&out.join(f));
        assert_eq!((w, h), (1200, 800), "{f}");
        assert!(sd > 10.0, "{f}: grey-level sd {sd}");
    }
    for f in ["timeline-fastest.json", "timeline-slowest.json"] {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(f)).unwrap()).unwrap();
        assert!(v["traceEvents"].as_array().is_some_and(|a| !a.is_empty()));
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let table = reports::table::read(&out.join("results.csv")).unwrap();
    assert_eq!(table.height(), 48);
    let pq = reports::table::read(&out.join("results.parquet")).unwrap();
    assert_eq!(pq.height(), 48);
    // every plot is embedded, and the held key is said
    for f in [
        "throughput.png",
        "speedup.png",
        "breakdown.png",
        "timeline-slowest.png",
    ] {
        assert!(md.contains(&format!("]({f})")), "{f} not embedded");
    }
    assert!(md.contains("the plots hold `"), "{md}");
    assert!(
        md.contains("## Scenario") && md.contains("\"strategy.dense\" = [\"allreduce\", \"ps\"]")
    );
    // the table in report.md: one row per point, throughput to 4 figures
    let thr = f64s(&table, "throughput");
    let rows: Vec<Vec<&str>> = md
        .lines()
        .skip_while(|l| !l.starts_with("| point |"))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 48);
    let head: Vec<&str> = md
        .lines()
        .find(|l| l.starts_with("| point |"))
        .unwrap()
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect();
    let col = head
        .iter()
        .position(|h| h.starts_with("throughput"))
        .unwrap();
    for (r, row) in rows.iter().enumerate() {
        let shown: f64 = row[col].parse().unwrap();
        // 4 significant figures: within half a unit of the 4th figure
        let ulp = 10f64.powf(thr[r].log10().floor() - 3.0);
        assert!(
            (shown - thr[r]).abs() <= 0.5 * ulp + 1e-12,
            "row {r}: {shown} vs {}",
            thr[r]
        );
    }
    // the headline names the fastest and slowest throughput of each batch
    // size (samples/s of different batches are compared apart) on the
    // largest cluster (16 GPUs)
    assert!(md.contains("At 16 GPUs, the largest cluster"), "{md}");
    let batch = f64s(&table, "model.batch_per_gpu");
    let gpus = f64s(&table, "gpus");
    for b in [16.0, 32.0] {
        let group: Vec<f64> = (0..thr.len())
            .filter(|&r| batch[r] == b && gpus[r] == 16.0)
            .map(|r| thr[r])
            .collect();
        let max = group.iter().cloned().fold(f64::MIN, f64::max);
        let min = group.iter().cloned().fold(f64::MAX, f64::min);
        let line = md
            .lines()
            .find(|l| l.starts_with(&format!("- `model.batch_per_gpu` = {b}: fastest")))
            .unwrap_or_else(|| panic!("no headline for batch {b} in {md}"));
        let said: f64 = line
            .split(" times the throughput")
            .next()
            .and_then(|h| h.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no ratio in {line}"));
        // to 4 significant figures
        let ratio = max / min;
        let ulp = 10f64.powf(ratio.log10().floor() - 3.0);
        assert!(
            (said - ratio).abs() <= 0.5 * ulp + 1e-12,
            "{said} vs {ratio}"
        );
    }
    // the same command gives the same bytes
    let first: Vec<Vec<u8>> = [
        "report.md",
        "throughput.png",
        "breakdown.png",
        "results.csv",
    ]
    .iter()
    .map(|f| std::fs::read(out.join(f)).unwrap())
    .collect();
    let o = dtsim(&["report", s.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success());
    for (f, bytes) in [
        "report.md",
        "throughput.png",
        "breakdown.png",
        "results.csv",
    ]
    .iter()
    .zip(first)
    {
        assert_eq!(std::fs::read(out.join(f)).unwrap(), bytes, "{f} differs");
    }
}

#[test]
fn a_report_from_a_results_table() {
    let d = dir("table");
    let s = d.join("grid.toml");
    std::fs::write(&s, GRID).unwrap();
    let r = d.join("r.parquet");
    assert!(
        dtsim(&["sweep", s.to_str().unwrap(), "--out", r.to_str().unwrap()])
            .status
            .success()
    );
    let out = d.join("out");
    let o = dtsim(&["report", r.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains(&format!("from `{}`", r.display())));
    // no scenario at hand: no timelines, no scenario text
    assert!(!out.join("timeline-fastest.png").exists());
    assert!(!md.contains("## Scenario"));
    assert!(out.join("speedup.png").exists());
}

#[test]
fn bad_report_input_exits_2() {
    let d = dir("bad");
    let empty = d.join("empty.csv");
    std::fs::write(&empty, "point,grid_points,gpus,iteration_time_s,throughput,throughput_unit,scaling_efficiency,compute_s,compression_s,exposed_comm_s,bytes_sent_per_gpu\n").unwrap();
    let other = d.join("other.csv");
    std::fs::write(&other, "a,b\n1,2\n").unwrap();
    let a_file = d.join("a-file");
    std::fs::write(&a_file, "").unwrap();
    let s = d.join("grid.toml");
    std::fs::write(&s, GRID).unwrap();
    let o: Vec<String> = ["o1", "o2", "o3", "o4"]
        .iter()
        .map(|n| d.join(n).display().to_string())
        .collect();
    let blocked = a_file.join("sub").display().to_string();
    let cases: [(&[&str], &str); 5] = [
        (&["report", empty.to_str().unwrap(), "-o", &o[0]], "no rows"),
        (
            &["report", other.to_str().unwrap(), "-o", &o[1]],
            "no `gpus` column",
        ),
        (
            &["report", "missing.parquet", "-o", &o[2]],
            "missing.parquet",
        ),
        (
            &["report", "r.xlsx", "-o", &o[3]],
            "r.xlsx: give a scenario (.toml) or a results table (.csv, .parquet)",
        ),
        // the output directory is a file
        (
            &[
                "report",
                s.to_str().unwrap(),
                "-o",
                a_file.to_str().unwrap(),
            ],
            "a-file: exists and is not a directory",
        ),
    ];
    for (args, says) in cases {
        let o = dtsim(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // the output directory cannot be made (a file is in the way): the
    // output's failure, not the input's (exit 1)
    let o = dtsim(&["report", s.to_str().unwrap(), "-o", &blocked]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("a-file/sub: Not a directory"), "{err}");
}

#[test]
fn a_swept_key_without_a_dot_is_a_swept_key() {
    let d = dir("plain-key");
    let s = d.join("iters.toml");
    let text = GRID.replace(
        "\"model.batch_per_gpu\" = [16, 32]\n",
        "\"iterations\" = [2, 3]\n",
    );
    std::fs::write(&s, text).unwrap();
    let out = d.join("out");
    let o = dtsim(&["report", s.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| `iterations` | 2, 3 |"), "{md}");
    // and from the table alone
    let out2 = d.join("out2");
    let r = out.join("results.parquet");
    let o = dtsim(&["report", r.to_str().unwrap(), "-o", out2.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out2.join("report.md")).unwrap();
    assert!(md.contains("| `iterations` | 2, 3 |"), "{md}");
}

/// A hand-edited table whose speedup key (`strategy.fusion`, with
/// `strategy.allreduce` held at `ring`) has no number left in the rows
/// shown: the report is written without a speedup plot, not a crash.
#[test]
fn a_table_whose_speedup_key_has_no_values_still_reports() {
    let d = dir("no-speedup-base");
    let table = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/report/series-key-without-values.csv"
    );
    let out = d.join("out");
    let o = dtsim(&["report", table, "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(out.join("report.md").exists() && out.join("throughput.png").exists());
    assert!(!out.join("speedup.png").exists());
}

/// A plot the table cannot give (a non-numeric compute_s) fails the
/// report by the plot's name, and the plots drawn before it are removed:
/// no half report is left.
#[test]
fn a_failing_plot_names_itself_and_leaves_no_half_report() {
    let d = dir("half");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/report/series-key-without-values.csv"
    ))
    .unwrap();
    let mut lines: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    // a column of blanks reads (a value that is not a number is refused
    // at reading, with its line) but cannot be drawn
    let c = lines[0].iter().position(|h| h == "compute_s").unwrap();
    for l in &mut lines[1..] {
        l[c] = String::new();
    }
    let table = d.join("t.csv");
    let joined: Vec<String> = lines.iter().map(|l| l.join(",")).collect();
    std::fs::write(&table, joined.join("\n") + "\n").unwrap();
    let out = d.join("out");
    let o = dtsim(&[
        "report",
        table.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("breakdown.png: column `compute_s` is not numeric"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // into a directory that already holds a report: what was there stays,
    // only what this run created goes
    std::fs::write(out.join("report.md"), "an earlier report\n").unwrap();
    std::fs::write(out.join("throughput.png"), "an earlier plot").unwrap();
    let o = dtsim(&[
        "report",
        table.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let mut left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["report.md", "throughput.png"]);
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        "an earlier report\n"
    );
}

/// `--where` keeps only the rows it names (the report's table has those
/// alone); `--x` and `--series` steer the plots, an unknown one is named;
/// a model is never the speedup's key (one model's samples/s over
/// another's is no speedup).
#[test]
fn the_report_is_steered_and_never_divides_models() {
    let d = dir("steered");
    let s = d.join("grid.toml");
    std::fs::write(&s, GRID).unwrap();
    let out = d.join("eth");
    let o = dtsim(&[
        "report",
        s.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--where",
        "cluster.network=eth-10g",
        "--series",
        "strategy.dense",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("eth-10g") && !md.contains("| ib-edr-100g"),
        "{md}"
    );
    assert!(out.join("speedup.png").exists());
    let o = dtsim(&[
        "report",
        s.to_str().unwrap(),
        "-o",
        d.join("bad").to_str().unwrap(),
        "--series",
        "nosuch",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nosuch"));
    // nodes × model: the only series is the model, so no speedup plot
    let models = d.join("models.toml");
    std::fs::write(
        &models,
        GRID.replace(
            "\"cluster.network\" = [\"eth-10g\", \"ib-edr-100g\"]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n\"strategy.schedule\" = [\"fifo\", \"priority\"]\n\"model.batch_per_gpu\" = [16, 32]\n",
            "\"model.preset\" = [\"vgg16\", \"resnet50\"]\n",
        ),
    )
    .unwrap();
    let out = d.join("models");
    let o = dtsim(&[
        "report",
        models.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("throughput.png").exists());
    assert!(
        !out.join("speedup.png").exists(),
        "a speedup of one model over another"
    );
}

/// The text of every `<text>` element of an SVG file.
fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// Asserts that some text of the SVG at `path` contains each of `wanted`.
#[track_caller]
fn assert_texts(path: &Path, wanted: &[&str]) -> Vec<String> {
    let texts = svg_texts(path);
    for w in wanted {
        assert!(
            texts.iter().any(|t| t.contains(w)),
            "{}: no text with `{w}` in {texts:?}",
            path.display()
        );
    }
    texts
}

/// 2 node counts × 3 networks × 2 models × 2 methods = 24 points: model
/// and method make 4 series, the network's 3 values would make 12, so the
/// report holds the network, and says so in report.md and on every picture.
fn nodes_network_model() -> String {
    swept(
        "\"cluster.nodes\" = [1, 2]\n\
         \"cluster.network\" = [\"eth-10g\", \"ib-edr-100g\", \"eth-25g\"]\n\
         \"model.preset\" = [\"vgg16\", \"resnet50\"]\n\
         \"strategy.dense\" = [\"allreduce\", \"ps\"]\n",
    )
}

/// [`GRID`]'s scenario with `sweep` (lines of `"KEY" = [VALUES]`) as its
/// sweep.
fn swept(sweep: &str) -> String {
    format!("{}[sweep]\n{sweep}", GRID.split("[sweep]").next().unwrap())
}

/// A nodes × network × model report (in SVG, to read its pictures'
/// text): human labels on every axis and legend, no backticks in any
/// picture, the held network stated on every picture and in report.md,
/// compression (zero everywhere) left out of the breakdown, each timeline
/// titled by its point, chosen within one model; the speedup is of ps over
/// allreduce between points that differ in the method alone.
#[test]
fn a_nodes_network_model_report_says_what_it_holds_and_compares_like_with_like() {
    let d = dir("nnm");
    let s = d.join("nnm.toml");
    // the pure model, whose GPUs all run alike (one timeline track each)
    std::fs::write(&s, format!("ideal = true\n{}", nodes_network_model())).unwrap();
    let out = d.join("out");
    let o = dtsim(&[
        "report",
        s.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--format",
        "svg",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("the plots hold `cluster.network` = eth-10g (each picture says so"),
        "{md}"
    );
    assert!(
        md.contains("![Throughput (samples/s)](throughput.svg)"),
        "{md}"
    );
    assert!(
        md.contains("### Speedup over dense method = allreduce"),
        "{md}"
    );
    assert!(
        md.contains(
            "Compute and exposed communication (not hidden behind compute) per iteration \
             at 8 GPUs, by model and dense method; compression (zero at every point drawn) is left out."
        ),
        "{md}"
    );
    // the timelines are chosen among one model's points, and say which
    assert!(
        md.contains("The fastest point of the breakdown with `model.preset` = vgg16 (point "),
        "{md}"
    );
    let held = "(Inter-node network = eth-10g)";
    for (file, wanted) in [
        (
            "throughput.svg",
            vec![
                "Throughput (samples/s) against GPUs",
                held,
                "Throughput (samples/s)",
                "GPUs",
                "Model, Dense method",
                "vgg16, allreduce",
            ],
        ),
        (
            "scaling_efficiency.svg",
            vec![held, "Scaling efficiency (%)"],
        ),
        (
            "speedup.svg",
            vec![
                "Speedup in throughput over Dense method = allreduce",
                held,
                "Speedup (×)",
            ],
        ),
        (
            "breakdown.svg",
            vec![
                "Time per iteration at 8 GPUs",
                held,
                "Compute",
                "Exposed communication",
            ],
        ),
        (
            "timeline-fastest.svg",
            vec![
                "Timeline of the fastest point, Inter-node network = eth-10g, Machines = 2, Model = vgg16, Dense method = ",
                "(one GPU shown: all 8 run alike)",
                "Forward pass",
            ],
        ),
        (
            "timeline-slowest.svg",
            vec!["Timeline of the slowest point, ", "Model = vgg16"],
        ),
    ] {
        let texts = assert_texts(&out.join(file), &wanted);
        assert!(
            !texts.iter().any(|t| t.contains('`')),
            "{file}: a backtick in {texts:?}"
        );
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("Compression") || t.contains("_s")),
            "{file}: {texts:?}"
        );
    }
    // one GPU's rows, once: a compute and a communication row
    let mut rows: Vec<String> = svg_texts(&out.join("timeline-fastest.svg"))
        .into_iter()
        .filter(|t| t.starts_with("GPU "))
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        ["GPU 0 (node 0) communication", "GPU 0 (node 0) compute"]
    );

    // the speedup the report draws: each point's throughput over that of
    // the allreduce point with the same nodes, network and model, never a
    // point of another model or network
    let df = CsvReadOptions::default()
        .try_into_reader_with_file_path(Some(out.join("results.csv")))
        .unwrap()
        .finish()
        .unwrap();
    let sp = reports::columns::speedup(&df, "gpus", "throughput", "strategy.dense", "allreduce")
        .unwrap();
    let texts = |c: &str| reports::columns::texts(&sp, c).unwrap();
    let (nodes, net, model, dense) = (
        texts("cluster.nodes"),
        texts("cluster.network"),
        texts("model.preset"),
        texts("strategy.dense"),
    );
    let thr = f64s(&sp, "throughput");
    let got = f64s(&sp, reports::columns::SPEEDUP);
    for r in 0..sp.height() {
        let base = (0..sp.height())
            .find(|&b| {
                nodes[b] == nodes[r]
                    && net[b] == net[r]
                    && model[b] == model[r]
                    && dense[b].as_deref() == Some("allreduce")
            })
            .unwrap();
        assert_eq!(got[r], thr[r] / thr[base], "row {r}");
    }
    // and over a model, refused
    let e =
        reports::columns::speedup(&df, "gpus", "throughput", "model.preset", "vgg16").unwrap_err();
    assert!(e.to_string().contains("not comparable"), "{e}");
}

/// The report.md of `scenario`, written as `NAME/s.toml` and reported
/// into `NAME/out` (the command must succeed).
fn report_md(name: &str, scenario: &str) -> String {
    let d = dir(name);
    let s = d.join("s.toml");
    std::fs::write(&s, scenario).unwrap();
    let out = d.join("out");
    let o = dtsim(&["report", s.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read_to_string(out.join("report.md")).unwrap()
}

/// A nodes × compute-jitter sweep (the stragglers example's form): the
/// headline compares the jitters at the largest cluster, fastest against
/// slowest, instead of one line per jitter or "every point … (equal to 4
/// figures)".
#[test]
fn a_stragglers_headline_compares_the_jitters() {
    let md = report_md(
        "jitter",
        &swept("\"cluster.nodes\" = [1, 2]\n\"model.compute_jitter\" = [0.0, 0.1]\n"),
    );
    let headline: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("At 8 GPUs"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(headline.len(), 1, "{md}");
    assert!(
        headline[0].starts_with("Fastest: `model.compute_jitter` = 0.0 — ")
            && headline[0].contains("Slowest: `model.compute_jitter` = 0.1 — ")
            && headline[0].contains("times the throughput of the slowest."),
        "{}",
        headline[0]
    );
    assert!(!md.contains("equal to 4 figures"), "{md}");
}

/// `dtsim plot`'s labels: --xlabel, --ylabel and --legend-title replace
/// the axis and legend titles; a --where filter is stated after the
/// title; default titles use human names, never backticks.
#[test]
fn plot_labels_and_filters_are_on_the_picture() {
    let d = dir("plot-labels");
    let s = d.join("nnm.toml");
    std::fs::write(&s, nodes_network_model()).unwrap();
    let csv = d.join("r.csv");
    let o = dtsim(&["sweep", s.to_str().unwrap(), "--out", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = d.join("t.svg");
    let plot = |extra: &[&str]| {
        let mut args = vec![
            "plot",
            csv.to_str().unwrap(),
            "--x",
            "gpus",
            "--y",
            "throughput",
            "--series",
            "strategy.dense",
            "--where",
            "cluster.network=ib-edr-100g",
            "--where",
            "model.preset=resnet50",
            "-o",
        ];
        args.extend_from_slice(extra);
        dtsim(&args)
    };
    let o = plot(&[svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let texts = assert_texts(
        &svg,
        &[
            "Throughput against GPUs, one line per dense method (Inter-node network = ib-edr-100g; Model = resnet50)",
            "Throughput (samples/s)",
            "GPUs",
            "Dense method",
        ],
    );
    assert!(!texts.iter().any(|t| t.contains('`')), "{texts:?}");
    let o = plot(&[
        svg.to_str().unwrap(),
        "--xlabel",
        "Workers",
        "--ylabel",
        "Images per second",
        "--legend-title",
        "Synchronisation",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let texts = assert_texts(&svg, &["Workers", "Images per second", "Synchronisation"]);
    assert!(
        !texts
            .iter()
            .any(|t| t == "GPUs" || t == "Dense method" || t == "Throughput (samples/s)"),
        "{texts:?}"
    );
}

/// Exit codes of `dtsim plot` and `dtsim report` by what failed: a
/// speedup over a model, a picture name that is not .png or .svg and a
/// bad --format are the input's (2); a picture or report file that cannot
/// be written is not (1).
#[test]
fn plot_and_report_exit_codes() {
    let d = dir("exit");
    let s = d.join("nnm.toml");
    std::fs::write(&s, nodes_network_model()).unwrap();
    let csv = d.join("r.csv");
    assert!(
        dtsim(&["sweep", s.to_str().unwrap(), "--out", csv.to_str().unwrap()])
            .status
            .success()
    );
    let csv = csv.to_str().unwrap();
    let in_the_way = d.join("a-file");
    std::fs::write(&in_the_way, "").unwrap();
    let blocked = in_the_way.join("p.svg");
    let plot = |series: &str, baseline: &str, held: &str, out: &str| {
        dtsim(&[
            "plot",
            csv,
            "--x",
            "gpus",
            "--y",
            "throughput",
            "--series",
            series,
            "--baseline",
            baseline,
            "--kind",
            "bar",
            "--where",
            "cluster.network=eth-10g",
            "--where",
            held,
            "-o",
            out,
        ])
    };
    let ok = d.join("ok.svg");
    assert_bad(
        &plot(
            "model.preset",
            "vgg16",
            "strategy.dense=ps",
            ok.to_str().unwrap(),
        ),
        &["no speedup over `model.preset`", "not comparable"],
    );
    assert!(!ok.exists());
    let jpg = d.join("p.jpg");
    assert_bad(
        &plot(
            "strategy.dense",
            "ps",
            "model.preset=vgg16",
            jpg.to_str().unwrap(),
        ),
        &["p.jpg: the file name must end in .png or .svg"],
    );
    let o = plot(
        "strategy.dense",
        "ps",
        "model.preset=vgg16",
        blocked.to_str().unwrap(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("a-file/p.svg"), "{}", stderr(&o));
    // a report whose file cannot be written: 1; a bad --format: 2
    let o = dtsim(&["report", csv, "-o", in_the_way.join("r").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_bad(
        &dtsim(&["report", csv, "-o", "x", "--format", "jpg"]),
        &["--format", "png, svg"],
    );
}

/// Points equal to the figures shown are said to be so, and the one named
/// fastest (or slowest) is the first in the table: a compute-bound model
/// runs the same under FIFO and priority (a review: the report named
/// priority fastest, the last of two equal to the bit, and its timeline
/// "the fastest point").
#[test]
fn equal_points_are_said_equal_and_the_first_is_named() {
    let md = report_md(
        "equal",
        &swept(
            "\"cluster.nodes\" = [1, 2]\n\
             \"strategy.dense\" = [\"allreduce\", \"ps\"]\n\
             \"strategy.schedule\" = [\"fifo\", \"priority\"]\n",
        )
        .replace("preset = \"vgg16\"", "preset = \"resnet50\""),
    );
    let line = md
        .lines()
        .find(|l| l.starts_with("Fastest: "))
        .unwrap_or_else(|| panic!("{md}"));
    // both ends name FIFO, the first of each equal pair, and its twin
    for end in ["Fastest: ", "Slowest: "] {
        let at = line.find(end).unwrap_or_else(|| panic!("{line}"));
        let part = &line[at..];
        assert!(
            part.contains(
                "`strategy.schedule` = fifo (equal, to 4 figures, with `strategy.dense` = "
            ) && part.contains("`strategy.schedule` = priority)"),
            "{line}"
        );
    }
}

/// The report's x and series are settings the sweep varies: a result as
/// the x axis, or a series that is the x axis, is refused (a review: each
/// was accepted, the first drawing "Throughput against throughput", the
/// second dropping the series without a word).
#[test]
fn the_reports_axes_are_settings() {
    let d = dir("axes");
    let s = d.join("s.toml");
    std::fs::write(
        &s,
        swept("\"cluster.nodes\" = [1, 2]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n"),
    )
    .unwrap();
    let out = d.join("r");
    let (s, out) = (s.to_str().unwrap(), out.to_str().unwrap());
    assert_bad(
        &dtsim(&["report", s, "-o", out, "--x", "throughput"]),
        &[
            "--x throughput: the x axis is a setting the sweep varies (gpus, cluster.nodes, strategy.dense)",
        ],
    );
    assert_bad(
        &dtsim(&[
            "report",
            s,
            "-o",
            out,
            "--x",
            "gpus",
            "--series",
            "cluster.nodes",
        ]),
        &["--series cluster.nodes: that is the x axis"],
    );
    assert!(
        dtsim(&[
            "report",
            s,
            "-o",
            out,
            "--x",
            "gpus",
            "--series",
            "strategy.dense"
        ])
        .status
        .success()
    );
}
