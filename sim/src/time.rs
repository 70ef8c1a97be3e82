//! Simulated time: an integer count of picoseconds.
//!
//! Integer time keeps event ordering exact: two events computed along
//! different paths to the same instant compare equal, and a run is
//! bit-for-bit reproducible. A `u64` of picoseconds spans about 213 days,
//! far beyond any training iteration we simulate.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, or a duration, in picoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

/// Picoseconds per second.
pub const PS_PER_S: f64 = 1e12;

impl SimTime {
    /// Time zero.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time.
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Converts seconds to the nearest picosecond; negative or non-finite
    /// input saturates (to 0 or `MAX`).
    ///
    /// ```
    /// use sim::SimTime;
    /// assert_eq!(SimTime::from_secs(1.5e-6), SimTime(1_500_000));
    /// ```
    pub fn from_secs(s: f64) -> SimTime {
        let ps = (s * PS_PER_S).round();
        if ps.is_nan() || ps <= 0.0 {
            SimTime(0)
        } else if ps >= u64::MAX as f64 {
            SimTime::MAX
        } else {
            SimTime(ps as u64)
        }
    }

    /// Seconds as `f64`.
    pub fn as_secs(self) -> f64 {
        self.0 as f64 / PS_PER_S
    }

    /// Saturating subtraction.
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        *self = *self + rhs;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        debug_assert!(self >= rhs, "time went backwards: {self:?} - {rhs:?}");
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.as_secs();
        if s >= 1.0 {
            write!(f, "{s:.3} s")
        } else if s >= 1e-3 {
            write!(f, "{:.3} ms", s * 1e3)
        } else {
            write!(f, "{:.3} us", s * 1e6)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_saturates() {
        assert_eq!(SimTime::from_secs(0.390).as_secs(), 0.390);
        assert_eq!(SimTime::from_secs(-1.0), SimTime::ZERO);
        assert_eq!(SimTime::from_secs(f64::INFINITY), SimTime::MAX);
        assert_eq!(SimTime::MAX + SimTime(1), SimTime::MAX);
    }
}
