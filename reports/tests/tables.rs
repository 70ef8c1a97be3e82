//! Reading result tables: a CSV or Parquet file that is cut short or holds
//! a value its column cannot is refused, naming the file, the line and
//! what is wrong, by every reader (`dtsim report merge`, `dtsim plot`,
//! `dtsim report`); a valid table reads as polars reads it.

use polars::prelude::*;
use reports::plot::{Kind, PlotSpec, Source, draw};
use reports::report::{ReportRequest, Steer, make};
use reports::sweep::{self, Options, Shard};
use reports::table::{self, TableError};
use std::path::{Path, PathBuf};

/// A fresh directory for one test's files, kept after the run for a look.
fn out_dir(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("table-tests")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A grid of 6 points that simulate in milliseconds.
fn grid() -> sim::scenario::Grid {
    let text = "[cluster]\nnodes = 1\ngpus_per_node = 2\nnetwork = \"eth-10g\"\n\
                model = \"analytical\"\n\
                [model]\npreset = \"alexnet\"\nbatch_per_gpu = 8\ngpu = \"titan-xp\"\n\
                [sweep]\n\"cluster.nodes\" = [1, 2, 3]\n\"strategy.schedule\" = [\"fifo\", \"priority\"]\n";
    sim::scenario::open_str_in(text, "t.toml", "t", None).unwrap()
}

fn opts(shard: Option<Shard>) -> Options {
    Options {
        jobs: 1,
        shard,
        progress: false,
        block_points: 0,
        uncertainty: None,
    }
}

/// The three shards of [`grid`]'s sweep, as `t1.EXT`, `t2.EXT`, `t3.EXT`.
fn shards(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let g = grid();
    (1..=3)
        .map(|i| {
            let out = dir.join(format!("t{i}.{ext}"));
            let shard = Shard::parse(&format!("{i}/3")).unwrap();
            sweep::run(&g, &out, &opts(Some(shard))).unwrap();
            out
        })
        .collect()
}

/// `path`'s text with its last row cut after `keep` of its bytes (no line
/// end after it), as a killed copy leaves it.
fn cut_last_row(path: &Path, keep: usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let body = text.trim_end_matches('\n');
    let start = body.rfind('\n').unwrap() + 1;
    std::fs::write(path, &body[..start + keep]).unwrap();
}

fn header_fields(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().next().unwrap().split(',').count()
}

/// A shard cut in the middle of its last row is refused, not padded with
/// empty cells: the message names the file and line, and says the file
/// looks truncated; merging is bad input (exit code 2).
#[test]
fn merge_refuses_a_truncated_csv_shard() {
    let dir = out_dir("merge_truncated");
    let t = shards(&dir, "csv");
    let cols = header_fields(&t[2]);
    // t3 holds points 2 and 5: the header, line 2, line 3; line 3 is cut
    // after its 12th field (`batch_per_gpu`: 8)
    let text = std::fs::read_to_string(&t[2]).unwrap();
    let last = text.trim_end().lines().last().unwrap();
    let keep = last.match_indices(',').nth(10).unwrap().0 + 2;
    cut_last_row(&t[2], keep);
    let e = sweep::merge(&t, &dir.join("m.csv")).unwrap_err();
    assert!(e.is_input(), "{e}");
    let want = format!(
        "{}, line 3: 12 fields, the header has {cols}: the file looks truncated",
        t[2].display()
    );
    assert_eq!(e.to_string(), want);
    assert!(!dir.join("m.csv").exists());

    // cut inside a number of the last field but one: the row has all its
    // fields but one
    cut_last_row(&t[2], 0);
    std::fs::write(
        &t[2],
        format!(
            "{}{}",
            std::fs::read_to_string(&t[2]).unwrap(),
            &last[..last.rfind(',').unwrap()]
        ),
    )
    .unwrap();
    let e = sweep::merge(&t, &dir.join("m.csv")).unwrap_err();
    assert!(
        e.to_string().ends_with(&format!(
            "line 3: {} fields, the header has {cols}: the file looks truncated",
            cols - 1
        )),
        "{e}"
    );

    // the whole shard merges as before
    let t = shards(&dir, "csv");
    let s = sweep::merge(&t, &dir.join("m.csv")).unwrap();
    assert_eq!(s.points, 6);
}

/// A row with more fields than the header, a blank line, a value that is
/// not of its column's type, a quoted field left open: each is refused,
/// with its line (and column, for a value).
#[test]
fn rows_that_do_not_fit_the_header_are_refused_with_their_line() {
    let dir = out_dir("bad_rows");
    let t = shards(&dir, "csv");
    let text = std::fs::read_to_string(&t[0]).unwrap();
    let cols = header_fields(&t[0]);
    let lines: Vec<&str> = text.lines().collect();
    let with_line = |k: usize, new: &str| {
        let mut l = lines.clone();
        l[k] = new;
        l.join("\n") + "\n"
    };
    let refused = |name: &str, text: String| -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let e = table::read(&p).unwrap_err();
        assert!(e.is_input(), "{e}");
        assert!(matches!(e, TableError::Row { .. }), "{e:?}");
        // merge and its reading agree
        let m = sweep::merge(std::slice::from_ref(&p), &dir.join("m.csv")).unwrap_err();
        assert_eq!(m.to_string(), e.to_string());
        e.to_string()
    };
    let p = |name: &str| dir.join(name).display().to_string();

    let more = format!("{},7", lines[1]);
    assert_eq!(
        refused("more.csv", with_line(1, &more)),
        format!(
            "{}, line 2: {} fields, the header has {cols}",
            p("more.csv"),
            cols + 1
        )
    );
    // a row short of fields within the file is not "truncated"
    let short = lines[1][..lines[1].rfind(',').unwrap()].to_string();
    assert_eq!(
        refused("short.csv", with_line(1, &short)),
        format!(
            "{}, line 2: {} fields, the header has {cols}",
            p("short.csv"),
            cols - 1
        )
    );
    assert_eq!(
        refused("blank.csv", with_line(1, "")),
        format!(
            "{}, line 2: an empty line; a row has the header's {cols} fields",
            p("blank.csv")
        )
    );
    // `iteration_time_s` and `gpus` of the second row
    let names: Vec<&str> = lines[0].split(',').collect();
    let at = |c: &str| names.iter().position(|n| *n == c).unwrap();
    let set = |c: &str, v: &str| {
        let mut f: Vec<&str> = lines[2].split(',').collect();
        f[at(c)] = v;
        f.join(",")
    };
    assert_eq!(
        refused("word.csv", with_line(2, &set("iteration_time_s", "fast"))),
        format!(
            "{}, line 3, column `iteration_time_s`: `fast` is not a finite number above 0",
            p("word.csv")
        )
    );
    // a run's throughput and iteration time are present, finite and
    // above 0 (a review's hand-edited -5 made a report's ratios nonsense)
    for (v, why) in [
        ("-5", "`-5` is not a finite number above 0"),
        ("0", "`0` is not a finite number above 0"),
        ("NaN", "`NaN` is not a finite number above 0"),
        ("inf", "`inf` is not a finite number above 0"),
        ("", "is empty: every point has one"),
    ] {
        assert_eq!(
            refused("throughput.csv", with_line(2, &set("throughput", v))),
            format!(
                "{}, line 3, column `throughput`: {why}",
                p("throughput.csv")
            )
        );
    }
    assert_eq!(
        refused("fraction.csv", with_line(2, &set("gpus", "2.5"))),
        format!(
            "{}, line 3, column `gpus`: `2.5` is not a whole number ≥ 0",
            p("fraction.csv")
        )
    );
    assert_eq!(
        refused("huge.csv", with_line(2, &set("gpus", "4294967296"))),
        format!(
            "{}, line 3, column `gpus`: `4294967296` is too large (at most 4294967295)",
            p("huge.csv")
        )
    );
    assert_eq!(
        refused(
            "open.csv",
            format!("{}\"ring", with_line(2, &set("algo", "\"ring\"")))
        ),
        format!(
            "{}, line 4: a quoted field is not closed: the file looks truncated",
            p("open.csv")
        )
    );
}

