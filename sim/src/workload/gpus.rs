//! Device figures of the GPUs the presets name, for the kernels a method
//! inserts (EmbRace's vertical scheduling): memory bandwidth from the
//! vendors' specification sheets (memory data rate × bus width / 8).

/// Peak memory bandwidth of each known GPU key, bytes per second, with
/// its source.
pub const MEMORY_BANDWIDTH: [(&str, f64, &str); 8] = [
    (
        "titan-xp",
        547.7e9,
        "NVIDIA TITAN Xp specifications: 11.4 Gbps GDDR5X, 384-bit",
    ),
    (
        "p102-100",
        440.3e9,
        "TechPowerUp GPU database, NVIDIA P102-100: 11 Gbps GDDR5X, 320-bit",
    ),
    (
        "rtx2080",
        448.0e9,
        "NVIDIA GeForce RTX 2080 specifications: 14 Gbps GDDR6, 256-bit",
    ),
    (
        "rtx3090",
        936.2e9,
        "NVIDIA GeForce RTX 3090 specifications: 19.5 Gbps GDDR6X, 384-bit",
    ),
    (
        "v100",
        900.0e9,
        "NVIDIA V100 datasheet (SXM2): HBM2 900 GB/s",
    ),
    (
        "a100",
        1555.0e9,
        "NVIDIA A100 datasheet, 40GB (the preset's Lambda row): HBM2 1,555 GB/s",
    ),
    (
        "h100",
        3.35e12,
        "NVIDIA H100 datasheet (SXM5): HBM3 3.35 TB/s",
    ),
    ("h200", 4.8e12, "NVIDIA H200 datasheet: HBM3e 4.8 TB/s"),
];

/// The memory bandwidth of GPU `gpu` in bytes per second; for a GPU the
/// table does not know (a custom model's), the lowest in it (the
/// P102-100's), so that an inserted kernel is not made cheaper than on
/// any GPU dtsim knows.
pub fn memory_bandwidth(gpu: &str) -> f64 {
    MEMORY_BANDWIDTH
        .iter()
        .find(|(k, _, _)| *k == gpu)
        .map_or_else(
            || {
                MEMORY_BANDWIDTH
                    .iter()
                    .map(|(_, b, _)| *b)
                    .fold(f64::INFINITY, f64::min)
            },
            |(_, b, _)| *b,
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every GPU key of the presets has a bandwidth (CPU devices, whose
    /// kernels come from a CPU measurement, are not GPUs), and an unknown
    /// GPU gets the lowest.
    #[test]
    fn every_preset_gpu_has_a_bandwidth() {
        for t in super::super::preset_data::PRESETS
            .iter()
            .flat_map(|p| p.throughputs.iter())
            .filter(|t| !super::super::kernels::CPU_DEVICES.contains(&t.gpu))
        {
            assert!(
                MEMORY_BANDWIDTH.iter().any(|(k, _, _)| *k == t.gpu),
                "{}",
                t.gpu
            );
        }
        assert_eq!(memory_bandwidth("rtx3090"), 936.2e9);
        assert_eq!(memory_bandwidth("custom"), 440.3e9);
    }
}
