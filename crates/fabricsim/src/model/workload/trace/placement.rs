//! Where a trace job's ranks go: the GPUs (hosts) not yet taken by an earlier trace job
//! of the scenario, by a rule or as listed.
//!
//! - `contiguous`: the free GPUs in host order. On a rail-optimized cluster rank `r` is
//!   GPU `r mod g` of server `r / g` (g GPUs a server): Megatron's rank order puts a
//!   tensor-parallel group inside one server, and the ranks `g` apart (data and
//!   pipeline parallel peers) on one rail.
//! - `by_rail`: the free GPUs ordered by their index within the server (their rail),
//!   then by server: consecutive ranks sit on one rail of successive servers, so a
//!   group of consecutive ranks talks over the rail's network instead of NVLink (the
//!   placement a scheduler that ignores the server boundary gives).
//! - `random`: the free GPUs shuffled with the run's seed (stream `trace/<name>`).
//! - a list: rank `r` on the `r`-th host listed.

use super::super::{check_distinct, resolve_host, Builder};
use super::PlacementCfg;
use crate::base::param::ParamError;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// The hosts of `ranks` ranks, rank order, of a job named `name`; `taken` marks the hosts
/// earlier jobs hold. Errors name `placement`.
pub fn place(
    cfg: &PlacementCfg,
    ranks: u32,
    name: &str,
    taken: &[bool],
    b: &Builder<'_>,
) -> Result<Vec<u32>, ParamError> {
    let g = b.graph;
    let n = g.hosts.len();
    let free: Vec<u32> = (0..n as u32).filter(|&h| !taken[h as usize]).collect();
    let need = ranks as usize;
    let short = |what: &str| {
        ParamError::new(
            "placement",
            format!(
                "the job has {ranks} ranks but {} of the {n} GPUs are free{what}",
                free.len()
            ),
        )
    };
    let hosts = match cfg {
        PlacementCfg::Rule(r) if r == "contiguous" => {
            if free.len() < need {
                return Err(short(" (earlier trace jobs hold the others)"));
            }
            free[..need].to_vec()
        }
        PlacementCfg::Rule(r) if r == "by_rail" => {
            if free.len() < need {
                return Err(short(""));
            }
            // The index of each GPU within its server, in host order.
            let mut local = vec![0u32; n];
            let mut seen: std::collections::HashMap<u32, u32> = Default::default();
            for (h, l) in local.iter_mut().enumerate() {
                let s = g.server_of_host.get(h).copied().unwrap_or(h as u32);
                let k = seen.entry(s).or_insert(0);
                *l = *k;
                *k += 1;
            }
            let mut order = free.clone();
            order.sort_by_key(|&h| {
                let s = g.server_of_host.get(h as usize).copied().unwrap_or(h);
                (local[h as usize], s, h)
            });
            order[..need].to_vec()
        }
        PlacementCfg::Rule(r) if r == "random" => {
            if free.len() < need {
                return Err(short(""));
            }
            let mut v = free.clone();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
                crate::base::seed::component_seed(b.seed, &format!("trace/{name}")),
            );
            v.shuffle(&mut rng);
            v.truncate(need);
            v
        }
        PlacementCfg::Rule(r) => {
            let hint = crate::base::suggest::did_you_mean(r, super::PLACEMENTS.iter().copied());
            return Err(ParamError::new(
                "placement",
                format!(
                    "`{r}` is not a placement{hint}: \"contiguous\" | \"by_rail\" | \"random\" | a list of hosts"
                ),
            ));
        }
        PlacementCfg::Explicit(list) => {
            if list.len() != need {
                return Err(ParamError::new(
                    "placement",
                    format!("lists {} hosts for a job of {ranks} ranks", list.len()),
                ));
            }
            let v: Vec<u32> = list
                .iter()
                .enumerate()
                .map(|(i, r)| resolve_host(r, g, &format!("placement[{i}]")))
                .collect::<Result<_, _>>()?;
            check_distinct(&v, "placement", "a job's GPUs")?;
            if let Some(i) = v.iter().position(|&h| taken[h as usize]) {
                return Err(ParamError::new(
                    format!("placement[{i}]"),
                    format!("host {} is held by an earlier trace job", v[i]),
                ));
            }
            v
        }
    };
    Ok(hosts)
}
