//! NVLS AllReduce (`nvls_allreduce`, or `allreduce` with `algorithm = "nvls"`): the
//! reduction done by the NVSwitch (NVLink SHARP).
//!
//! Third-generation NVSwitches reduce and multicast in the switch (NVIDIA H100 Tensor
//! Core GPU Architecture whitepaper, "NVLink SHARP"; NCCL 2.17 release notes, the NVLS
//! algorithm; arXiv 2507.04786, section V). For its shard `i` of `S/g`, GPU `i` of a
//! server of `g` GPUs issues a reducing load: the switch reads shard `i` from every GPU
//! and returns the sum; then GPU `i` issues a multicast store of the result, which the
//! switch writes into every GPU. Per GPU and direction, NVLink thus carries `S` for the
//! loads plus `S/g` for its store (out), `S/g` for its sum plus `S` from the multicasts
//! (in): `S (g+1)/g` each way, against a ring's `2 (g-1)/g S`. Across servers NCCL keeps
//! the reduction in the switch and joins the servers by a ring or a tree over the
//! network; here (as `hierarchical_allreduce`) the GPUs of one local index run a ring
//! AllReduce of their reduced shard between the two switch phases.
//!
//! The NVSwitch is no host, so no flow can end in it: the switch's part is represented
//! by flows between the GPUs of a server that put on every GPU's NVLink, up and down, the
//! bytes above. GPU `i` sends `S` to GPU `i+1` of its server (the loads; what reaches
//! `i+1` stands for the sums and multicasts coming down), then, once its reduced shard
//! is complete (its load received, and its rail ring done), `S/g` to GPU `i+1` (its
//! store). Each link carries `S (g+1)/g` each way, as with the switch; what the
//! representation changes is which phase the downward bytes travel in, which does not
//! matter when pieces pipeline, as they do in NCCL's NVLS kernels.

use super::dag::{push, ring_steps, split, Dag};

/// Appends the NVLS AllReduce of `s` bytes on channel `ch` over `servers` (indices into
/// `ranks`, the same count in each).
pub(super) fn nvls(
    dag: &mut Dag,
    ranks: &[u32],
    servers: &[Vec<usize>],
    s: u64,
    ch: u32,
    chunks: u32,
) {
    let (m, g) = (servers.len(), servers[0].len());
    for piece in split(s, u64::from(chunks)) {
        let shard = split(piece, g as u64)[0];
        // into[0][r]: the last transfer into rank r of this piece.
        let mut into: Vec<Vec<Option<u32>>> = vec![vec![None; ranks.len()]];
        if g >= 2 {
            for srv in servers {
                for (i, &r) in srv.iter().enumerate() {
                    let to = srv[(i + 1) % g];
                    into[0][to] = Some(push(dag, ranks[r], ranks[to], piece, ch));
                }
            }
        }
        if m >= 2 {
            for i in 0..g {
                let rail: Vec<usize> = servers.iter().map(|srv| srv[i]).collect();
                let per_step = split(shard, m as u64)[0];
                ring_steps(dag, ranks, &rail, 2 * (m - 1), per_step, ch, 1, &mut into);
            }
        }
        if g >= 2 {
            let before = into[0].clone();
            for srv in servers {
                for (i, &r) in srv.iter().enumerate() {
                    let to = srv[(i + 1) % g];
                    let x = push(dag, ranks[r], ranks[to], shard, ch);
                    if let Some(b) = before[r] {
                        dag.edges.push((b, x));
                    }
                }
            }
        }
    }
}
