//! Equal-cost multipath: a flow's packets all take the candidate picked by a hash of the
//! flow's 5-tuple mixed with a per-switch salt. The salt (seeded from the run seed and the
//! switch name) keeps successive tiers from making correlated choices (hash polarization)
//! and makes a different seed give a different, equally valid, set of paths.
//!
//! That is the ideal. Real ASICs hash with a CRC or an XOR fold of the header fields and
//! take the result modulo the number of next hops; every switch of a tier (often of every
//! tier) runs the same function with the same seed, and RoCE NICs number their UDP source
//! ports consecutively per queue pair. Then a flow's choice at the edge decides its choice
//! at the aggregation layer too (hash polarization, which document 000 blames for RoCE's
//! poor collective completion times). [`EcmpHashCfg`] (`[fabric.load_balance.hash]`) models
//! that: the function, whether the seed is per switch or shared, and how NICs choose source
//! ports. The 5-tuple of a flow is fixed, so its hash is computed once when the run is
//! built; per packet a switch only mixes in its seed ([`pick`], or [`pick_modulo`] for the
//! ASIC functions).

use super::{LbAlgorithm, LbEntry, LbState, LoadBalancer};
use crate::base::param::{Described, Param, ParamError};
use serde::{Deserialize, Serialize};

/// `ecmp`.
pub static ENTRY: LbEntry = LbEntry {
    name: "ecmp",
    about: "per flow: a hash of the 5-tuple with a per-switch salt",
    algorithm: LbAlgorithm::Ecmp,
};

