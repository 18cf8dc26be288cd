//! Choosing the algorithm and protocol a collective runs, as NCCL's tuner does.
//!
//! NCCL picks, per call, the (algorithm, protocol) pair its cost model predicts fastest
//! for the message size, the rank count and the topology (arXiv 2507.04786, sections
//! III-V; NCCL's documentation of `NCCL_ALGO` and `NCCL_PROTO`, which override the
//! choice). We do not reimplement its cost model; `algorithm = "auto"` and `protocol =
//! "auto"` follow a table of the outcome the cited descriptions give (LL for small
//! messages, LL128 for medium ones, Simple for bandwidth; trees where a ring's latency
//! grows with the ranks; NVLS where an NVSwitch can reduce). The thresholds are ours
//! \[recon\]; naming an algorithm or protocol overrides the table, per job.
//!
//! | collective | condition (S: message bytes per rank, n ranks, m servers) | algorithm |
//! |------------|-----------------------------------------------------------|-----------|
//! | AllReduce  | every rank's server has an NVSwitch, >= 2 GPUs each, S >= [`NVLS_MIN`] | `nvls` |
//! | AllReduce  | otherwise, m >= 2 and S < n x [`TREE_PER_RANK`]             | `tree` |
//! | AllReduce  | otherwise                                                  | `ring` |
//! | AllGather, ReduceScatter | one rank per server, n >= 4, S < n x [`TREE_PER_RANK`] | `pat` |
//! | AllGather, ReduceScatter | otherwise                                  | `ring` |
//! | Broadcast  | always                                                     | `ring` |
//!
//! | algorithm | S <= [`LL_MAX`] | S <= [`LL128_MAX`] | larger |
//! |-----------|-----------------|--------------------|--------|
//! | `ring`, `tree` and the other named algorithms | `ll` | `ll128` | `simple` |
//! | `nvls` (NVLS runs Simple only, arXiv 2507.04786, section V) | `simple` | `simple` | `simple` |

use super::protocol::{Protocol, ProtocolCfg};
use super::CollectiveKind;
use crate::base::param::ParamError;
use crate::model::topology::TopoGraph;
use serde::Deserialize;

/// Least AllReduce message for which `auto` picks NVLS \[recon\].
pub const NVLS_MIN: u64 = 1 << 20;
/// Across servers, `auto` picks a tree below this many bytes per rank \[recon\]: a ring's
/// `2(n-1)` steps pay their latency `n` times where a tree pays it `log n` times.
pub const TREE_PER_RANK: u64 = 64 << 10;
/// Largest message for which `auto` picks LL \[recon\].
pub const LL_MAX: u64 = 64 << 10;
/// Largest message for which `auto` picks LL128 \[recon\].
pub const LL128_MAX: u64 = 16 << 20;

/// The `algorithm` setting of a collective workload.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AlgorithmCfg {
    /// Chosen by the table.
    Auto,
    /// A ring.
    Ring,
    /// NCCL's double binary tree.
    Tree,
    /// Reduction in the NVSwitch.
    Nvls,
    /// NCCL's PAT (a dimension-reversed Bruck, one rank per server).
    Pat,
}

impl AlgorithmCfg {
    /// Every value, in declaration order.
    pub const ALL: [AlgorithmCfg; 5] = [
        AlgorithmCfg::Auto,
        AlgorithmCfg::Ring,
        AlgorithmCfg::Tree,
        AlgorithmCfg::Nvls,
        AlgorithmCfg::Pat,
    ];

    /// The name in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmCfg::Auto => "auto",
            AlgorithmCfg::Ring => "ring",
            AlgorithmCfg::Tree => "tree",
            AlgorithmCfg::Nvls => "nvls",
            AlgorithmCfg::Pat => "pat",
        }
    }
}

