//! # sim — dtsim's engine
//!
//! A discrete-event simulator of data-parallel deep-learning training on a
//! GPU cluster: per-layer GPU compute, the gradient traffic of each
//! synchronisation method, the network that carries it, and the scheduler
//! that decides what goes on the wire first.
//!
//! ```text
//!  scenario (TOML) ──▶ scenario::load ──▶ Scenario
//!                                          │
//!          ┌───────────────────────────────┼──────────────────────┐
//!          ▼                               ▼                      ▼
//!   cluster::Topology               workload::Model         strategy::Strategy
//!   (GPUs, NICs, links)            (layers, compute)       (method, schedule,
//!          │                               │                 fusion, partition)
//!          ▼                               ▼                      │
//!   collective (programs of sends) ──▶ train::simulate ◀──────────┘
//!     ├─ analytical: α-β per step            │
//!     └─ exec: flows on net::flow            ▼
//!                                     train::RunResult
//! ```
//!
//! Time is an integer number of picoseconds ([`SimTime`]); events are
//! ordered by (time, sequence) in [`queue::EventQueue`], so the same
//! scenario and seed give byte-identical results.
//!
//! Formulas in doc comments cite the papers in `shared/papers/` by name
//! (BaiduRing, Parallax, EmbRace, gTop-k, DCT) and equation or table.
#![warn(missing_docs)]

pub mod cluster;
pub mod collective;
pub mod formulas;
pub mod limits;
pub mod net;
pub mod queue;
pub mod scenario;
pub mod strategy;
pub mod time;
pub mod train;
pub mod units;
pub mod workload;

pub use limits::SimError;
pub use time::SimTime;
