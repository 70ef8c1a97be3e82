//! Deriving independent generator seeds from a scenario's seed.
//!
//! Random draws (compute jitter, token draws) are keyed by the scenario's
//! seed and by where they happen (GPU, iteration, table), so that a draw
//! does not depend on the order the engine asks for it: the same scenario
//! and seed give the same numbers however the run is split or scheduled.

/// SplitMix64's finaliser (Steele, Lea and Flood 2014, "Fast splittable
/// pseudorandom number generators"): a bijective mix of 64 bits, so nearby
/// keys give unrelated generator seeds.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::mix;

    #[test]
    fn mix_is_splitmix64s_finaliser() {
        // SplitMix64 seeded with 0 returns mix(0x9e3779b97f4a7c15) first:
        // 0xe220a8397b1dcdaf (the reference implementation's first output)
        assert_eq!(mix(0x9e37_79b9_7f4a_7c15), 0xe220_a839_7b1d_cdaf);
        assert_eq!(mix(0), 0);
    }
}