/// What the table looks at besides the message size.
#[derive(Clone, Copy, Debug)]
pub struct JobShape {
    /// Ranks.
    pub ranks: u64,
    /// Servers the ranks are in.
    pub servers: u64,
    /// Whether every rank's server joins its GPUs through an NVSwitch, with at least two
    /// ranks in each.
    pub nvswitch: bool,
}

/// The algorithm an operation (`allreduce`, ...) runs: `algorithm` if named (checked
/// against what the operation supports), else the table's. An algorithm-named collective
/// takes no `algorithm`. Errors name `algorithm`.
pub fn algorithm(
    op: CollectiveKind,
    algo: Option<AlgorithmCfg>,
    shape: JobShape,
    size: u64,
) -> Result<CollectiveKind, ParamError> {
    use CollectiveKind as K;
    let supported: &[AlgorithmCfg] = match op {
        K::Allreduce => &[AlgorithmCfg::Ring, AlgorithmCfg::Tree, AlgorithmCfg::Nvls],
        K::Allgather | K::ReduceScatter => &[AlgorithmCfg::Ring, AlgorithmCfg::Pat],
        K::Broadcast => &[AlgorithmCfg::Ring],
        named => {
            return match algo {
                None => Ok(named),
                Some(a) => Err(ParamError::new(
                    "algorithm",
                    format!(
                        "collective = \"{}\" names its algorithm already; to choose \"{}\", name the operation: collective = \"allreduce\" | \"allgather\" | \"reduce_scatter\" | \"broadcast\"",
                        named.name(),
                        a.name()
                    ),
                )),
            };
        }
    };
    let pick = match algo.unwrap_or(AlgorithmCfg::Auto) {
        AlgorithmCfg::Auto => auto_algorithm(op, shape, size),
        a if supported.contains(&a) => a,
        a => {
            let names: Vec<String> = std::iter::once(AlgorithmCfg::Auto)
                .chain(supported.iter().copied())
                .map(|s| format!("\"{}\"", s.name()))
                .collect();
            return Err(ParamError::new(
                "algorithm",
                format!(
                    "{} runs with {}, not \"{}\"",
                    op.name(),
                    names.join(" | "),
                    a.name()
                ),
            ));
        }
    };
    if pick == AlgorithmCfg::Nvls && !shape.nvswitch {
        return Err(ParamError::new(
            "algorithm",
            "nvls reduces in an NVSwitch: every rank's server needs one (topology kind \"rail_optimized\" with scale_up = \"nvlink\") and at least two ranks in it",
        ));
    }
    if pick == AlgorithmCfg::Pat && shape.servers != shape.ranks {
        return Err(ParamError::new(
            "algorithm",
            format!(
                "pat runs with one rank per server, as NCCL's: {} ranks in {} servers",
                shape.ranks, shape.servers
            ),
        ));
    }
    Ok(runs(op, pick))
}

/// The collective that operation `op` runs with algorithm `pick` (not `auto`).
fn runs(op: CollectiveKind, pick: AlgorithmCfg) -> CollectiveKind {
    use CollectiveKind as K;
    match (op, pick) {
        (K::Allreduce, AlgorithmCfg::Tree) => K::TreeAllreduce,
        (K::Allreduce, AlgorithmCfg::Nvls) => K::NvlsAllreduce,
        (K::Allreduce, _) => K::RingAllreduce,
        (K::Allgather, AlgorithmCfg::Pat) => K::PatAllgather,
        (K::ReduceScatter, AlgorithmCfg::Pat) => K::PatReduceScatter,
        (K::Allgather, _) => K::RingAllgather,
        (K::ReduceScatter, _) => K::RingReduceScatter,
        _ => K::RingBroadcast,
    }
}

