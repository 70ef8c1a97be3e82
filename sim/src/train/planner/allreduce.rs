//! Data parallelism with AllReduce (BaiduRing's ring, NCCL's pipelined
//! double binary tree, a binomial tree, the hierarchical intra/inter/intra
//! variant, or in-switch reduction: NVLS, SHARP): every GPU sums each layer's
//! gradient with every other's as soon as its backward pass ends, on one
//! NCCL-like channel.

use super::super::TrainConfig;
use super::super::task::Plan;

/// The plan: [`super::data_parallel`] with the strategy's AllReduce.
pub fn plan(cfg: &TrainConfig) -> Plan {
    super::data_parallel(cfg, cfg.strategy.dense_collective(), "communication")
}
