//! Network models.
//!
//! * [`NetModel::Analytical`]: closed-form α-β cost per collective
//!   (`crate::collective::analytical`), with no contention between
//!   transfers beyond what the collective's own structure forces (the
//!   incast on a parameter server's NIC, GPUs of a node sharing a NIC in a
//!   hierarchical AllReduce). Fast enough for large sweeps.
//! * [`NetModel::Flow`]: every transfer is a flow over the directed links of
//!   its path ([`flow::FlowNet`]); concurrent flows share each link max-min
//!   fairly and rates are recomputed whenever a flow starts or ends. PS
//!   hot spots, shared NICs and oversubscription show here.

pub mod flow;

/// Which network model a scenario uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetModel {
    /// Closed-form α-β.
    Analytical,
    /// Max-min fair flows.
    #[default]
    Flow,
}

impl NetModel {
    /// The name used in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            NetModel::Analytical => "analytical",
            NetModel::Flow => "flow",
        }
    }
}

impl crate::names::Named for NetModel {
    const ALL: &'static [NetModel] = &[NetModel::Flow, NetModel::Analytical];
    const WHAT: &'static str = "network model";
    fn name(self) -> &'static str {
        NetModel::name(self)
    }
}