/// The 32-bit finalizer of MurmurHash3: cheap, and every input bit flips about half of
/// the output bits.
#[inline]
pub fn mix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Hash of a RoCEv2 5-tuple (source and destination address, UDP source port, UDP
/// destination port 4791, protocol 17).
pub fn five_tuple_hash(src: u32, dst: u32, sport: u16) -> u32 {
    let mut h = 0x9747_b28cu32;
    for w in [src, dst, ((sport as u32) << 16) | 4791, 17] {
        h = mix32(h ^ w).wrapping_add(0x6b43_a9b5);
    }
    h
}

/// Picks one of `n` candidates for a flow hash at a switch with `salt`.
#[inline]
pub fn pick(hash: u32, salt: u32, n: usize) -> usize {
    // Multiply-shift maps the 32-bit hash onto 0..n without the bias of a modulo.
    ((mix32(hash ^ salt) as u64 * n as u64) >> 32) as usize
}

/// Picks one of `n` candidates the way ASICs do with a CRC or XOR-fold hash: the hash
/// XOR the switch's seed, modulo `n`. A CRC is linear, so seeding its register XORs a
/// constant into the result; the salt stands for that constant (cut to the function's
/// width when the run is built).
#[inline]
pub fn pick_modulo(hash: u32, salt: u32, n: usize) -> usize {
    ((hash ^ salt) % n as u32) as usize
}

/// UDP destination port of RoCEv2 (IANA).
pub const ROCE_PORT: u16 = 4791;
/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// First UDP source port a NIC gives its queue pairs under `source_port = "sequential"`
/// (the start of the IANA dynamic range; ports wrap within 49152..65535).
pub const SPORT_BASE: u16 = 49152;

/// The IPv4 address of host `h`: 10.0.0.0 + h (hosts are numbered from 0, so host 0 is
/// 10.0.0.0; only the bits matter to a hash).
pub fn host_ip(h: u32) -> u32 {
    0x0a00_0000 | (h & 0x00ff_ffff)
}

/// The 13 bytes an ASIC hashes, in network order: source IP, destination IP, UDP source
/// port, UDP destination port 4791, protocol 17.
pub fn tuple_bytes(src: u32, dst: u32, sport: u16) -> [u8; 13] {
    let mut b = [0u8; 13];
    b[0..4].copy_from_slice(&host_ip(src).to_be_bytes());
    b[4..8].copy_from_slice(&host_ip(dst).to_be_bytes());
    b[8..10].copy_from_slice(&sport.to_be_bytes());
    b[10..12].copy_from_slice(&ROCE_PORT.to_be_bytes());
    b[12] = PROTO_UDP;
    b
}

/// CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, not reflected, no final
/// XOR (check value 0x29B1 for "123456789").
pub fn crc16_ccitt(data: &[u8]) -> u16 {
    let mut crc = 0xffffu16;
    for &b in data {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// CRC-32/IEEE 802.3 (reflected polynomial 0xEDB88320, initial value and final XOR
/// 0xFFFFFFFF; check value 0xCBF43926 for "123456789").
pub fn crc32_ieee(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The 5-tuple's 32-bit words (source IP, destination IP, source and destination port,
/// protocol) XORed together and folded to 16 bits.
pub fn xor_fold16(src: u32, dst: u32, sport: u16) -> u16 {
    let x = host_ip(src)
        ^ host_ip(dst)
        ^ (((sport as u32) << 16) | ROCE_PORT as u32)
        ^ PROTO_UDP as u32;
    (x ^ (x >> 16)) as u16
}

/// The hash function of the switches (`fabric.load_balance.hash.function`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HashFunction {
    /// [`five_tuple_hash`] and [`pick`]: ideal entropy.
    #[default]
    Murmur,
    /// [`crc16_ccitt`] of [`tuple_bytes`], modulo the next hops.
    Crc16,
    /// [`crc32_ieee`] of [`tuple_bytes`], modulo the next hops.
    Crc32,
    /// [`xor_fold16`], modulo the next hops.
    XorFold,
}

impl HashFunction {
    /// The flow hash of a 5-tuple (hosts `src`, `dst`, UDP source port `sport`).
    pub fn flow_hash(self, src: u32, dst: u32, sport: u16) -> u32 {
        match self {
            HashFunction::Murmur => five_tuple_hash(src, dst, sport),
            HashFunction::Crc16 => crc16_ccitt(&tuple_bytes(src, dst, sport)) as u32,
            HashFunction::Crc32 => crc32_ieee(&tuple_bytes(src, dst, sport)),
            HashFunction::XorFold => xor_fold16(src, dst, sport) as u32,
        }
    }

    /// Whether switches take the hash modulo the next hops ([`pick_modulo`]) rather than
    /// mixing it ([`pick`]).
    pub fn modulo(self) -> bool {
        self != HashFunction::Murmur
    }

    /// The bits of the hash (a seed is cut to them).
    pub fn mask(self) -> u32 {
        match self {
            HashFunction::Murmur | HashFunction::Crc32 => u32::MAX,
            HashFunction::Crc16 | HashFunction::XorFold => 0xffff,
        }
    }
}

/// Where a switch's hash seed comes from (`fabric.load_balance.hash.seed`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HashSeed {
    /// From the run seed and the switch's name: tiers choose independently.
    #[default]
    PerSwitch,
    /// From the run seed alone, the same at every switch: a flow takes the same next-hop
    /// index at every tier with as many next hops (polarization).
    Shared,
}

impl HashSeed {
    /// The name a switch's salt is seeded from ([`crate::rng::component_seed`]).
    pub fn salt_name(self, switch: &str) -> String {
        match self {
            HashSeed::PerSwitch => format!("{switch}/ecmp"),
            HashSeed::Shared => String::from("ecmp"),
        }
    }
}

/// How NICs choose a queue pair's UDP source port (`fabric.load_balance.hash.source_port`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourcePort {
    /// Drawn from the run seed and the flow (or connection): ideal entropy.
    #[default]
    Random,
    /// [`SPORT_BASE`] + the queue pair's index at its NIC (its flows numbered in order,
    /// the flows of one connection sharing one), wrapping within 49152..65535.
    Sequential,
}

/// How a switch chooses among parallel links (a LAG's members) to one next hop
/// (`fabric.load_balance.hash.lag`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LagChoice {
    /// Every member link is an equal-cost next hop of its own: one choice among all of
    /// them (routing on each link, no LAG).
    #[default]
    Flat,
    /// A LAG: the next-hop switch by the flow hash, then the member by the same hash with
    /// an independent seed, so every member of every next hop is used.
    Independent,
    /// A LAG whose member choice reuses the next hop's hash and seed, as ASICs that take
    /// both from the same hash bits do: with as many members as next hops, a flow that
    /// picks next hop i always takes member i, and most members carry nothing.
    Correlated,
}

