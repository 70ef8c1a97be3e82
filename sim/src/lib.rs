//! # sim — dtsim's engine
//!
//! A discrete-event simulator of distributed deep-learning training on a
//! GPU cluster: an iteration is a graph of tasks (GPU compute per layer,
//! CPU work, collectives on channels) that a planner builds for each
//! synchronisation method; the engine runs it on every GPU (or one that
//! stands for all), over a network model that carries every collective in
//! flight, with schedulers that decide what goes on the wire first.
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
//!   collective (programs of sends)    train::planner ◀──────────────┘
//!     ├─ analytical: α-β per step            │ Plan: tasks on GPU streams,
//!     └─ exec: flows on net::flow            ▼ hosts and channels
//!                  ▲                  train::engine ──▶ train::RunResult,
//!                  └── train::comm ───────┘              train::Timeline
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
pub mod losses;
pub mod names;
pub mod net;
pub mod profile;
pub mod queue;
pub mod scenario;
pub mod seed;
pub mod strategy;
pub mod time;
pub mod train;
pub mod units;
pub mod workload;

pub use limits::SimError;
pub use time::SimTime;