/// What a job's size is counted as before the topology is known: with a named
/// algorithm, the collective it runs; otherwise (`auto`, or a collective named by its
/// algorithm) the collective as written, whose counts bound every algorithm `auto` may
/// pick.
pub fn counted_as(op: CollectiveKind, algorithm: Option<AlgorithmCfg>) -> CollectiveKind {
    use CollectiveKind as K;
    match (op, algorithm) {
        (K::Allreduce | K::Allgather | K::ReduceScatter | K::Broadcast, Some(a))
            if a != AlgorithmCfg::Auto =>
        {
            runs(op, a)
        }
        _ => op,
    }
}

fn auto_algorithm(op: CollectiveKind, shape: JobShape, size: u64) -> AlgorithmCfg {
    let small = size < shape.ranks.saturating_mul(TREE_PER_RANK);
    let gather = matches!(
        op,
        CollectiveKind::Allgather | CollectiveKind::ReduceScatter
    );
    if gather && shape.servers == shape.ranks && shape.ranks >= 4 && small {
        AlgorithmCfg::Pat
    } else if op != CollectiveKind::Allreduce {
        AlgorithmCfg::Ring
    } else if shape.nvswitch && size >= NVLS_MIN {
        AlgorithmCfg::Nvls
    } else if shape.servers >= 2 && size < shape.ranks.saturating_mul(TREE_PER_RANK) {
        AlgorithmCfg::Tree
    } else {
        AlgorithmCfg::Ring
    }
}

/// The protocol `kind` runs: the one named, the table's for `auto`, and for an unset
/// `protocol` none for the algorithm-named collectives (bare transfers) and the table's
/// for the operations.
pub fn protocol(
    operation: bool,
    cfg: Option<ProtocolCfg>,
    kind: CollectiveKind,
    size: u64,
) -> Result<Protocol, ParamError> {
    let fixed = match cfg {
        Some(p) => p.fixed(),
        None if operation => None,
        None => Some(Protocol::Bare),
    };
    let nvls = kind == CollectiveKind::NvlsAllreduce;
    match fixed {
        Some(p @ (Protocol::Ll | Protocol::Ll128)) if nvls => Err(ParamError::new(
            "protocol",
            format!(
                "nvls runs the Simple protocol only, not \"{}\" (\"simple\" | \"auto\" | \"none\")",
                p.name()
            ),
        )),
        Some(p) => Ok(p),
        None if nvls || size > LL128_MAX => Ok(Protocol::Simple),
        None if size > LL_MAX => Ok(Protocol::Ll128),
        None => Ok(Protocol::Ll),
    }
}

/// The NVSwitch node a host reaches through its crossbar (a switch named
/// `...-nvswitch` two links away, as `rail_optimized` builds its scale-up domain).
fn nvswitch_of(g: &TopoGraph, adj: &[Vec<usize>], host: u32) -> Option<usize> {
    let node = *g.hosts.get(host as usize)?;
    adj[node].iter().find_map(|&x| {
        adj[x]
            .iter()
            .copied()
            .find(|&s| g.nodes[s].is_switch && g.nodes[s].name.ends_with("-nvswitch"))
    })
}