/// Picks one of `n` candidates grouped as `n / members` next hops of `members` parallel
/// links each (consecutive candidates of a group share the next hop): the group by the
/// hash and `salt` (ASIC `modulo` pick or the mixing [`pick`]), then the member. With
/// `member_salt == salt` the member comes from the same hash bits (correlated); otherwise
/// from an independent mix of the hash with `member_salt`: XORing another seed into a
/// CRC before a modulo would only permute the members (a CRC is linear), so an
/// independent member choice stands for the different hash or bit selection switches are
/// configured with for LAGs.
#[inline]
pub fn pick_lag(
    modulo: bool,
    hash: u32,
    salt: u32,
    member_salt: u32,
    n: usize,
    members: usize,
) -> usize {
    let one = |n: usize| {
        if modulo {
            pick_modulo(hash, salt, n)
        } else {
            pick(hash, salt, n)
        }
    };
    let member = if member_salt == salt {
        one(members)
    } else {
        pick(hash, member_salt, members)
    };
    one(n / members) * members + member
}

/// Members per next hop of switch `sw` when its candidate lists toward every destination in
/// `dsts` (one host per edge switch stands for the others) are runs of the same length of
/// consecutive ports to one peer, `peer_of(port)`, more than one each: then a flow picks a
/// next hop, then a member. 1 otherwise (no parallel links, or groups that differ).
pub fn lag_members(
    routing: &super::RoutingTable,
    sw: u32,
    dsts: &[u32],
    peer_of: impl Fn(u32) -> usize,
) -> u32 {
    let mut members = 0usize;
    for &dst in dsts {
        let c = routing.candidates(sw, dst);
        if c.len() <= 1 {
            continue;
        }
        let run = c
            .iter()
            .take_while(|&&p| peer_of(p) == peer_of(c[0]))
            .count();
        let grouped = c.len().is_multiple_of(run)
            && c.chunks(run)
                .all(|g| g.iter().all(|&p| peer_of(p) == peer_of(g[0])));
        if run == 1 || !grouped || (members != 0 && members != run) {
            return 1;
        }
        members = run;
    }
    members.max(1) as u32
}

/// The ECMP hash model (`[fabric.load_balance.hash]`); the defaults are the ideal one.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EcmpHashCfg {
    /// Hash function.
    #[serde(default)]
    pub function: HashFunction,
    /// Per-switch or shared seed.
    #[serde(default)]
    pub seed: HashSeed,
    /// UDP source ports of queue pairs.
    #[serde(default)]
    pub source_port: SourcePort,
    /// Member choice among parallel links to one next hop.
    #[serde(default)]
    pub lag: LagChoice,
}

impl EcmpHashCfg {
    /// A hash function other than `murmur` is how `ecmp` chooses; other balancers would
    /// ignore it, so it is refused with them.
    pub fn validate(&self, algorithm: LbAlgorithm) -> Result<(), ParamError> {
        if self.function.modulo() && algorithm != LbAlgorithm::Ecmp {
            return Err(ParamError::new(
                "function",
                format!("applies to algorithm = \"ecmp\" only, not \"{algorithm}\""),
            ));
        }
        if self.lag != LagChoice::Flat && algorithm != LbAlgorithm::Ecmp {
            return Err(ParamError::new(
                "lag",
                format!("applies to algorithm = \"ecmp\" only, not \"{algorithm}\""),
            ));
        }
        Ok(())
    }

    /// The balancer switches run: `ecmp` with an ASIC function takes the hash modulo the
    /// next hops ([`LbAlgorithm::EcmpModulo`]); the default keeps [`LbAlgorithm::Ecmp`].
    pub fn resolve(&self, algorithm: LbAlgorithm) -> LbAlgorithm {
        if algorithm == LbAlgorithm::Ecmp && self.function.modulo() {
            LbAlgorithm::EcmpModulo
        } else {
            algorithm
        }
    }
}

impl Described for EcmpHashCfg {
    const ABOUT: &'static str = "the ECMP hash model: function, seed and UDP source ports";
    fn params() -> Vec<Param> {
        let d = EcmpHashCfg::default();
        vec![
            Param::choice(
                "function",
                &d.function,
                "crc16 is CRC-16/CCITT-FALSE, crc32 CRC-32/IEEE; all but murmur pick hash mod n",
            ),
            Param::choice("seed", &d.seed, "shared: the same at every switch"),
            Param::choice(
                "source_port",
                &d.source_port,
                "sequential: 49152 + queue pair index per NIC",
            ),
            Param::choice(
                "lag",
                &d.lag,
                "parallel links to one next hop: flat (each a next hop), independent or \
                 correlated member choice",
            ),
        ]
    }
}

/// The ECMP balancer.
pub struct Ecmp;

impl LoadBalancer for Ecmp {
    #[inline(always)]
    fn pick(&self, hash: u32, n: usize, sw: LbState<'_>) -> usize {
        pick(hash, sw.salt, n)
    }
}