/// Valid CSV keeps reading as polars reads it: quoted fields (with commas,
/// quotes and a line end), CRLF line ends, a byte-order mark, no line end
/// after the last row, empty cells, `NaN`, a table that is not a sweep's.
#[test]
fn valid_csv_reads_as_before() {
    let dir = out_dir("valid");
    let cases = [
        "point,grid_points,scenario,gpus,comm_s\n0,2,\"a, \"\"b\"\"\",4,0.5\n1,2,\"two\nlines\",,NaN\n",
        "point,grid_points,gpus\r\n0,1,4\r\n",
        "\u{feff}point,grid_points,gpus\n0,1,4",
        "a,b\n1,x\"y\"\n2,\n",
        "gpus,iteration_time_s\nmany,slow\n",
        "point,grid_points,comm_s\n0,1,inf\n",
        "a\n1\n\n2\n",
        "point,grid_points\n",
    ];
    for (k, text) in cases.iter().enumerate() {
        let p = dir.join(format!("v{k}.csv"));
        std::fs::write(&p, text).unwrap();
        let ours = table::read(&p).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let theirs = CsvReadOptions::default()
            .with_has_header(true)
            .try_into_reader_with_file_path(Some(p.clone()))
            .unwrap()
            .finish()
            .unwrap();
        assert!(ours.equals_missing(&theirs), "{text:?}");
    }
}

