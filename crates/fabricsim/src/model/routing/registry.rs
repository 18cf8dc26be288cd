//! Every load-balancing algorithm, each named once.
//!
//! A balancer's file defines a `pub static` [`LbEntry`]: its name in
//! `fabric.load_balance.algorithm`, one line on what it does, and the [`LbAlgorithm`]
//! variant the switches dispatch on (the choice is made per packet, so it is an enum
//! matched in [`LbAlgorithm::pick`], not a call through this list). The names
//! scenarios accept, the names an unknown one's error lists and `fabricsim list` come
//! from [`BALANCERS`].

use crate::base::param::{Described, Param};
use serde::Deserialize;
use std::fmt;
use std::sync::OnceLock;

/// Every load balancer, in the order `fabricsim list` and error messages give them.
pub static BALANCERS: &[&LbEntry] = &[
    &super::ecmp::ENTRY,
    &super::spray::RANDOM_ENTRY,
    &super::spray::RR_ENTRY,
    &crate::model::routing::pktc::LB_ENTRY,
    &super::adaptive::FIRST_AVAILABLE_ENTRY,
    &super::adaptive::ADAPTIVE_ENTRY,
    &super::source::ENTRY,
];

/// One load balancer.
#[derive(Debug)]
pub struct LbEntry {
    /// The name in scenario files.
    pub name: &'static str,
    /// One line on what it does.
    pub about: &'static str,
    /// What the switches dispatch on.
    pub algorithm: LbAlgorithm,
}

/// How a switch chooses among equal-cost next hops (the hot-path form of a
/// [`BALANCERS`] entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbAlgorithm {
    /// Per-flow 5-tuple hash with a per-switch salt.
    Ecmp,
    /// `ecmp` with an ASIC hash function (`fabric.load_balance.hash.function` other than
    /// `murmur`): the flow hash XOR the switch's seed, modulo the next hops. Resolved when
    /// the run is built ([`super::ecmp::EcmpHashCfg::resolve`]); not a name of its own.
    EcmpModulo,
    /// Per-packet uniformly random next hop.
    SprayRandom,
    /// Per-packet round robin among next hops.
    SprayRr,
    /// GSE packet containers: at the source edge switch (GSP) all packets of a container
    /// take one uplink, successive containers the least-loaded one; the destination GSP
    /// restores order.
    Pktc,
    /// Table routing: the first next hop in table order whose link is up.
    FirstAvailable,
    /// Table routing: the next hop with most room downstream (credits, or queue).
    Adaptive,
    /// Source routing: the entry the sender named, the same at every switch.
    Source,
}

impl LbAlgorithm {
    /// Whether the choice reads the ports' state ([`super::adaptive`]) rather than the
    /// packet alone.
    #[inline(always)]
    pub fn by_port_state(self) -> bool {
        matches!(self, LbAlgorithm::FirstAvailable | LbAlgorithm::Adaptive)
    }

    /// Whether the choice is ECMP's: a hash of the flow's 5-tuple (mixed or modulo).
    #[inline(always)]
    pub fn hashes_flows(self) -> bool {
        matches!(self, LbAlgorithm::Ecmp | LbAlgorithm::EcmpModulo)
    }

    /// Whether one flow's packets may take different next hops (spraying, PKTC's
    /// containers, adaptive choice per packet) rather than all one path (the flow's
    /// hash, the source's choice, the first entry up). A flow that spreads is bounded by
    /// the aggregate capacity of its paths ([`crate::model::transport::multipath`]).
    pub fn spreads_flow(self) -> bool {
        matches!(
            self,
            LbAlgorithm::SprayRandom
                | LbAlgorithm::SprayRr
                | LbAlgorithm::Pktc
                | LbAlgorithm::Adaptive
        )
    }
}

/// What a load balancer may read and update at one switch: the flow hash's per-switch
/// salt, the switch's seeded random stream and its round-robin cursor.
pub struct LbState<'a> {
    /// ECMP salt of the switch.
    pub salt: u32,
    /// The switch's random stream.
    pub rng: &'a mut rand_chacha::ChaCha8Rng,
    /// The switch's round-robin cursor.
    pub rr: &'a mut u32,
}

