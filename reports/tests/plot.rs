//! Plots written to files: PNG header and size, not blank, SVG text, byte
//! determinism, and the errors a user can cause.
//!
//! A PNG is decoded (the `png` crate) and checked for its size, colour
//! type and pixel variance; an SVG for its text elements.

use polars::prelude::*;
use reports::columns::ColumnError;
use reports::plot::{Kind, PlotError, PlotSpec, Source, draw, plot_table, plot_timeline};
use reports::report::ReportError;
use serde_json::json;
use std::path::PathBuf;

/// A fresh directory for one test's files, kept after the run for a look.
fn out_dir(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("plot-tests")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The text of every `<text>` element of an SVG.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// Asserts that the PNG at `path` decodes to a `w`×`h` RGB picture that
/// is far from blank: the standard deviation of its grey levels is above
/// 10 (of 255) and over 2% of its pixels are not the white background. A
/// chart's axes, bars and text easily pass both; a blank or nearly blank
/// picture fails both.
fn assert_png(path: &std::path::Path, w: u32, h: u32) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (w, h), "picture size");
    assert_eq!(info.color_type, png::ColorType::Rgb, "colour type");
    let px = &buf[..info.buffer_size()];
    let grey: Vec<f64> = px
        .chunks(3)
        .map(|p| (p[0] as f64 + p[1] as f64 + p[2] as f64) / 3.0)
        .collect();
    let n = grey.len() as f64;
    let mean = grey.iter().sum::<f64>() / n;
    let sd = (grey.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n).sqrt();
    let inked = px.chunks(3).filter(|p| p != &[255, 255, 255]).count() as f64 / n;
    assert!(sd > 10.0, "{}: grey-level sd {sd:.1}", path.display());
    assert!(
        inked > 0.02,
        "{}: {:.2}% inked",
        path.display(),
        inked * 100.0
    );
}

/// Asserts that the SVG at `path` has every text of `wanted` as an element.
fn assert_svg_texts(path: &std::path::Path, wanted: &[&str]) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.starts_with("<svg"), "not an SVG");
    let texts = svg_texts(&svg);
    for w in wanted {
        assert!(texts.iter().any(|t| t == w), "no text `{w}` in {texts:?}");
    }
    texts
}

/// Draws `spec` of `df` as `STEM.svg`, which must hold every text of
/// `wanted`, and as `STEM.png`, a 1200×800 picture far from blank.
fn draw_both(df: &DataFrame, spec: &PlotSpec, stem: &std::path::Path, wanted: &[&str]) {
    let svg = stem.with_extension("svg");
    plot_table(df, spec, &svg).unwrap();
    assert_svg_texts(&svg, wanted);
    let png = stem.with_extension("png");
    plot_table(df, spec, &png).unwrap();
    assert_png(&png, 1200, 800);
}

/// Throughput and efficiency of two methods at 4 to 32 GPUs.
fn scaling() -> DataFrame {
    df!(
        "gpus" => [4i64, 8, 16, 32, 4, 8, 16, 32],
        "method" => ["ring", "ring", "ring", "ring", "ps", "ps", "ps", "ps"],
        "throughput" => [1180.0, 2290.0, 4350.0, 8100.0, 1100.0, 1900.0, 2800.0, 3300.0],
        "throughput_unit" => ["images/s"; 8],
        "scaling_efficiency" => [0.98, 0.95, 0.91, 0.85, 0.92, 0.79, 0.58, 0.34],
        "iteration_time_s" => [0.217, 0.224, 0.235, 0.253, 0.233, 0.269, 0.366, 0.776],
    )
    .unwrap()
}

fn line_spec(y: &str) -> PlotSpec {
    let mut spec = PlotSpec::new("gpus", [y], Kind::Line);
    spec.series = Some("method".into());
    spec
}

#[test]
fn line_chart_png_has_the_requested_size_and_is_not_blank() {
    let dir = out_dir("line_png");
    let path = dir.join("throughput.png");
    plot_table(&scaling(), &line_spec("throughput"), &path).unwrap();
    assert_png(&path, 1200, 800);

    let mut small = line_spec("scaling_efficiency");
    (small.width, small.height) = (640, 480);
    let path = dir.join("small.png");
    plot_table(&scaling(), &small, &path).unwrap();
    assert_png(&path, 640, 480);
}