/// A Parquet shard cut short is refused with its name, not a panic.
#[test]
fn merge_refuses_a_truncated_parquet_shard() {
    let dir = out_dir("merge_parquet");
    let t = shards(&dir, "parquet");
    let bytes = std::fs::read(&t[1]).unwrap();
    for keep in [0, 4, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&t[1], &bytes[..keep]).unwrap();
        let e = sweep::merge(&t, &dir.join("m.csv")).unwrap_err();
        assert!(e.is_input(), "{e}");
        assert!(
            e.to_string().starts_with(&format!("{}: ", t[1].display())),
            "{e}"
        );
    }
    std::fs::write(&t[1], &bytes).unwrap();
    assert_eq!(sweep::merge(&t, &dir.join("m.csv")).unwrap().points, 6);
}

/// A swept key's column that one shard cannot hold as the first shard
/// types it names the row and the value.
#[test]
fn merge_names_the_value_a_swept_column_cannot_hold() {
    let dir = out_dir("merge_swept");
    let t = shards(&dir, "csv");
    let text = std::fs::read_to_string(&t[1]).unwrap();
    // t2's second row (point 4) on 3 nodes: `cluster.nodes` is its third field
    let bad = text.replacen("\n4,6,3,", "\n4,6,3x,", 1);
    assert_ne!(bad, text);
    std::fs::write(&t[1], bad).unwrap();
    let e = sweep::merge(&t, &dir.join("m.csv")).unwrap_err();
    assert!(e.is_input());
    assert_eq!(
        e.to_string(),
        format!(
            "{}: row 2: column `cluster.nodes`: `3x` is not a value of type i64, the column's type in {}",
            t[1].display(),
            t[0].display()
        )
    );
}

/// `dtsim plot` and `dtsim report` of a truncated table name the table
/// and its line, not a picture that had nothing to draw.
#[test]
fn plot_and_report_refuse_a_truncated_table() {
    let dir = out_dir("plot_report");
    let out = dir.join("r.csv");
    sweep::run(&grid(), &out, &opts(None)).unwrap();
    cut_last_row(&out, 30);
    let source = Source::Table {
        path: out.clone(),
        spec: Box::new(PlotSpec::new("gpus", ["throughput"], Kind::Line)),
        filters: Vec::new(),
        baseline: None,
    };
    let e = draw(&source, &dir.join("p.png")).unwrap_err();
    assert!(e.is_input(), "{e}");
    let msg = e.to_string();
    assert!(msg.starts_with(&out.display().to_string()), "{msg}");
    assert!(msg.contains("line 7: "), "{msg}");
    assert!(msg.ends_with("the file looks truncated"), "{msg}");

    let req = ReportRequest {
        input: out.clone(),
        dir: dir.join("report"),
        sweep: opts(None),
        steer: Steer::default(),
        command: "dtsim report r.csv".into(),
        version: "test".into(),
    };
    let e = make(&req).unwrap_err();
    assert!(e.is_input(), "{e}");
    assert_eq!(e.to_string(), msg, "the same message as plot's");
}
