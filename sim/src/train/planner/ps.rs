//! Data parallelism through parameter servers (Parallax §2): each layer's
//! gradient is pushed to the servers holding its shards and the updated
//! parameters pulled back, with servers on every machine by default and,
//! with local aggregation, one push per machine after an intra-node
//! reduce. The servers' CPU time is not modelled yet (it arrives with the
//! sparse-methods issue, as CPU tasks on the hosts).

use super::super::TrainConfig;
use super::super::task::Plan;

/// The plan: [`super::data_parallel`] with the strategy's PS collective.
pub fn plan(cfg: &TrainConfig) -> Plan {
    super::data_parallel(cfg, cfg.strategy.dense_collective(), "communication")
}