#[test]
fn line_chart_svg_has_axis_titles_with_units_and_a_legend() {
    let dir = out_dir("line_svg");
    let path = dir.join("throughput.svg");
    plot_table(&scaling(), &line_spec("throughput"), &path).unwrap();
    assert_svg_texts(
        &path,
        &["GPUs", "Throughput (images/s)", "method", "ring", "ps"],
    );

    let path = dir.join("efficiency.svg");
    plot_table(&scaling(), &line_spec("scaling_efficiency"), &path).unwrap();
    let texts = assert_svg_texts(&path, &["Scaling efficiency (%)", "100"]);
    assert!(
        !texts.iter().any(|t| t == "1.0"),
        "efficiency not in %: {texts:?}"
    );

    let path = dir.join("time.svg");
    plot_table(&scaling(), &line_spec("iteration_time_s"), &path).unwrap();
    assert_svg_texts(&path, &["Iteration time (ms)"]);
}

#[test]
fn titles_default_from_the_columns_and_can_be_set() {
    let dir = out_dir("titles");
    let path = dir.join("default.svg");
    plot_table(&scaling(), &line_spec("throughput"), &path).unwrap();
    assert_svg_texts(&path, &["Throughput against GPUs, one line per method"]);

    let mut spec = line_spec("throughput");
    spec.title = Some("ResNet-50 on 10 GbE".into());
    let path = dir.join("set.svg");
    plot_table(&scaling(), &spec, &path).unwrap();
    assert_svg_texts(&path, &["ResNet-50 on 10 GbE"]);
}

#[test]
fn values_spanning_decades_get_a_log_axis() {
    let dir = out_dir("log");
    let df = df!(
        "gpus" => [1i64, 4, 16, 64, 256],
        "bytes_sent_per_gpu" => [0.0, 75.0e6, 94.0e6, 99.0e6, 100.0e6],
        "iteration_time_s" => [0.001, 0.01, 0.1, 1.0, 10.0],
    )
    .unwrap();
    let path = dir.join("time.svg");
    plot_table(
        &df,
        &PlotSpec::new("gpus", ["iteration_time_s"], Kind::Line),
        &path,
    )
    .unwrap();
    // x ticked at the GPU counts, y at decades of seconds
    assert_svg_texts(
        &path,
        &[
            "1",
            "4",
            "16",
            "64",
            "256",
            "0.001",
            "0.01",
            "0.1",
            "10",
            "Iteration time (s)",
        ],
    );
    let path = dir.join("bytes.svg");
    plot_table(
        &df,
        &PlotSpec::new("gpus", ["bytes_sent_per_gpu"], Kind::Line),
        &path,
    )
    .unwrap();
    assert_svg_texts(&path, &["Sent per GPU (MiB)"]);
}

#[test]
fn grouped_bars_show_categories_and_series() {
    let dir = out_dir("bars");
    let df = df!(
        "model" => ["vgg16", "vgg16", "resnet50", "resnet50", "bert", "bert"],
        "method" => ["ring", "embrace", "ring", "embrace", "ring", "embrace"],
        "speedup" => [1.0, 1.6, 1.0, 1.2, 1.0, 2.3],
    )
    .unwrap();
    let mut spec = PlotSpec::new("model", ["speedup"], Kind::Bar);
    spec.series = Some("method".into());
    draw_both(
        &df,
        &spec,
        &dir.join("speedup"),
        &[
            "Model",
            "Speedup (×)",
            "vgg16",
            "resnet50",
            "bert",
            "ring",
            "embrace",
        ],
    );
}

#[test]
fn stacked_bars_show_the_time_breakdown() {
    let dir = out_dir("stacked");
    let df = df!(
        "method" => ["dense", "topk", "gtopk"],
        "compute_s" => [0.120, 0.120, 0.120],
        "compression_s" => [0.0, 0.030, 0.034],
        "exposed_comm_s" => [0.310, 0.090, 0.020],
    )
    .unwrap();
    let spec = PlotSpec::new(
        "method",
        ["compute_s", "compression_s", "exposed_comm_s"],
        Kind::Stacked,
    );
    draw_both(
        &df,
        &spec,
        &dir.join("breakdown"),
        &[
            "Time (ms)",
            "method",
            "dense",
            "topk",
            "gtopk",
            "Compute",
            "Compression",
            "Exposed communication",
        ],
    );
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    let dir = out_dir("determinism");
    for ext in ["png", "svg"] {
        let a = dir.join(format!("a.{ext}"));
        let b = dir.join(format!("b.{ext}"));
        plot_table(&scaling(), &line_spec("throughput"), &a).unwrap();
        plot_table(&scaling(), &line_spec("throughput"), &b).unwrap();
        assert!(
            std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
            "{ext} differs"
        );
    }
}

