//! The gallery (docs/gallery/) is what dtsim produces today: each report is
//! re-made from its example scenario and its table and report.md must
//! match the committed ones byte for byte. When the model changes on
//! purpose, regenerate with `sh docs/gallery/make.sh`.

use std::path::Path;
use std::process::Command;

/// Each report's directory under docs/gallery/ and the scenario it is made
/// from.
const GALLERY: [(&str, &str); 17] = [
    (
        "scaling-10gbe-vs-ib",
        "scenarios/examples/scaling-10gbe-vs-ib.toml",
    ),
    (
        "schedule-by-model",
        "scenarios/examples/schedule-by-model.toml",
    ),
    ("stragglers", "scenarios/examples/stragglers.toml"),
    (
        "compression-h200-measured-kernels",
        "scenarios/examples/compression-h200-measured-kernels.toml",
    ),
    (
        "vgg16-16gpu-10gbe",
        "scenarios/examples/vgg16-16gpu-10gbe.toml",
    ),
    (
        "ps-dedicated-machines",
        "scenarios/examples/ps-dedicated-machines.toml",
    ),
    (
        "sparse-ps-dedicated-machines",
        "scenarios/examples/sparse-ps-dedicated-machines.toml",
    ),
    ("parallax-table2", "scenarios/papers/parallax/table2.toml"),
    (
        "parallax-whole-variables",
        "scenarios/papers/parallax/whole-variables-images.toml",
    ),
    (
        "embrace-fig7-gnmt8",
        "scenarios/papers/embrace/fig7-gnmt8.toml",
    ),
    (
        "embrace-fig7-lm-rtx2080",
        "scenarios/papers/embrace/fig7-lm-rtx2080.toml",
    ),
    (
        "embrace-fig9-gnmt8",
        "scenarios/papers/embrace/fig9-gnmt8.toml",
    ),
    ("embrace-fig4a", "scenarios/papers/embrace/fig4a.toml"),
    (
        "gtopk-table4-vgg16",
        "scenarios/papers/gtopk/table4-vgg16.toml",
    ),
    ("dct-dp-sparsity", "scenarios/papers/dct/dp-sparsity.toml"),
    ("dct-mp-sparsity", "scenarios/papers/dct/mp-sparsity.toml"),
    ("ring-lm-40gpu", "scenarios/papers/ring/lm-40gpu.toml"),
];

#[test]
fn the_gallery_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gallery");
    let _ = std::fs::remove_dir_all(&tmp);
    for (name, scenario) in GALLERY {
        let committed = root.join("docs/gallery").join(name);
        let out = tmp.join(name);
        let o = Command::new(env!("CARGO_BIN_EXE_dtsim"))
            .current_dir(root)
            .args(["report", scenario, "-o", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stale = format!("{name}: stale; run `sh docs/gallery/make.sh`");
        let csv = std::fs::read(out.join("results.csv")).unwrap();
        assert!(
            csv == std::fs::read(committed.join("results.csv")).unwrap(),
            "{stale} (results.csv differs)"
        );
        // report.md names the command that made it: the output directory differs
        let md = std::fs::read_to_string(out.join("report.md"))
            .unwrap()
            .replace(out.to_str().unwrap(), &format!("docs/gallery/{name}"));
        let want = std::fs::read_to_string(committed.join("report.md")).unwrap();
        assert!(md == want, "{stale} (report.md differs)");
        // every picture report.md embeds is committed, as dtsim draws it
        // today (pictures are byte-deterministic: tests/report.rs)
        for line in want.lines().filter(|l| l.starts_with("![")) {
            let file = &line[line.find("](").unwrap() + 2..line.len() - 1];
            let have = std::fs::read(committed.join(file))
                .unwrap_or_else(|_| panic!("{name}: {file} missing"));
            assert!(
                have == std::fs::read(out.join(file)).unwrap(),
                "{stale} ({file} differs)"
            );
        }
    }
}
