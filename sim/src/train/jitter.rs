//! Stragglers: each GPU's compute speed in each iteration.
//!
//! With `model.compute_jitter` = c > 0, every compute task GPU g runs in
//! iteration i takes its nominal duration times a factor X(g, i) drawn
//! from a log-normal distribution with mean 1 and coefficient of
//! variation c: ln X ~ N(μ, σ²) with σ² = ln(1 + c²), μ = −σ²/2. The
//! factor holds for the whole iteration (a slow GPU is slow for the
//! iteration: clocks, thermal throttling and host interference change
//! over seconds, not per kernel), and draws are independent across GPUs
//! and iterations. Sources for typical values of c are in
//! `docs/models.md`.
//!
//! X(g, i) is a function of (seed, g, i) alone, drawn from its own
//! generator seeded by a hash of the three, so the draws do not depend on
//! the order in which the engine asks for them, nor on how many GPUs or
//! iterations a run has: GPU 3's iteration 7 is the same draw in a run of
//! 8 GPUs and of 1024.

use crate::seed::mix;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, LogNormal};

/// Per-GPU, per-iteration compute-time factors.
#[derive(Debug, Clone)]
pub struct Jitter {
    seed: u64,
    dist: Option<LogNormal<f64>>,
}

impl Jitter {
    /// Factors of coefficient of variation `cv` (0: every factor is 1).
    ///
    /// # Panics
    /// If `cv` is negative or not finite (scenarios refuse it first).
    pub fn new(seed: u64, cv: f64) -> Jitter {
        assert!(cv.is_finite() && cv >= 0.0, "compute jitter {cv}");
        Jitter {
            seed,
            dist: (cv > 0.0).then(|| LogNormal::from_mean_cv(1.0, cv).expect("a valid log-normal")),
        }
    }

    /// Whether every factor is exactly 1.
    pub fn is_none(&self) -> bool {
        self.dist.is_none()
    }

    /// GPU `gpu`'s factor in iteration `iter`.
    pub fn factor(&self, gpu: u32, iter: u32) -> f64 {
        let Some(dist) = &self.dist else {
            return 1.0;
        };
        let key = mix(mix(self.seed ^ 0x6a09_e667_f3bc_c908) ^ ((gpu as u64) << 32 | iter as u64));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(key);
        dist.sample(&mut rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_jitter_is_exactly_one() {
        let j = Jitter::new(7, 0.0);
        assert!(j.is_none());
        assert_eq!(j.factor(3, 9), 1.0);
    }

    /// Mean 1 and the asked CV, over many draws (the standard error of the
    /// mean of n draws is c/√n; of the sample CV about c/√(2n) for a
    /// near-normal law: 5 standard errors of 40,000 draws).
    #[test]
    fn draws_have_mean_one_and_the_asked_cv() {
        let c = 0.1;
        let j = Jitter::new(1, c);
        let n = 40_000;
        let xs: Vec<f64> = (0..n).map(|k| j.factor(k % 200, k / 200)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let cv = var.sqrt() / mean;
        assert!(
            (mean - 1.0).abs() < 5.0 * c / (n as f64).sqrt(),
            "mean {mean}"
        );
        assert!(
            (cv - c).abs() < 5.0 * c / (2.0 * n as f64).sqrt(),
            "cv {cv}"
        );
    }

    /// A draw depends on (seed, GPU, iteration) only.
    #[test]
    fn draws_are_a_function_of_seed_gpu_and_iteration() {
        let a = Jitter::new(5, 0.2);
        let b = Jitter::new(5, 0.2);
        assert_eq!(a.factor(3, 7), b.factor(3, 7));
        assert_ne!(a.factor(3, 7), a.factor(7, 3));
        assert_ne!(a.factor(3, 7), Jitter::new(6, 0.2).factor(3, 7));
    }
}
