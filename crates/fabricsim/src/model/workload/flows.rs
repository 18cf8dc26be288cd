//! Flows listed one by one in the scenario (`kind = "flows"`).
//!
//! Each is an RDMA operation (`verb`): a write (the default) moves `size` bytes from
//! `src` to `dst`; a read moves them from `dst` to `src`, and as on the Sunway NIC
//! (document 003: "读转换成目标端的写") it is a request message from `src` to `dst` that
//! the target turns into a write back, starting once the request has arrived; a write
//! with notification is a write followed on the same queue pair by a notification
//! message, which the receiver takes once the data has arrived. Requests and
//! notifications are [`CONTROL_BYTES`] long and appear in `flows.csv` beside the data
//! they belong to: a read's latency is its data flow's finish minus its request's start.
//!
//! `after = i` makes a listed operation wait until listed operation `i` (an earlier one)
//! has completed at its receiver (a read: its data; a notified write: its notice), so a
//! ping-pong is two entries, the pong `after` the ping, and osu_latency's half round
//! trip is (the pong's finish - the ping's start) / 2.

use super::{check_size, resolve_host, Builder, DepPoint, Generator, HostRef, Node, TimedDep};
use crate::base::param::{Described, Param, ParamError, SizeKnob};
use crate::base::units::serde_units as su;
use crate::base::units::Time;
use crate::model::workload::FlowSpec;
use serde::Deserialize;

/// Bytes of a read request or a write notification \[recon\]: a descriptor of a few
/// flits.
pub const CONTROL_BYTES: u64 = 32;

/// An RDMA operation of a listed flow.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verb {
    /// `src` writes `size` bytes to `dst`.
    #[default]
    Write,
    /// `src` reads `size` bytes from `dst`: a request, then `dst` writes them back.
    Read,
    /// A write, then a notification to `dst` on the same queue pair.
    WriteNotify,
}

/// Flows listed in the scenario.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowsCfg {
    /// The flows.
    pub flows: Vec<FlowCfg>,
}

/// One explicit flow.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    /// Source host.
    pub src: HostRef,
    /// Destination host.
    pub dst: HostRef,
    /// Bytes to send.
    #[serde(deserialize_with = "su::bytes")]
    pub size: u64,
    /// Start time.
    #[serde(default, deserialize_with = "su::opt_time")]
    pub start: Option<Time>,
    /// `write` (default), `read` or `write_notify`.
    #[serde(default)]
    pub verb: Verb,
    /// Start only once listed operation `after` (an earlier index) has completed.
    #[serde(default)]
    pub after: Option<usize>,
}

impl Described for FlowsCfg {
    const ABOUT: &'static str = "flows listed one by one";
    fn params() -> Vec<Param> {
        vec![Param::required(
            "flows",
            format!(
                "[{{src, dst, size, start = \"{}\", verb = \"write\" | \"read\" | \"write_notify\", after = <index of an earlier entry>}}]: hosts by id or name",
                crate::base::units::fmt_time_exact(super::DEFAULT_START)
            ),
        )]
    }
}

impl Generator for FlowsCfg {
    /// Exact: a write is one flow; a read (request, data) and a write with notification
    /// (data, note) are two, joined by one edge.
    fn size(&self, _ctx: &super::SizeCtx<'_>) -> Result<Option<super::WorkSize>, ParamError> {
        let two = self.flows.iter().filter(|f| f.verb != Verb::Write).count() as u64;
        let after = self.flows.iter().filter(|f| f.after.is_some()).count() as u64;
        Ok(Some(super::WorkSize {
            flows: self.flows.len() as u64 + two,
            deps: two + after,
            // A read or notified write is a request or notice plus the data.
            bytes: Some(
                self.flows
                    .iter()
                    .fold(0u64, |a, f| a.saturating_add(f.size.saturating_add(4096))),
            ),
            ..Default::default()
        }))
    }

    fn size_drivers(&self) -> &'static str {
        "the flows listed (reads and notified writes count twice)"
    }

    /// The list: every count is its.
    fn size_knobs(&self, _ctx: &super::SizeCtx<'_>) -> Vec<SizeKnob<super::WorkSize>> {
        vec![SizeKnob {
            field: "flows",
            least: Some(super::WorkSize::default()),
        }]
    }

    fn generate(&self, b: &mut Builder<'_>) -> Result<(), ParamError> {
        // The flow whose arrival completes each listed operation, and the first flow
        // each one sends (what an `after` waits for, and what waits).
        let mut done_by: Vec<u32> = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let field = |s: &str| format!("flows[{i}].{s}");
            let src = resolve_host(&f.src, b.graph, &field("src"))?;
            let dst = resolve_host(&f.dst, b.graph, &field("dst"))?;
            if src == dst {
                return Err(ParamError::new(
                    field("dst"),
                    "a flow's source and destination must differ",
                ));
            }
            check_size(f.size, &field("size"))?;
            if let Some(a) = f.after {
                if a >= i {
                    let earlier = match i {
                        0 => "the first entry has none".to_string(),
                        _ => format!("0 to {}", i - 1),
                    };
                    return Err(ParamError::new(
                        field("after"),
                        format!(
                            "{a} is not an earlier entry: an operation waits for one listed before it ({earlier})"
                        ),
                    ));
                }
            }
            let first = b.work.flows.len() as u32;
            let start = f.start.unwrap_or(0);
            let w = &mut b.work;
            let mut push = |src, dst, size| {
                w.flows.push(FlowSpec {
                    src,
                    dst,
                    size,
                    start,
                });
                (w.flows.len() - 1) as u32
            };
            let last = match f.verb {
                Verb::Write => push(src, dst, f.size),
                Verb::Read => {
                    let request = push(src, dst, CONTROL_BYTES);
                    let data = push(dst, src, f.size);
                    w.deps.push((request, data));
                    data
                }
                Verb::WriteNotify => {
                    let data = push(src, dst, f.size);
                    let note = push(src, dst, CONTROL_BYTES);
                    // One queue pair: the notification leaves after the data's last
                    // byte, and the receiver takes it once the data is all there.
                    let key = crate::base::seed::component_seed(
                        b.seed,
                        &format!("notify{}/{i}", b.entry),
                    );
                    w.conn.resize(w.flows.len(), None);
                    w.conn[data as usize] = Some(key);
                    w.conn[note as usize] = Some(key);
                    w.timed.push(TimedDep {
                        before: Node::Flow(data),
                        after: Node::Flow(note),
                        lag: 0,
                        from: DepPoint::Sent,
                    });
                    note
                }
            };
            if let Some(a) = f.after {
                b.work.deps.push((done_by[a], first));
            }
            done_by.push(last);
        }
        Ok(())
    }

    fn files(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}
