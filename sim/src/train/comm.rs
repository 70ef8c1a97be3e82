//! What a message costs: the network side of the engine.
//!
//! * `analytical`: a message costs its collective's α-β time
//!   ([`CostModel`]), alone on the network even when another channel's
//!   message runs at the same time (concurrent collectives do not see each
//!   other in this model). Compiled once per collective and reused.
//! * `flow`, one channel: no two collectives of the plan can be in flight
//!   at once, so a message takes the time its collective takes alone on
//!   the flow network; that run is simulated once per (collective, size)
//!   and reused ([`Comm::Isolated`]).
//! * `flow`, several channels (or [`super::Options::reuse_isolated`]
//!   off): every transfer of every message in flight is a flow of one
//!   shared max-min network ([`Network`]), so collectives on different
//!   channels contend for links; the cache is bypassed. The network
//!   follows node 0 only when every collective of the plan is
//!   node-symmetric (messages start at instants common to all ranks, so
//!   all nodes stay alike).

use super::task::{Plan, Work};
use super::{Options, intern};
use crate::cluster::ClusterSpec;
use crate::collective::analytical::CostModel;
use crate::collective::exec::{Finished, InstanceId, Network, run_program};
use crate::collective::{Collective, Payload};
use crate::limits::SimError;
use crate::net::NetModel;
use crate::time::SimTime;
use std::collections::BTreeMap;

/// How a message started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Started {
    /// It ends at this time, each GPU having sent this many bytes.
    Ends(SimTime, f64),
    /// It runs on the shared network; [`Comm::step`] reports its end.
    Live(InstanceId),
}

/// The network side of a run.
pub enum Comm {
    /// Closed-form α-β per message.
    Analytical {
        /// The cluster.
        cluster: ClusterSpec,
        /// The collectives met so far, and their compiled models.
        colls: Vec<Collective>,
        /// Their compiled models, in the same order.
        models: Vec<CostModel>,
    },
    /// Flow results of collectives alone on the network, reused.
    Isolated {
        /// The cluster.
        cluster: ClusterSpec,
        /// (collective, uniform size) → (duration, bytes sent per GPU).
        cache: BTreeMap<(usize, u64), (SimTime, f64)>,
        /// The collectives the cache keys index.
        colls: Vec<Collective>,
        /// Flow events spent filling the cache.
        events: u64,
    },
    /// Every message on one shared flow network.
    Shared {
        /// The cluster.
        cluster: ClusterSpec,
        /// The network.
        net: Box<Network>,
    },
}

fn overflow(coll: &Collective, payload: &Payload) -> SimError {
    SimError::TimeOverflow(format!("a {} of {} bytes", coll.op.name(), payload.bytes()))
}

impl Comm {
    /// The backend for `plan` on `cluster` under `model`.
    pub fn new(cluster: &ClusterSpec, model: NetModel, plan: &Plan, opts: Options) -> Comm {
        let cluster = cluster.clone();
        match model {
            NetModel::Analytical => Comm::Analytical {
                cluster,
                colls: Vec::new(),
                models: Vec::new(),
            },
            NetModel::Flow if opts.reuse_isolated && plan.channels.len() <= 1 => Comm::Isolated {
                cluster,
                cache: BTreeMap::new(),
                colls: Vec::new(),
                events: 0,
            },
            NetModel::Flow => {
                let symmetric = plan.tasks.iter().all(|t| match &t.work {
                    Work::Comm {
                        collective,
                        payload,
                        ..
                    } => collective.program_for(&cluster, payload).node_symmetric(),
                    _ => true,
                });
                Comm::Shared {
                    net: Box::new(Network::new(&cluster, opts.fold_nodes && symmetric)),
                    cluster,
                }
            }
        }
    }

    /// Starts a message of `coll` carrying `payload` at `now`.
    pub fn start(
        &mut self,
        now: SimTime,
        coll: Collective,
        payload: &Payload,
    ) -> Result<Started, SimError> {
        match self {
            Comm::Analytical {
                cluster,
                colls,
                models,
            } => {
                let (t, sent) = match payload {
                    Payload::Uniform(b) => {
                        let i = intern(colls, coll);
                        if i == models.len() {
                            models.push(coll.analytical(cluster));
                        }
                        (models[i].time(*b), models[i].bytes_sent_total(*b))
                    }
                    p => CostModel::time_of(&coll, cluster, p),
                };
                if t >= SimTime::MAX.as_secs() {
                    return Err(SimError::TimeOverflow(format!(
                        "a message of {} bytes",
                        payload.bytes()
                    )));
                }
                Ok(Started::Ends(
                    now + SimTime::from_secs(t),
                    sent / cluster.gpus() as f64,
                ))
            }
            Comm::Isolated {
                cluster,
                cache,
                colls,
                events,
            } => {
                let key = match payload {
                    Payload::Uniform(b) => Some((intern(colls, coll), *b as u64)),
                    _ => None,
                };
                if let Some(&(d, sent)) = key.and_then(|k| cache.get(&k)) {
                    return Ok(Started::Ends(now + d, sent));
                }
                let prog = coll.program_for(cluster, payload);
                let out = run_program(&prog, cluster).map_err(|_| overflow(&coll, payload))?;
                *events += out.events;
                let c = (out.time, out.bytes_sent_per_gpu(cluster.gpus()));
                if let Some(k) = key {
                    cache.insert(k, c);
                }
                Ok(Started::Ends(now + c.0, c.1))
            }
            Comm::Shared { cluster, net } => {
                let prog = coll.program_for(cluster, payload);
                Ok(Started::Live(net.start(now, prog)))
            }
        }
    }

    /// When the shared network next has something to do (`SimTime::MAX`
    /// for the other backends, whose messages end by the engine's clock).
    pub fn next_time(&mut self) -> SimTime {
        match self {
            Comm::Shared { net, .. } => net.next_time(),
            _ => SimTime::MAX,
        }
    }

    /// Whether the shared network has anything in flight.
    pub fn busy(&self) -> bool {
        matches!(self, Comm::Shared { net, .. } if net.busy())
    }

    /// Advances the shared network by one instant; appends the messages
    /// that finished to `done`.
    pub fn step(&mut self, done: &mut Vec<(InstanceId, Finished)>) {
        if let Comm::Shared { net, .. } = self {
            net.step();
            net.take(done);
        }
    }

    /// Messages that finished at once when started (one-GPU programs).
    pub fn take_finished(&mut self, done: &mut Vec<(InstanceId, Finished)>) {
        if let Comm::Shared { net, .. } = self {
            net.take(done);
        }
    }

    /// Messages in flight on the shared network.
    pub fn in_flight(&self) -> usize {
        match self {
            Comm::Shared { net, .. } => net.in_flight(),
            _ => 0,
        }
    }

    /// Network events spent.
    pub fn events(&self) -> u64 {
        match self {
            Comm::Analytical { .. } => 0,
            Comm::Isolated { events, .. } => *events,
            Comm::Shared { net, .. } => net.events(),
        }
    }
}
