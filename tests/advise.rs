//! `dtsim advise FILE`: every way to synchronise the file's model on its
//! cluster, simulated and ranked; its numbers are `dtsim run`'s for the
//! same strategy; what does not apply is listed with the reason; a file
//! that sweeps anything but the method keys is refused.

mod common;
use common::{assert_bad, dtsim, fresh_dir, stderr, stdout};

/// VGG-16 on 4 machines of 4 PCIe GPUs over 10 GbE, ring AllReduce, FIFO.
const SCENARIO: &str = r#"name = "advise-vgg16"
iterations = 2
[cluster]
nodes = 4
gpus_per_node = 4
network = "eth-10g"
[model]
preset = "vgg16"
batch_per_gpu = 32
gpu = "titan-xp"
[strategy]
dense = "allreduce"
"#;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn json_rows(o: &std::process::Output) -> Vec<serde_json::Value> {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_way_is_ranked_or_refused_and_the_numbers_are_runs() {
    let dir = fresh_dir("advise", "ranks");
    let file = write(&dir, "vgg.toml", SCENARIO);
    let rows = json_rows(&dtsim(&["advise", &file, "--json"]));
    let (ranked, refused): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r.get("rank").is_some());
    // 7 AllReduce algorithms, PS and DCT-DP, each under 2 schedules, and
    // Top-k and gTop-k under FIFO; a ranked row stands for its schedule
    // and those of `same_with`
    let tried: usize = refused.len()
        + ranked
            .iter()
            .map(|r| {
                1 + r
                    .get("same_with")
                    .map_or(0, |s| s.as_array().unwrap().len())
            })
            .sum::<usize>();
    assert_eq!(tried, 20);
    // NVLink SHARP and InfiniBand SHARP cannot run on PCIe and Ethernet
    assert_eq!(refused.len(), 6, "{refused:?}");
    for r in &refused {
        let algo = r["algo"].as_str().unwrap();
        assert!(["nvls", "nvls-tree", "sharp"].contains(&algo), "{r}");
        let why = r["refused"].as_str().unwrap();
        assert!(
            why.contains("pcie3-x16") || why.contains("eth-10g"),
            "{why}"
        );
    }
    // fastest first, ranked 1, 2, …, each against the best
    let time = |r: &serde_json::Value| r["iteration_time_s"].as_f64().unwrap();
    let best = ranked[0]["throughput"].as_f64().unwrap();
    for (i, r) in ranked.iter().enumerate() {
        assert_eq!(r["rank"].as_u64().unwrap() as usize, i + 1);
        if i > 0 {
            assert!(time(ranked[i - 1]) <= time(r));
        }
        let vs = r["throughput"].as_f64().unwrap() / best - 1.0;
        assert_eq!(r["vs_best"].as_f64().unwrap(), vs);
        let lossy = ["topk", "gtopk", "dct"].contains(&r["dense"].as_str().unwrap());
        assert_eq!(r["lossy"].as_bool().unwrap(), lossy, "{r}");
    }
    // the file's own strategy is marked, once
    let own: Vec<_> = ranked
        .iter()
        .filter(|r| r["this_file"].as_bool().unwrap())
        .collect();
    assert_eq!(own.len(), 1);
    assert_eq!(
        (own[0]["dense"].as_str(), own[0]["algo"].as_str()),
        (Some("allreduce"), Some("ring"))
    );
    // every ranked row is what `dtsim run` gives with its keys set
    for r in ranked.iter().take(3).chain(own.iter().copied()) {
        let mut text = SCENARIO.replace(
            "dense = \"allreduce\"\n",
            &format!(
                "dense = \"{}\"\nschedule = \"{}\"\n",
                r["dense"].as_str().unwrap(),
                r["schedule"].as_str().unwrap()
            ),
        );
        if r["dense"] == "allreduce" {
            text.push_str(&format!(
                "allreduce = \"{}\"\n",
                r["algo"].as_str().unwrap()
            ));
        }
        let one = write(&dir, "one.toml", &text);
        let run = json_rows(&dtsim(&["run", &one, "--json"]));
        assert_eq!(time(&run[0]), time(r), "{text}");
    }
}

