//! Integration tests of the `sim` crate: the validation cases of
//! `shared/validation/CASES.md`, properties of the network models, and
//! training behaviour. One binary with topic modules links faster.

mod cases;
mod compressed;
mod dct;
mod engine;
mod links;
mod mp;
mod profile_checks;
mod properties;
mod sparse;
mod topology;
mod training;

use sim::cluster::ClusterSpec;
use sim::collective::exec::{FlowOutcome, run_flow};
use sim::collective::{Algo, Collective, Op};

/// `text` with `ideal = true`: the pure model, no losses besides bytes
/// (`sim::losses`), as the tests of the model's mechanics need it.
pub fn ideal(text: &str) -> String {
    format!("ideal = true\n{text}")
}

/// Relative error of `got` against `want`.
pub fn rel(got: f64, want: f64) -> f64 {
    ((got - want) / want).abs()
}

/// Asserts `got` is within `tol` (relative) of `want`.
#[track_caller]
pub fn assert_close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        rel(got, want) <= tol,
        "{what}: got {got}, want {want} (rel err {:.3e} > {tol})",
        rel(got, want)
    );
}

/// A collective with an algorithm.
pub fn coll(op: Op, algo: Algo) -> Collective {
    Collective::new(op).with_algo(algo).expect("supported")
}

/// Time of `c` for `bytes` on `cluster` in both models: (analytical, flow).
pub fn both(c: &Collective, cluster: &ClusterSpec, bytes: f64) -> (f64, f64, FlowOutcome) {
    let a = c.analytical(cluster).time(bytes);
    let f = run_flow(c, cluster, bytes).expect("in range");
    (a, f.time.as_secs(), f)
}

/// Four single-GPU nodes, one layer of 100 MB of gradients, `strategy`.
pub fn one_layer(strategy: &str) -> String {
    format!(
        r#"
iterations = 3
[cluster]
nodes = 4
network = "eth-10g"
bandwidth = "10Gbps"
latency = "0us"
intra_latency = "0us"
model = "analytical"
[model]
batch_per_gpu = 8
[[model.layers]]
params = 25000000
forward = "10ms"
backward = "20ms"
[strategy]
fusion = 0
{strategy}
"#
    )
}
