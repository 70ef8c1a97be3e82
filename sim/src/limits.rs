//! What dtsim accepts as input, and the error for a run that leaves the
//! representable range.
//!
//! Limits keep every simulated time inside a `u64` of picoseconds (about
//! 213 days) and every count inside the integer types the engine uses, so
//! that impossible input is refused with a message instead of wrapping or
//! saturating silently.

/// Most GPUs in one cluster.
pub const MAX_GPUS: u64 = 1 << 20;
/// Most points in one sweep grid (about a day of analytical points on
/// one core; larger studies are split into several scenarios).
pub const MAX_SWEEP_POINTS: u64 = 1_000_000_000;
/// Most measured (or warm-up) iterations.
pub const MAX_ITERATIONS: u64 = 1_000_000;
/// Most parameters in one layer.
pub const MAX_LAYER_PARAMS: u64 = 1_000_000_000_000;

/// Most dense variables one layer may list (`model.layers[i].variables`):
/// ResNet-50 has 161 in all, a large transformer a few thousand.
pub const MAX_LAYER_VARIABLES: usize = 100_000;
/// Longest compute time of one layer, seconds (one day).
pub const MAX_LAYER_TIME_S: f64 = 86_400.0;
/// Most pieces one tensor may be cut into by `partition`.
pub const MAX_PIECES_PER_TENSOR: u64 = 1_000_000;
/// Most partitions of one sparse variable (`strategy.ps_partitions`; each
/// is a CPU task of the servers every iteration).
pub const MAX_PARTITIONS: u32 = 65_536;
/// Most words the token model draws in one run (tokens per GPU × GPUs ×
/// iterations, over every table): about a minute of drawing.
pub const MAX_TOKEN_DRAWS: u64 = 1 << 32;
/// Most per-pair sizes EmbRace's vertical scheduling may hold (its prior
/// and delayed AlltoAllv's N × N sizes, for each iteration of drawn rows
/// and each table): 2^25 f64, 256 MiB. 2 × 4,096² under a density.
pub const MAX_PER_PAIR_SIZES: u64 = 1 << 25;
/// Most host CPU cores per machine.
pub const MAX_CPU_CORES: u32 = 4096;
/// Most machines dedicated to parameter servers (`strategy.ps_machines`).
pub const MAX_PS_MACHINES: u32 = 65_536;
/// Lowest bandwidth, bytes/s.
pub const MIN_BANDWIDTH: f64 = 1e3;
/// Highest bandwidth, bytes/s (1 PB/s).
pub const MAX_BANDWIDTH: f64 = 1e15;
/// Highest latency, seconds.
pub const MAX_LATENCY_S: f64 = 10.0;
/// Highest fabric oversubscription ratio.
pub const MAX_OVERSUBSCRIPTION: f64 = 1000.0;
/// Largest collective buffer, bytes (1 PiB).
pub const MAX_BYTES: u64 = 1 << 50;

/// Checks a bandwidth in bytes/s.
pub fn check_bandwidth(bw: f64) -> Result<(), String> {
    if (MIN_BANDWIDTH..=MAX_BANDWIDTH).contains(&bw) {
        Ok(())
    } else {
        Err(format!(
            "bandwidth {bw:e} B/s is outside [{MIN_BANDWIDTH:e}, {MAX_BANDWIDTH:e}] B/s"
        ))
    }
}

/// Checks a latency in seconds.
pub fn check_latency(s: f64) -> Result<(), String> {
    if (0.0..=MAX_LATENCY_S).contains(&s) {
        Ok(())
    } else {
        Err(format!("latency {s} s is outside [0, {MAX_LATENCY_S}] s"))
    }
}

/// Checks a GPU count built from nodes × GPUs per node.
pub fn check_gpus(nodes: u64, per_node: u64) -> Result<(), String> {
    match nodes.checked_mul(per_node) {
        Some(n) if n <= MAX_GPUS => Ok(()),
        _ => Err(format!(
            "{nodes} nodes × {per_node} GPUs is more than the {MAX_GPUS} GPUs dtsim simulates"
        )),
    }
}

/// Most parameter servers a machine hosts, and most machines dedicated to
/// them a GPU machine: a PS program's sends grow as the GPUs times the
/// servers.
pub const MAX_PS_PER_MACHINE: u32 = 64;

/// The bound a parameter servers' layout passes ([`check_ps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PsBound {
    /// Dedicated machines a GPU machine.
    Machines,
    /// Servers a machine.
    Servers,
}

/// Checks `servers` parameter servers on `machines` dedicated machines
/// (0: on the `nodes` GPU machines): at most [`MAX_PS_PER_MACHINE`]
/// machines a GPU machine and servers a machine.
pub fn check_ps(nodes: u32, machines: u32, servers: u32) -> Result<(), (PsBound, String)> {
    let plural = |n: u32| if n == 1 { "" } else { "s" };
    let max = MAX_PS_PER_MACHINE as u64;
    let nodes = nodes.max(1);
    if machines as u64 > max * nodes as u64 {
        return Err((
            PsBound::Machines,
            format!(
                "{machines} dedicated machines for {nodes} GPU machine{} is more than {max} a GPU machine",
                plural(nodes)
            ),
        ));
    }
    let hosts = if machines > 0 { machines } else { nodes };
    if servers as u64 > max * hosts as u64 {
        return Err((
            PsBound::Servers,
            format!(
                "{servers} servers on {hosts} {}machine{} is more than {max} a machine",
                if machines > 0 { "dedicated " } else { "" },
                plural(hosts)
            ),
        ));
    }
    Ok(())
}

/// Checks an oversubscription ratio.
pub fn check_oversubscription(r: f64) -> Result<(), String> {
    if (1.0..=MAX_OVERSUBSCRIPTION).contains(&r) {
        Ok(())
    } else {
        Err(format!(
            "must be in [1, {MAX_OVERSUBSCRIPTION}] (1 = non-blocking), got {r}"
        ))
    }
}

/// A simulation that could not complete.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// Simulated time passed what a `u64` of picoseconds holds.
    #[error(
        "the simulated time of {0} exceeds the representable range (about 213 days); check the bandwidths, latencies, sizes and compute times"
    )]
    TimeOverflow(String),
}
