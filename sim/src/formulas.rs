//! The papers' closed forms, written as they are printed.
//!
//! These are the *specification* the simulator is tested against: the
//! collective programs (`crate::collective`) are costed by the analytical
//! and flow models, and tests check both against these formulas on the
//! clusters the papers assume. Nothing in the simulator calls these to
//! produce a result.
//!
//! Symbols follow each paper (they disagree; see CASES.md, convention 4).

/// log2 of a positive integer, as a float.
fn log2(p: u32) -> f64 {
    (p as f64).log2()
}

/// Ring AllReduce time, BaiduRing and gTop-k Eq. 5:
/// `2(N−1)α + 2(N−1)/N · m · β` (α s per message, β s per byte, m bytes).
pub fn ring_allreduce(n: u32, m: f64, alpha: f64, beta: f64) -> f64 {
    let n = n as f64;
    2.0 * (n - 1.0) * alpha + 2.0 * (n - 1.0) / n * m * beta
}

/// Bytes each GPU sends in a ring AllReduce, BaiduRing: `2(N−1)/N · S`.
pub fn ring_allreduce_bytes_sent(n: u32, s: f64) -> f64 {
    let n = n as f64;
    2.0 * (n - 1.0) / n * s
}

/// Single-reducer (gather, average, broadcast) time, BaiduRing:
/// `(N−1) · S / B` on a full-duplex reducer link.
pub fn single_reducer(n: u32, s: f64, b: f64) -> f64 {
    (n as f64 - 1.0) * s / b
}

/// gTop-k Eq. 6: TopK-AllGather time `log2(P)·α + 2(P−1)·k·β`
/// (α in s, β in s per element, k elements).
pub fn gtopk_topk_allgather(p: u32, k: f64, alpha: f64, beta: f64) -> f64 {
    log2(p) * alpha + 2.0 * (p as f64 - 1.0) * k * beta
}

/// gTop-k Eq. 7: gTopKAllReduce time `2·log2(P)·α + 4k·log2(P)·β`.
pub fn gtopk_gtopk_allreduce(p: u32, k: f64, alpha: f64, beta: f64) -> f64 {
    2.0 * log2(p) * alpha + 4.0 * k * log2(p) * beta
}

/// EmbRace Table 2, AlltoAll (two calls): `2(N−1)(αM/(NB) + β)`
/// (α density, β latency, B bandwidth, M bytes).
pub fn embrace_alltoall(n: u32, m: f64, density: f64, b: f64, beta: f64) -> f64 {
    let n = n as f64;
    2.0 * (n - 1.0) * (density * m / (n * b) + beta)
}

/// EmbRace Table 2, ring AllReduce of the dense gradient:
/// `2(N−1)(M/(NB) + β)`.
pub fn embrace_allreduce(n: u32, m: f64, b: f64, beta: f64) -> f64 {
    let n = n as f64;
    2.0 * (n - 1.0) * (m / (n * b) + beta)
}

/// EmbRace Table 2, PS with one server per node: `2N(αM/(nB) + β)`.
pub fn embrace_ps(n: u32, nodes: u32, m: f64, density: f64, b: f64, beta: f64) -> f64 {
    2.0 * n as f64 * (density * m / (nodes as f64 * b) + beta)
}

/// EmbRace Table 2, AllGather of sparse gradients: `(N−1)(αM/B + β)`.
pub fn embrace_allgather(n: u32, m: f64, density: f64, b: f64, beta: f64) -> f64 {
    (n as f64 - 1.0) * (density * m / b + beta)
}

/// Parallax Table 3: bytes sent plus received per machine, N machines of
/// one worker, m variables of w bytes, sparse density α.
pub mod parallax_table3 {
    /// Dense PS, one variable, at the machine hosting it: `2w(N−1)`.
    pub fn dense_ps_one_host(n: u32, w: f64) -> f64 {
        2.0 * w * (n as f64 - 1.0)
    }
    /// Dense PS, one variable, any other machine: `2w`.
    pub fn dense_ps_one_other(w: f64) -> f64 {
        2.0 * w
    }
    /// Dense PS or AR, m variables: `4wm(N−1)/N`.
    pub fn dense_m(n: u32, w: f64, m: f64) -> f64 {
        4.0 * w * m * (n as f64 - 1.0) / n as f64
    }
    /// Dense AR, one variable: `4w(N−1)/N`.
    pub fn dense_ar_one(n: u32, w: f64) -> f64 {
        dense_m(n, w, 1.0)
    }
    /// Sparse PS, one variable, at the machine hosting it: `2αw(N−1)`
    /// (`aw` = αw, one GPU's sparse gradient).
    pub fn sparse_ps_one_host(n: u32, aw: f64) -> f64 {
        2.0 * aw * (n as f64 - 1.0)
    }
    /// Sparse PS, m variables spread over the servers: `4αwm(N−1)/N`.
    pub fn sparse_ps_m(n: u32, aw: f64, m: f64) -> f64 {
        dense_m(n, aw, m)
    }
    /// Sparse AR (AllGatherv), m variables: `2αwm(N−1)` (one variable:
    /// m = 1).
    pub fn sparse_ar_m(n: u32, aw: f64, m: f64) -> f64 {
        2.0 * aw * m * (n as f64 - 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        ((a - b) / b).abs() <= rel
    }

    /// GT-A1 (gTop-k Table I at m = 25e6, ρ = 0.001, α = 0.436 ms,
    /// β = 3.6e-5 ms per element): the printed formulas give the CASES table.
    #[test]
    fn gtopk_table_values() {
        let (a, b) = (0.436e-3, 3.6e-8);
        let m = 25e6;
        let k = 0.001 * m;
        let rows = [
            (2, 900.87, 2.236, 4.472),
            (8, 1581.10, 13.908, 13.416),
            (128, 1896.68, 231.652, 31.304),
        ];
        for (p, d, t, g) in rows {
            assert!(close(ring_allreduce(p, m, a, b) * 1e3, d, 1e-4));
            assert!(close(gtopk_topk_allgather(p, k, a, b) * 1e3, t, 1e-4));
            assert!(close(gtopk_gtopk_allreduce(p, k, a, b) * 1e3, g, 1e-4));
        }
    }

    /// ER-A1: GNMT-8, N=16, n=4, β=10 µs.
    #[test]
    fn embrace_table2_values() {
        let m = 264_765_440.0;
        let (d, b) = (0.103, 12.5e9);
        assert!(close(
            embrace_alltoall(16, m, d, b, 10e-6) * 1e3,
            4.391,
            1e-3
        ));
        assert!(close(
            embrace_allreduce(16, m, b, 10e-6) * 1e3,
            40.015,
            1e-3
        ));
        assert!(close(embrace_ps(16, 4, m, d, b, 10e-6) * 1e3, 17.773, 1e-3));
        assert!(close(
            embrace_allgather(16, m, d, b, 10e-6) * 1e3,
            32.875,
            1e-3
        ));
    }
}