/// A load balancer: how a switch chooses one of `n > 1` equal-cost next hops for a
/// packet. Each algorithm's file implements it on a unit type; [`LbAlgorithm::pick`]
/// dispatches to them statically (once per packet and hop, so no call through a vtable).
pub trait LoadBalancer {
    /// The next hop, `0..n` (`n > 1`), for a packet with flow hash `hash` at a switch
    /// with state `sw`.
    fn pick(&self, hash: u32, n: usize, sw: LbState<'_>) -> usize;
}

impl LbAlgorithm {
    /// The next hop, `0..n` (`n > 1`), for a packet with flow hash `hash` at a switch
    /// with state `sw`. (PKTC chooses containers' uplinks at the GSPs; between switches
    /// a container's packets follow the hash of the container.)
    #[inline(always)]
    pub fn pick(self, hash: u32, n: usize, sw: LbState<'_>) -> usize {
        match self {
            LbAlgorithm::Ecmp => super::ecmp::Ecmp.pick(hash, n, sw),
            LbAlgorithm::EcmpModulo => super::ecmp::EcmpModulo.pick(hash, n, sw),
            LbAlgorithm::Pktc => crate::model::routing::pktc::Pktc.pick(hash, n, sw),
            LbAlgorithm::SprayRandom => super::spray::SprayRandom.pick(hash, n, sw),
            LbAlgorithm::SprayRr => super::spray::SprayRr.pick(hash, n, sw),
            LbAlgorithm::Source => super::source::Source.pick(hash, n, sw),
            // Chosen by the switch from its ports' state (`Fabric::route`); as a pure
            // function of the packet, the first entry.
            LbAlgorithm::FirstAvailable | LbAlgorithm::Adaptive => 0,
        }
    }

    /// Its registry entry.
    pub fn entry(self) -> &'static LbEntry {
        let named = match self {
            LbAlgorithm::EcmpModulo => LbAlgorithm::Ecmp,
            a => a,
        };
        BALANCERS
            .iter()
            .find(|e| e.algorithm == named)
            .expect("every load balancer is registered")
    }
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        self.entry().name
    }
}

impl fmt::Display for LbAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The names of [`BALANCERS`], in order.
pub fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| BALANCERS.iter().map(|e| e.name).collect())
}

impl<'de> Deserialize<'de> for LbAlgorithm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = crate::base::param::de_registry_name(d, "LbAlgorithm", names())?;
        Ok(BALANCERS
            .iter()
            .find(|e| e.name == name)
            .expect("the name comes from the registry")
            .algorithm)
    }
}

/// Load balancing among equal-cost next hops (`[fabric.load_balance]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadBalanceCfg {
    /// A name of [`BALANCERS`].
    #[serde(default = "d_lb")]
    pub algorithm: LbAlgorithm,
    /// The ECMP hash model (`[fabric.load_balance.hash]`).
    #[serde(default)]
    pub hash: super::ecmp::EcmpHashCfg,
}

impl LoadBalanceCfg {
    /// Checks the hash model against the algorithm; fields relative to the section.
    pub fn validate(&self) -> Result<(), crate::base::param::ParamError> {
        self.hash
            .validate(self.algorithm)
            .map_err(|e| e.within("hash"))
    }

    /// The balancer the switches run (see [`super::ecmp::EcmpHashCfg::resolve`]).
    pub fn resolved(&self) -> LbAlgorithm {
        self.hash.resolve(self.algorithm)
    }
}

fn d_lb() -> LbAlgorithm {
    LbAlgorithm::Ecmp
}

impl Default for LoadBalanceCfg {
    fn default() -> Self {
        LoadBalanceCfg {
            algorithm: d_lb(),
            hash: Default::default(),
        }
    }
}

impl Described for LoadBalanceCfg {
    const ABOUT: &'static str = "load balancing among equal-cost next hops";
    fn params() -> Vec<Param> {
        let names: Vec<String> = names().iter().map(|n| format!("\"{n}\"")).collect();
        vec![
            Param::word("algorithm", d_lb().name(), names.join(" | ")),
            Param::section("hash", "[fabric.load_balance.hash]"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_distinct_and_parse() {
        for (i, e) in BALANCERS.iter().enumerate() {
            assert!(BALANCERS[..i]
                .iter()
                .all(|o| o.name != e.name && o.algorithm != e.algorithm));
            let v = toml::Value::String(e.name.into());
            assert_eq!(v.try_into::<LbAlgorithm>().unwrap(), e.algorithm);
            assert_eq!(e.algorithm.name(), e.name);
        }
    }

    #[test]
    fn listing_names_every_field() {
        crate::base::param::assert_describes_fields::<LoadBalanceCfg>();
    }
}