/// ECMP with an ASIC hash function: hash XOR seed, modulo the next hops.
pub struct EcmpModulo;

impl LoadBalancer for EcmpModulo {
    #[inline(always)]
    fn pick(&self, hash: u32, n: usize, sw: LbState<'_>) -> usize {
        pick_modulo(hash, sw.salt, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_flows_evenly() {
        let mut counts = [0u32; 4];
        for f in 0..40_000u32 {
            counts[pick(five_tuple_hash(f, f + 1, (f % 65536) as u16), 12345, 4)] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn crc_check_values() {
        assert_eq!(crc16_ccitt(b"123456789"), 0x29b1);
        assert_eq!(crc32_ieee(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32_ieee(b""), 0);
    }

    #[test]
    fn tuple_bytes_and_fold() {
        let b = tuple_bytes(1, 258, 0xc001);
        assert_eq!(b, [10, 0, 0, 1, 10, 0, 1, 2, 0xc0, 0x01, 0x12, 0xb7, 17]);
        // 0x0a000001 ^ 0x0a000102 ^ 0xc00112b7 ^ 0x11 = 0xc00113a5, folded 0xd3a4.
        assert_eq!(xor_fold16(1, 258, 0xc001), 0xd3a4);
        assert_eq!(
            HashFunction::Crc16.flow_hash(1, 258, 0xc001),
            crc16_ccitt(&b) as u32
        );
        assert_eq!(
            HashFunction::Murmur.flow_hash(1, 2, 3),
            five_tuple_hash(1, 2, 3)
        );
    }

    #[test]
    fn lag_member_choice_is_independent_or_correlated() {
        // 4 next hops of 4 members: 16 links.
        let used = |member_salt: Option<u32>, modulo: bool| {
            let mut links = [0u32; 16];
            for f in 0..4000u32 {
                let h = five_tuple_hash(f, f + 7, (f % 65536) as u16);
                let k = pick_lag(modulo, h, 99, member_salt.unwrap_or(99), 16, 4);
                // The group is the flat-free choice among the 4 next hops.
                let g = if modulo {
                    pick_modulo(h, 99, 4)
                } else {
                    pick(h, 99, 4)
                };
                assert_eq!(k / 4, g);
                links[k] += 1;
            }
            links.iter().filter(|&&c| c > 0).count()
        };
        for modulo in [false, true] {
            assert_eq!(used(Some(12345), modulo), 16, "independent: every member");
            // Correlated: next hop i takes member i, 4 of 16 links.
            assert_eq!(used(None, modulo), 4);
        }
        let mut h = EcmpHashCfg::default();
        assert!(h.validate(LbAlgorithm::Ecmp).is_ok());
        h.lag = LagChoice::Correlated;
        assert_eq!(h.validate(LbAlgorithm::SprayRr).unwrap_err().field, "lag");
        let cfg: EcmpHashCfg = toml::from_str("lag = \"correlated\"").unwrap();
        assert_eq!(cfg.lag, LagChoice::Correlated);
        assert!(toml::from_str::<EcmpHashCfg>("lag = \"diagonal\"").is_err());
    }

    #[test]
    fn modulo_pick_is_hash_mod_n() {
        assert_eq!(pick_modulo(13, 0, 4), 1);
        assert_eq!(pick_modulo(13, 2, 4), 3);
        assert_eq!(pick_modulo(0xffff, 0, 3), 0);
    }

    #[test]
    fn resolve_and_validate() {
        let mut h = EcmpHashCfg::default();
        assert_eq!(h.resolve(LbAlgorithm::Ecmp), LbAlgorithm::Ecmp);
        h.function = HashFunction::Crc32;
        assert_eq!(h.resolve(LbAlgorithm::Ecmp), LbAlgorithm::EcmpModulo);
        assert!(h.validate(LbAlgorithm::Ecmp).is_ok());
        assert_eq!(
            h.validate(LbAlgorithm::SprayRr).unwrap_err().field,
            "function"
        );
    }

    #[test]
    fn listing_names_every_field() {
        crate::base::param::assert_describes_fields::<EcmpHashCfg>();
    }

    #[test]
    fn salt_changes_choices() {
        let diff = (0..1000u32)
            .filter(|&f| {
                pick(f.wrapping_mul(2654435761), 1, 8) != pick(f.wrapping_mul(2654435761), 2, 8)
            })
            .count();
        assert!(diff > 700, "{diff}");
    }
}