#[test]
fn an_unknown_column_lists_the_available_ones() {
    let dir = out_dir("unknown");
    let err = plot_table(&scaling(), &line_spec("thruput"), &dir.join("x.png")).unwrap_err();
    match &err {
        PlotError::Column(ColumnError::Unknown { column, available }) => {
            assert_eq!(column, "thruput");
            assert_eq!(
                available,
                &[
                    "gpus",
                    "method",
                    "throughput",
                    "throughput_unit",
                    "scaling_efficiency",
                    "iteration_time_s"
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("thruput") && err.to_string().contains("throughput_unit"));
    let mut spec = line_spec("throughput");
    spec.series = Some("algo".into());
    assert!(matches!(
        plot_table(&scaling(), &spec, &dir.join("x.png")),
        Err(PlotError::Column(ColumnError::Unknown { column, .. })) if column == "algo"
    ));
    assert!(!dir.join("x.png").exists());
}

#[test]
fn an_empty_table_is_refused() {
    let dir = out_dir("empty");
    let empty = scaling().head(Some(0));
    assert_eq!(
        plot_table(&empty, &line_spec("throughput"), &dir.join("x.svg")),
        Err(PlotError::Empty)
    );
    // rows without values in the plotted columns count as none
    let nulls = df!(
        "gpus" => [Some(4i64), None],
        "throughput" => [None, Some(1.0)],
    )
    .unwrap();
    assert_eq!(
        plot_table(
            &nulls,
            &PlotSpec::new("gpus", ["throughput"], Kind::Line),
            &dir.join("x.svg")
        ),
        Err(PlotError::Empty)
    );
    assert!(!dir.join("x.svg").exists());
}

#[test]
fn an_unwritable_path_is_an_output_error() {
    let dir = out_dir("unwritable");
    // a file where the picture's directory should be
    std::fs::write(dir.join("a-file"), "").unwrap();
    for name in ["x.png", "x.svg"] {
        let path = dir.join("a-file").join(name);
        match plot_table(&scaling(), &line_spec("throughput"), &path) {
            Err(PlotError::Output { path: p, message }) => {
                assert!(p.ends_with(name), "{p}");
                assert!(!message.is_empty());
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(matches!(
        plot_table(&scaling(), &line_spec("throughput"), &dir.join("x.jpg")),
        Err(PlotError::BadSpec(message)) if message.contains("x.jpg: the file name must end in .png or .svg")
    ));
}

#[test]
fn bad_specs_say_what_is_wrong() {
    let dir = out_dir("bad_specs");
    let out = dir.join("x.svg");
    let df = scaling();
    // text where numbers are needed
    assert_eq!(
        plot_table(
            &df,
            &PlotSpec::new("method", ["throughput"], Kind::Line),
            &out
        ),
        Err(PlotError::Column(ColumnError::NotNumeric {
            column: "method".into()
        }))
    );
    assert_eq!(
        plot_table(&df, &PlotSpec::new("gpus", ["method"], Kind::Bar), &out),
        Err(PlotError::Column(ColumnError::NotNumeric {
            column: "method".into()
        }))
    );
    // one y for lines and bars; no series for stacks
    let two = PlotSpec::new("gpus", ["throughput", "scaling_efficiency"], Kind::Line);
    assert!(
        matches!(plot_table(&df, &two, &out), Err(PlotError::BadSpec(m)) if m.contains("exactly one y"))
    );
    let mut stacked = PlotSpec::new("gpus", ["iteration_time_s"], Kind::Stacked);
    stacked.series = Some("method".into());
    assert!(
        matches!(plot_table(&df, &stacked, &out), Err(PlotError::BadSpec(m)) if m.contains("no series"))
    );
    // stacked columns of different units
    let mixed = PlotSpec::new("gpus", ["iteration_time_s", "throughput"], Kind::Stacked);
    assert!(
        matches!(plot_table(&df, &mixed, &out), Err(PlotError::BadSpec(m)) if m.contains("share a unit"))
    );
    // two points at one place: the message names the column that differs
    let no_series = PlotSpec::new("gpus", ["throughput"], Kind::Line);
    match plot_table(&df, &no_series, &out) {
        Err(PlotError::BadSpec(m)) => {
            assert!(m.contains("gpus = 4") && m.contains("method"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    // picture size
    let mut tiny = line_spec("throughput");
    tiny.width = 0;
    assert!(matches!(
        plot_table(&df, &tiny, &out),
        Err(PlotError::BadSpec(_))
    ));
    assert!(!out.exists());
    // kinds parse from their names
    assert_eq!("stacked".parse::<Kind>(), Ok(Kind::Stacked));
    assert!(
        matches!("pie".parse::<Kind>(), Err(PlotError::BadSpec(m)) if m.contains("line, bar, stacked"))
    );
}

/// Two GPUs, iterations every 1000 µs: forward, backward, a wait and a
/// message per iteration, named as `dtsim run --trace` names them.
fn tiny_trace() -> serde_json::Value {
    let mut events = Vec::new();
    for g in 0..2u32 {
        events.push(json!({"ph": "M", "name": "process_name", "pid": g, "args": {"name": format!("GPU {g} (node 0)")}}));
        events.push(json!({"ph": "M", "name": "thread_name", "pid": g, "tid": 0, "args": {"name": "compute"}}));
        events.push(json!({"ph": "M", "name": "thread_name", "pid": g, "tid": 1, "args": {"name": "communication"}}));
        for k in 0..4u32 {
            let t = f64::from(k) * 1000.0;
            events.push(json!({"ph": "X", "pid": g, "tid": 0, "cat": "stall", "name": "wait for conv1 parameters", "ts": t, "dur": 100.0, "args": {"iteration": k, "layer": 0}}));
            events.push(json!({"ph": "X", "pid": g, "tid": 0, "cat": "compute", "name": "fwd conv1", "ts": t + 100.0, "dur": 300.0, "args": {"iteration": k, "layer": 0, "pass": "fwd"}}));
            events.push(json!({"ph": "X", "pid": g, "tid": 0, "cat": "compute", "name": "bwd conv1", "ts": t + 400.0, "dur": 500.0, "args": {"iteration": k, "layer": 0, "pass": "bwd"}}));
            events.push(json!({"ph": "X", "pid": g, "tid": 1, "cat": "communication", "name": "allreduce/ring 4 MiB [conv1]", "ts": t + 600.0, "dur": 500.0, "args": {"bytes": 4194304}}));
            events.push(json!({"ph": "C", "pid": g, "name": "send rate (GB/s)", "ts": t + 600.0, "args": {"GB/s": 8.0}}));
        }
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"scenario": "tiny", "gpus": 2, "gpus_shown": 2, "iteration_starts_us": [0.0, 1000.0, 2000.0, 3000.0]},
    })
}

#[test]
fn a_timeline_draws_gpu_tracks_for_two_iterations() {
    let dir = out_dir("timeline");
    let svg = dir.join("timeline.svg");
    plot_timeline(&tiny_trace(), &svg, None, 1200, 800).unwrap();
    let texts = assert_svg_texts(
        &svg,
        &[
            "Timeline of tiny: iterations 1–2",
            "GPU 0 (node 0) compute",
            "GPU 1 (node 0) communication",
            "Forward pass",
            "Backward pass",
            "Waiting for communication",
            "Communication",
            "iteration 1",
            "iteration 2",
            "Time since the start of iteration 1 (ms)",
        ],
    );
    assert!(!texts.iter().any(|t| t == "iteration 3"), "{texts:?}");
    let png = dir.join("timeline.png");
    plot_timeline(&tiny_trace(), &png, Some(3), 1000, 600).unwrap();
    assert_png(&png, 1000, 600);
}

#[test]
fn timeline_errors() {
    let dir = out_dir("timeline_errors");
    let out = dir.join("t.png");
    // iteration starts out of order would title the iterations wrongly
    let mut falling = tiny_trace();
    falling["otherData"]["iteration_starts_us"] = json!([5.0, 4.0, 3.0]);
    assert!(matches!(
        plot_timeline(&falling, &out, None, 1200, 800),
        Err(PlotError::BadTrace(m)) if m.contains("must rise: entry 1 (4) is not after entry 0 (5)")
    ));
    assert!(matches!(
        plot_timeline(&json!({"traceEvents": 3}), &out, None, 1200, 800),
        Err(PlotError::BadTrace(m)) if m.contains("traceEvents")
    ));
    assert!(matches!(
        plot_timeline(&json!({"traceEvents": [{"ph": "X", "pid": 0, "tid": 0}]}), &out, None, 1200, 800),
        Err(PlotError::BadTrace(m)) if m.contains("traceEvents[0]") && m.contains("ts")
    ));
    assert_eq!(
        plot_timeline(&json!({"traceEvents": []}), &out, None, 1200, 800),
        Err(PlotError::Empty)
    );
    assert!(matches!(
        plot_timeline(
            &tiny_trace(),
            &{
                // a file where the picture's directory should be
                std::fs::write(dir.join("a-file"), "").unwrap();
                dir.join("a-file").join("t.svg")
            },
            None,
            1200,
            800
        ),
        Err(PlotError::Output { .. })
    ));
    assert!(!out.exists());
}

/// Category labels far too long for their slots are cut to "…" and drawn
/// (this once looped forever when a label needed more than one character
/// cut), for bars and stacked bars, with long labels and with many.
#[test]
fn labels_too_long_for_their_slots_are_cut_not_hung_on() {
    let dir = out_dir("long_labels");
    let long: Vec<String> = (0..10)
        .map(|i| {
            format!(
                "{}{i}",
                "network-preset-name-that-is-rather-long-number-".repeat(2)
            )
        })
        .collect();
    let many: Vec<String> = (0..60).map(|i| format!("cat{i}")).collect();
    for (name, labels) in [("long", long), ("many", many)] {
        let n = labels.len();
        let df = df!(
            "x" => labels,
            "compute_s" => (0..n).map(|i| 0.1 + i as f64 / 100.0).collect::<Vec<_>>(),
            "exposed_comm_s" => vec![0.05; n],
        )
        .unwrap();
        for kind in [Kind::Bar, Kind::Stacked] {
            let ys: &[&str] = if kind == Kind::Bar {
                &["compute_s"]
            } else {
                &["compute_s", "exposed_comm_s"]
            };
            let spec = PlotSpec::new("x", ys.iter().copied(), kind);
            let path = dir.join(format!("{name}-{kind:?}.png"));
            plot_table(&df, &spec, &path).unwrap();
            assert_png(&path, 1200, 800);
        }
    }
}

/// Values whose axis would overflow an f64 are refused with a message
/// naming the column; values equal to within rounding get a sensible axis.
#[test]
fn extreme_values_are_refused_and_near_equal_ones_drawn() {
    let dir = out_dir("extreme_values");
    let huge = df!("x" => [1.0, 2.0], "y" => [f64::MAX, -f64::MAX]).unwrap();
    for kind in [Kind::Line, Kind::Bar] {
        let spec = PlotSpec::new("x", ["y"], kind);
        match plot_table(&huge, &spec, &dir.join("huge.png")) {
            Err(PlotError::BadSpec(m)) => {
                assert!(m.contains("`y`") || m.contains("y holds"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(!dir.join("huge.png").exists());
    // 9131.09422644203 and its next float: one value, one labelled range
    let near = df!("x" => [1.0, 2.0], "y" => [9131.09422644203, 9131.094226442032]).unwrap();
    let svg = dir.join("near.svg");
    plot_table(&near, &PlotSpec::new("x", ["y"], Kind::Line), &svg).unwrap();
    let texts = assert_svg_texts(&svg, &["x", "y"]);
    let ticks: Vec<&String> = texts.iter().filter(|t| t.parse::<f64>().is_ok()).collect();
    let distinct: std::collections::BTreeSet<&String> = ticks.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        ticks.len(),
        "repeated tick labels: {texts:?}"
    );
    // 600 decades: a dozen or so labelled ticks, not hundreds
    let wide = df!("x" => [1.0, 2.0, 3.0], "y" => [1e-300, 1.0, 1e300]).unwrap();
    let svg = dir.join("wide.svg");
    plot_table(&wide, &PlotSpec::new("x", ["y"], Kind::Line), &svg).unwrap();
    let texts = assert_svg_texts(&svg, &["x", "y"]);
    assert!(texts.len() < 40, "{} labels: {texts:?}", texts.len());
}

/// A trace event whose time would overflow the picture is refused.
#[test]
fn timeline_times_beyond_range_are_refused() {
    let dir = out_dir("timeline_range");
    let trace = json!({"traceEvents": [
        {"ph": "X", "ts": 1e308, "dur": 1e308, "pid": 0, "tid": 0, "name": "x", "cat": "compute"},
        {"ph": "X", "ts": 0, "dur": 1, "pid": 0, "tid": 0, "name": "x", "cat": "compute"}
    ]});
    let out = dir.join("t.png");
    match plot_timeline(&trace, &out, None, 1200, 800) {
        Err(PlotError::BadTrace(m)) => {
            assert!(m.contains("traceEvents[0]") && m.contains("ts"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists());
}

/// A picture that cannot be put in place leaves nothing behind: it is
/// written beside its name and renamed, and the temporary file goes when
/// anything fails. The message names the picture in plain words.
#[test]
fn a_failed_write_leaves_no_partial_picture() {
    let dir = out_dir("failed_write");
    for name in ["in-the-way.png", "in-the-way.svg"] {
        let out = dir.join(name);
        std::fs::create_dir(&out).unwrap(); // a directory holds the name
        match plot_table(&scaling(), &line_spec("throughput"), &out) {
            Err(PlotError::Output { path, message }) => {
                assert!(path.ends_with(name), "{path}");
                assert!(!message.contains("Os {"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("partial"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
    // a missing directory is created (every output's policy); a file
    // where the directory should be cannot be
    plot_table(
        &scaling(),
        &line_spec("throughput"),
        &dir.join("new/dir/p.png"),
    )
    .unwrap();
    assert!(dir.join("new/dir/p.png").exists());
    std::fs::write(dir.join("file"), "").unwrap();
    match plot_table(
        &scaling(),
        &line_spec("throughput"),
        &dir.join("file/p.png"),
    ) {
        // "File exists" from creating the directory
        Err(PlotError::Output { message, .. }) => {
            assert!(message.contains("File exists"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

/// The user's axis and legend titles replace the defaults; notes (filters,
/// held values) follow the title; a stacked component that is zero in
/// every bar is left out; a line that lies on another says so.
#[test]
fn labels_notes_zero_components_and_identical_lines() {
    let dir = out_dir("labels");
    let mut spec = line_spec("throughput");
    spec.x_label = Some("Workers".into());
    spec.y_label = Some("Images per second".into());
    spec.legend_title = Some("Synchronisation".into());
    spec.notes = vec!["Inter-node network = eth-10g".into()];
    let path = dir.join("labels.svg");
    plot_table(&scaling(), &spec, &path).unwrap();
    let texts = assert_svg_texts(
        &path,
        &[
            "Workers",
            "Images per second",
            "Synchronisation",
            "Throughput against GPUs, one line per method (Inter-node network = eth-10g)",
        ],
    );
    assert!(
        !texts.iter().any(|t| t == "GPUs" || t == "method"),
        "{texts:?}"
    );

    let df = df!(
        "method" => ["dense", "ps"],
        "compute_s" => [0.120, 0.120],
        "compression_s" => [0.0, 0.0],
        "exposed_comm_s" => [0.310, 0.090],
    )
    .unwrap();
    let spec = PlotSpec::new(
        "method",
        ["compute_s", "compression_s", "exposed_comm_s"],
        Kind::Stacked,
    );
    let path = dir.join("breakdown.svg");
    plot_table(&df, &spec, &path).unwrap();
    let texts = assert_svg_texts(&path, &["Compute", "Exposed communication"]);
    assert!(
        !texts.iter().any(|t| t.contains("Compression")),
        "{texts:?}"
    );

    let df = df!(
        "gpus" => [4i64, 8, 4, 8, 4, 8],
        "schedule" => ["fifo", "fifo", "priority", "priority", "other", "other"],
        "throughput" => [100.0, 180.0, 100.0, 180.0, 90.0, 170.0],
    )
    .unwrap();
    let mut spec = PlotSpec::new("gpus", ["throughput"], Kind::Line);
    spec.series = Some("schedule".into());
    let path = dir.join("same.svg");
    plot_table(&df, &spec, &path).unwrap();
    let texts = assert_svg_texts(&path, &["fifo", "priority (same as fifo)", "other"]);
    assert!(
        !texts.iter().any(|t| t == "other (same as fifo)"),
        "{texts:?}"
    );
}

/// Category labels too wide for their slots wrap under their own bars (at
/// commas, spaces, hyphens) instead of alternating between rows.
#[test]
fn crowded_category_labels_wrap_under_their_bars() {
    let dir = out_dir("crowded");
    let names = [
        "allreduce-ring-eth-10g",
        "allreduce-tree-eth-10g",
        "ps-sequential-ib-edr-100g",
        "ps-overlapped-ib-edr-100g",
        "topk-recursive-doubling",
        "gtopk-tree-eth-25g",
        "hierarchical, eth-100g",
        "dct, ib-ndr-400g",
    ];
    let df = df!(
        "method" => names,
        "compute_s" => [0.1; 8],
        "exposed_comm_s" => [0.05; 8],
    )
    .unwrap();
    let spec = PlotSpec::new("method", ["compute_s", "exposed_comm_s"], Kind::Stacked);
    let path = dir.join("crowded.svg");
    plot_table(&df, &spec, &path).unwrap();
    let texts = assert_svg_texts(&path, &["eth-10g", "eth-25g"]);
    for n in names {
        assert!(
            !texts.iter().any(|t| t == n),
            "{n} was not wrapped: {texts:?}"
        );
    }
}

/// `dtsim plot`'s work, [`reports::plot::draw`]: the table read from its
/// file, `--where` filters applied and stated after the title, and the
/// speedup titled by the key's human name.
#[test]
fn draw_reads_filters_and_states_the_filters() {
    let dir = out_dir("draw");
    let mut df = scaling();
    df.with_column(Column::new("network".into(), ["10g"; 8]))
        .unwrap();
    let table = dir.join("t.csv");
    reports::table::write(&mut df, &table).unwrap();
    let out = dir.join("d.svg");
    let source = |filters: &[&str], baseline: Option<&str>| Source::Table {
        path: table.clone(),
        spec: Box::new(PlotSpec {
            series: Some("method".into()),
            ..PlotSpec::new(
                "gpus",
                ["throughput"],
                if baseline.is_some() {
                    Kind::Bar
                } else {
                    Kind::Line
                },
            )
        }),
        filters: filters.iter().map(|f| f.to_string()).collect(),
        baseline: baseline.map(str::to_string),
    };
    draw(&source(&["network=10g", "gpus=8"], None), &out).unwrap();
    let texts = assert_svg_texts(
        &out,
        &["Throughput against GPUs, one line per method (Inter-node network = 10g; GPUs = 8)"],
    );
    assert!(!texts.iter().any(|t| t.contains('`')), "{texts:?}");
    draw(&source(&[], Some("ps")), &out).unwrap();
    assert_svg_texts(
        &out,
        &["Speedup in throughput over method = ps", "Speedup (×)"],
    );
    // a filter that keeps nothing names the table and the values there are
    let e = draw(&source(&["network=100g"], None), &out).unwrap_err();
    assert!(
        e.to_string()
            .contains("t.csv: --where network=100g: no row has network = 100g; it takes 10g"),
        "{e}"
    );
    assert!(e.is_input());
}

/// Whether an error is the user's input (exit code 2) or a file that
/// could not be written (exit code 1), for plots, columns and reports.
#[test]
fn errors_say_whether_the_input_is_at_fault() {
    let dir = out_dir("is-input");
    std::fs::write(dir.join("a-file"), "").unwrap();
    let blocked = dir.join("a-file").join("x.svg");
    let e = plot_table(&scaling(), &line_spec("throughput"), &blocked).unwrap_err();
    assert!(
        matches!(e, PlotError::Output { .. }) && !e.is_input(),
        "{e}"
    );
    let report = ReportError::Plot(e);
    assert!(!report.is_input());
    for e in [
        plot_table(&scaling(), &line_spec("nope"), &dir.join("x.svg")).unwrap_err(),
        plot_table(&scaling(), &line_spec("throughput"), &dir.join("x.jpg")).unwrap_err(),
        plot_table(
            &scaling().head(Some(0)),
            &line_spec("throughput"),
            &dir.join("x.svg"),
        )
        .unwrap_err(),
    ] {
        assert!(e.is_input(), "{e}");
        assert!(ReportError::Plot(e).is_input());
    }
    let column = ColumnError::NotNumeric {
        column: "method".into(),
    };
    assert!(column.is_input());
    assert!(ReportError::Column(column).is_input());
    let io = ReportError::Io {
        path: "out/report.md".into(),
        message: "read-only file system".into(),
    };
    assert!(!io.is_input());
    let write = reports::table::TableError::Write {
        path: "out/results.csv".into(),
        message: "disk full".into(),
    };
    assert!(!ReportError::Table(write).is_input());
}