/// Whether every server of `servers` (indices into `ranks`) has its ranks behind one
/// NVSwitch, with at least two ranks in each.
pub fn nvswitch_domains(g: &TopoGraph, ranks: &[u32], servers: &[Vec<usize>]) -> bool {
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
    for l in &g.links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    servers.iter().all(|srv| {
        let first = nvswitch_of(g, &adj, ranks[srv[0]]);
        srv.len() >= 2
            && first.is_some()
            && srv.iter().all(|&r| nvswitch_of(g, &adj, ranks[r]) == first)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use CollectiveKind as K;

    const ONE_SERVER_NVS: JobShape = JobShape {
        ranks: 8,
        servers: 1,
        nvswitch: true,
    };
    const CLUSTER: JobShape = JobShape {
        ranks: 128,
        servers: 16,
        nvswitch: false,
    };

    #[test]
    fn auto_follows_the_table() {
        let a = |op, shape, s| algorithm(op, None, shape, s).unwrap();
        assert_eq!(a(K::Allreduce, ONE_SERVER_NVS, NVLS_MIN), K::NvlsAllreduce);
        assert_eq!(
            a(K::Allreduce, ONE_SERVER_NVS, NVLS_MIN - 1),
            K::RingAllreduce
        );
        assert_eq!(
            a(K::Allreduce, CLUSTER, 128 * TREE_PER_RANK - 1),
            K::TreeAllreduce
        );
        assert_eq!(
            a(K::Allreduce, CLUSTER, 128 * TREE_PER_RANK),
            K::RingAllreduce
        );
        assert_eq!(a(K::Allgather, CLUSTER, 8), K::RingAllgather);
        assert_eq!(a(K::ReduceScatter, CLUSTER, 8), K::RingReduceScatter);
        assert_eq!(a(K::Broadcast, ONE_SERVER_NVS, 8 << 30), K::RingBroadcast);
        let one_each = JobShape {
            ranks: 16,
            servers: 16,
            nvswitch: false,
        };
        assert_eq!(
            a(K::Allgather, one_each, 16 * TREE_PER_RANK - 1),
            K::PatAllgather
        );
        assert_eq!(a(K::ReduceScatter, one_each, 8), K::PatReduceScatter);
        assert_eq!(
            a(K::Allgather, one_each, 16 * TREE_PER_RANK),
            K::RingAllgather
        );
        let p = |k, s| protocol(true, None, k, s).unwrap();
        assert_eq!(p(K::RingAllreduce, LL_MAX), Protocol::Ll);
        assert_eq!(p(K::RingAllreduce, LL_MAX + 1), Protocol::Ll128);
        assert_eq!(p(K::TreeAllreduce, LL128_MAX), Protocol::Ll128);
        assert_eq!(p(K::RingAllreduce, LL128_MAX + 1), Protocol::Simple);
        assert_eq!(p(K::NvlsAllreduce, 8), Protocol::Simple);
        // Named ones override the table.
        let ar = |algo| algorithm(K::Allreduce, Some(algo), CLUSTER, 8 << 30);
        assert_eq!(ar(AlgorithmCfg::Tree).unwrap(), K::TreeAllreduce);
        assert_eq!(ar(AlgorithmCfg::Ring).unwrap(), K::RingAllreduce);
        assert_eq!(
            protocol(true, Some(ProtocolCfg::Ll), K::RingAllreduce, 8 << 30).unwrap(),
            Protocol::Ll
        );
        // Unset on an algorithm-named collective: bare transfers, as before protocols.
        assert_eq!(
            protocol(false, None, K::RingAllreduce, 8).unwrap(),
            Protocol::Bare
        );
    }

    #[test]
    fn unsupported_choices_name_the_field() {
        let e = algorithm(K::Allgather, Some(AlgorithmCfg::Tree), CLUSTER, 8).unwrap_err();
        assert_eq!(e.field, "algorithm");
        let e = algorithm(K::Allreduce, Some(AlgorithmCfg::Nvls), CLUSTER, 8).unwrap_err();
        assert!(e.message.contains("NVSwitch"), "{}", e.message);
        let e = algorithm(K::RingAllreduce, Some(AlgorithmCfg::Ring), CLUSTER, 8).unwrap_err();
        assert_eq!(e.field, "algorithm");
        let e = algorithm(K::Allgather, Some(AlgorithmCfg::Pat), CLUSTER, 8).unwrap_err();
        assert!(e.message.contains("one rank per server"), "{}", e.message);
        let e = protocol(true, Some(ProtocolCfg::Ll), K::NvlsAllreduce, 8).unwrap_err();
        assert_eq!(e.field, "protocol");
    }

    #[test]
    fn all_names_every_algorithm() {
        let names: Vec<String> = AlgorithmCfg::ALL.iter().map(|p| p.name().into()).collect();
        assert_eq!(names, crate::base::param::serde_variants::<AlgorithmCfg>());
    }
}