#[test]
fn the_table_says_best_this_file_lossy_and_refused() {
    let dir = fresh_dir("advise", "table");
    let file = write(&dir, "vgg.toml", SCENARIO);
    let o = dtsim(&["advise", &file]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for says in [
        "vgg16 on 16 GPUs (4 machines, eth-10g), 32 a GPU; 20 ways tried, 14 apply",
        "<- this file",
        "best: ",
        "this file's strategy (allreduce (ring), fifo",
        "lossy: Top-k, gTop-k and DCT-DP",
        "gtopk (lossy)",
        "not applicable here (6 of the 20 ways):",
        "refuses: allreduce (nvls)",
    ] {
        assert!(out.contains(says), "`{says}` missing from:\n{out}");
    }
    // each way's busiest link and how busy, from its result, and no
    // padding after the last column
    assert!(
        out.contains("compression (ms)  busiest link (busy)\n"),
        "{out}"
    );
    let rows = json_rows(&dtsim(&["advise", &file, "--json"]));
    let own = rows
        .iter()
        .find(|r| r["this_file"].as_bool() == Some(true))
        .unwrap();
    let cell = format!(
        "  {} ({:.0}%)",
        own["busiest_link"].as_str().unwrap(),
        own["busiest_link_utilisation"].as_f64().unwrap() * 100.0
    );
    let line = out.lines().find(|l| l.contains("<- this file")).unwrap();
    assert!(
        line.contains(&format!("{cell}  <- this file")) || line.contains(&format!("{cell} ")),
        "{line}\n{cell}"
    );
    assert!(out.lines().all(|l| !l.ends_with(' ')), "{out}");
    // the same file and seed give the same bytes
    assert_eq!(dtsim(&["advise", &file]).stdout, o.stdout);
}

#[test]
fn a_sweep_of_the_method_keys_is_taken_and_any_other_refused() {
    let dir = fresh_dir("advise", "sweep");
    let methods = write(
        &dir,
        "methods.toml",
        &format!("{SCENARIO}[sweep]\n\"strategy.dense\" = [\"allreduce\", \"ps\"]\n"),
    );
    let o = dtsim(&["advise", &methods]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // a swept file has no single strategy of its own to mark
    assert!(!stdout(&o).contains("<- this file"));
    // and the DCT ways' warning, of a way the file does not run, is
    // theirs (2026-11-29: untagged for a swept file)
    let err = stderr(&o);
    assert!(
        err.contains("DCT-DP sorts each threshold")
            && err.contains("(of ways the advice tried, not the file's own)"),
        "{err}"
    );
    // a file that sweeps DCT-DP itself owns the warning
    let dct = write(
        &dir,
        "dct.toml",
        &format!("{SCENARIO}[sweep]\n\"strategy.dense\" = [\"allreduce\", \"dct\"]\n"),
    );
    let o = dtsim(&["advise", &dct]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("DCT-DP sorts each threshold"), "{err}");
    for l in err
        .lines()
        .filter(|l| l.contains("DCT-DP sorts each threshold"))
    {
        assert!(!l.contains("not the file's own"), "{err}");
    }
    let nodes = write(
        &dir,
        "nodes.toml",
        &format!("{SCENARIO}[sweep]\n\"cluster.nodes\" = [2, 4]\n"),
    );
    // located at the key's line of the [sweep] (2026-11-29: no line)
    let line = SCENARIO.lines().count() + 2;
    assert_bad(
        &dtsim(&["advise", &nodes]),
        &[
            &format!("nodes.toml:{line}: `cluster.nodes`: "),
            "this file sweeps it",
            "remove it from the [sweep]",
        ],
    );
    assert_bad(
        &dtsim(&["advise", dir.join("absent.toml").to_str().unwrap()]),
        &["absent.toml", "cannot read"],
    );
    let bad = write(&dir, "bad.toml", &SCENARIO.replace("vgg16", "vgg17"));
    assert_bad(&dtsim(&["advise", &bad]), &["bad.toml", "vgg17"]);
    // wrong only at the ways that read it (the sweep's Top-k point): a
    // kernel profile that cannot be read is the file's error, not a
    // method that does not apply
    // (2026-11-29, a review: Top-k and gTop-k listed as "not applicable",
    // exit 0)
    let profile = write(
        &dir,
        "profile.toml",
        &format!(
            "{}[sweep]\n\"strategy.dense\" = [\"allreduce\", \"topk\"]\n",
            SCENARIO.replace(
                "[strategy]",
                "kernel_profile = \"missing-kernels.toml\"\n[strategy]",
            )
        ),
    );
    assert_bad(
        &dtsim(&["advise", &profile]),
        &[
            "profile.toml:",
            "`model.kernel_profile`",
            "cannot read kernel profile",
        ],
    );
}

/// With embedding tables every sparse method is tried beside every dense
/// one (80 ways), and a key of the file's own sparse method
/// (`ps_partitions` beside `sparse = "ps"`) is dropped for the others, as
/// in a sweep over `strategy.sparse`, rather than refusing them; a file
/// whose own strategy does not apply still gets its advice.
#[test]
fn embedding_tables_bring_every_sparse_method() {
    let dir = fresh_dir("advise", "sparse");
    let text = r#"name = "advise-lm"
iterations = 2
[cluster]
nodes = 2
gpus_per_node = 2
network = "ib-edr-100g"
[model]
batch_per_gpu = 16
[[model.layers]]
name = "embedding"
params = 0
forward = "1ms"
backward = "2ms"
[model.layers.embedding]
vocab = 50000
dim = 64
density = 0.01
[[model.layers]]
name = "dense"
params = 1000000
forward = "5ms"
backward = "10ms"
[strategy]
dense = "allreduce"
sparse = "ps"
ps_partitions = 4
"#;
    let file = write(&dir, "lm.toml", text);
    let o = dtsim(&["advise", &file, "--json"]);
    // DCT-DP's window warning, given by its ways beside each of the four
    // sparse methods and both schedules, is printed once
    assert_eq!(
        stderr(&o).matches("DCT-DP sorts").count(),
        1,
        "{}",
        stderr(&o)
    );
    let rows = json_rows(&o);
    let ranked: Vec<_> = rows.iter().filter(|r| r.get("rank").is_some()).collect();
    for sparse in ["ps", "allgather", "allreduce", "alltoall"] {
        assert!(
            ranked
                .iter()
                .any(|r| r["sparse"] == sparse && r["dense"] == "allreduce"),
            "{sparse} not ranked"
        );
    }
    for r in rows.iter().filter(|r| r.get("refused").is_some()) {
        let why = r["refused"].as_str().unwrap();
        assert!(!why.contains("ps_partitions"), "{why}");
        // one schema for every row: the run's names
        assert!(r.get("algo").is_some() && r["sparse"].is_string(), "{r}");
    }
    let tried: usize = rows
        .iter()
        .map(|r| {
            1 + r
                .get("same_with")
                .map_or(0, |s| s.as_array().unwrap().len())
        })
        .sum();
    assert_eq!(tried, 80);
    // its own strategy refused (SHARP off Quantum switches): still advised
    let sharp = write(
        &dir,
        "sharp.toml",
        &text.replace("sparse = \"ps\"", "allreduce = \"sharp\"\nsparse = \"ps\""),
    );
    let o = dtsim(&["advise", &sharp]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("the file's own strategy does not apply here"));
    assert!(!stdout(&o).contains("<- this file"));
}

/// ResNet-50 on 8 DGX-like machines: the binomial tree's AllReduce under
/// FIFO and under priority is one result (it differed by picoseconds of
/// rounding until the broadcast sent to its farthest child first,
/// 2026-11-29; `same_but_rounding`'s unit test keeps that case), which
/// the advice ranks once; and
/// DCT-DP's warning about its measured window, which only the advice's
/// DCT ways give, says so rather than reading as advice on the file.
#[test]
fn rounding_apart_is_one_row_and_a_candidates_warning_says_whose() {
    let dir = fresh_dir("advise", "rounding");
    let text = r#"[cluster]
nodes = 8
gpus_per_node = 8
network = "ib-edr-100g"
intra = "nvlink3"
[model]
preset = "resnet50"
gpu = "a100"
batch_per_gpu = 64
[strategy]
allreduce = "ring"
"#;
    let file = write(&dir, "r50.toml", text);
    // the two schedules' runs: within a nanosecond
    let time = |schedule: &str| {
        let one = write(
            &dir,
            "one.toml",
            &text.replace(
                "allreduce = \"ring\"",
                &format!("allreduce = \"binomial\"\nschedule = \"{schedule}\""),
            ),
        );
        json_rows(&dtsim(&["run", &one, "--json"]))[0]["iteration_time_s"]
            .as_f64()
            .unwrap()
    };
    let (fifo, priority) = (time("fifo"), time("priority"));
    assert!((fifo - priority).abs() < 1e-9, "{fifo} {priority}");
    let o = dtsim(&["advise", &file, "--json"]);
    let rows = json_rows(&o);
    let binomial: Vec<_> = rows
        .iter()
        .filter(|r| r.get("rank").is_some() && r["algo"] == "binomial")
        .collect();
    assert_eq!(binomial.len(), 1, "{binomial:?}");
    assert_eq!(binomial[0]["schedule"], "fifo");
    assert_eq!(binomial[0]["same_with"], serde_json::json!(["priority"]));
    assert_eq!(binomial[0]["iteration_time_s"].as_f64().unwrap(), fifo);
    // the file (no DCT) gives no warning of its own; the DCT ways' is theirs
    let plain = dtsim(&["run", &file]);
    assert_eq!(stderr(&plain), "");
    let err = stderr(&o);
    assert!(
        err.contains("DCT-DP sorts each threshold once every 1000 iterations")
            && err.contains("(of ways the advice tried, not the file's own)"),
        "{err}"
    );
    // once, though both DCT ways (FIFO and priority) give it
    assert_eq!(err.matches("DCT-DP sorts").count(), 1, "{err}");
    // where the file's own strategy does not apply here (SHARP over
    // Ethernet), every way's warning is still said to be theirs
    // (2026-11-29: untagged there)
    let sharp = write(
        &dir,
        "sharp.toml",
        &text
            .replace("ib-edr-100g", "eth-10g")
            .replace("allreduce = \"ring\"", "allreduce = \"sharp\""),
    );
    let o = dtsim(&["advise", &sharp]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("(the file's own strategy does not apply here)"),
        "{err}"
    );
    assert!(
        err.contains("DCT-DP sorts each threshold")
            && err.contains("(of ways the advice tried, not the file's own)"),
        "{err}"
    );
}
