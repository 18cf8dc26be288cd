//! `[record.timeline]` -> `timeline.json`: the trace jobs' spans in the Chrome trace
//! event format, which Perfetto (ui.perfetto.dev) and chrome://tracing open.
//!
//! Per job (a process) and rank: a compute track (its compute nodes, which never
//! overlap: a GPU runs one at a time) and communication tracks (its part of each
//! collective, from the moment it entered to the moment its last transfer was in, and
//! each send and receive); per job, collective tracks with one span per collective, from
//! its first rank's entry to its last rank's end. Spans that would overlap on a track go
//! to the next track of the same kind ("rank 3 comm 2"), so every track's spans are
//! disjoint and Perfetto draws them all.
//!
//! The file is written as the run goes: the spans that ended are taken every 2^16
//! events and those that ended before the current time are written, in order of (end,
//! phase), a key no two spans share; so the file is the same however often it is
//! written, and the same for any number of threads. A run cut short leaves a file
//! without its closing `]`, which the format allows and both viewers open. At most
//! `limit` spans are written (the first by that order); the rest are counted.

use crate::base::param::{Described, Param, ParamError};
use crate::base::units::Time;
use crate::model::workload::trace::compile::{SpanTag, TraceJob};
use crate::model::workload::Node;
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::io::Write;

/// The file.
pub const FILE: &str = "timeline.json";
/// Spans written at most unless `limit` says otherwise.
pub const DEFAULT_LIMIT: u64 = 1_000_000;
/// The largest `limit` (about 150 bytes a span: 3 GB of JSON).
pub const MAX_LIMIT: u64 = 20_000_000;

/// `[record.timeline]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TimelineCfg {
    /// Spans written at most (1..=[`MAX_LIMIT`]); later ones are counted, not written.
    #[serde(default = "d_limit")]
    pub limit: u64,
}

fn d_limit() -> u64 {
    DEFAULT_LIMIT
}

impl Described for TimelineCfg {
    const ABOUT: &'static str =
        "the trace jobs' compute, communication and collective spans as timeline.json (Chrome trace format, for Perfetto)";
    fn params() -> Vec<Param> {
        vec![Param::plain(
            "limit",
            DEFAULT_LIMIT,
            "spans written at most; later ones are counted in summary.json",
        )]
    }
}

impl TimelineCfg {
    /// Checks the limit; errors name fields within `[record.timeline]`.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.limit == 0 || self.limit > MAX_LIMIT {
            return Err(ParamError::new(
                "limit",
                format!("{} spans: from 1 to {MAX_LIMIT}", self.limit),
            ));
        }
        Ok(())
    }
}

/// The track of a span: (process, thread).
type Track = (u32, u64);

/// Tracks of a rank: compute at `rank * RANK_TRACKS`, communication after it.
const RANK_TRACKS: u64 = 64;
/// The collective tracks of a job start here.
const COLLECTIVE_TRACKS: u64 = 1 << 40;

/// The timeline of a run: spans waiting to be written, and the writer.
pub struct Timeline {
    limit: u64,
    /// Spans written.
    pub written: u64,
    /// Spans past the limit.
    pub left_out: u64,
    /// What each phase on the timeline stands for, by phase.
    tags: HashMap<u32, SpanTag>,
    /// Phases that ended, not yet written: (end, phase).
    pending: Vec<(Time, u32)>,
    /// Per kind of track (process, first thread), each track's last end.
    lanes: HashMap<Track, Vec<Time>>,
    /// Tracks named so far.
    named: HashSet<Track>,
    out: Option<Box<dyn Write + Send>>,
    /// Whether the opening bracket and the jobs' names are out.
    opened: bool,
    /// The first write error, if any (the run goes on; the runner reports it).
    pub error: Option<String>,
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline")
            .field("limit", &self.limit)
            .field("written", &self.written)
            .field("left_out", &self.left_out)
            .finish()
    }
}

/// Microseconds with six decimals (the picosecond), as the format's `ts` and `dur`.
fn us(t: Time) -> String {
    format!("{}.{:06}", t / 1_000_000, t % 1_000_000)
}

impl Timeline {
    /// A timeline of the tagged phases, writing nothing until [`Self::attach`].
    pub fn new(cfg: &TimelineCfg, tags: &[(u32, SpanTag)]) -> Timeline {
        Timeline {
            limit: cfg.limit,
            written: 0,
            left_out: 0,
            tags: tags.iter().copied().collect(),
            pending: Vec::new(),
            lanes: HashMap::new(),
            named: HashSet::new(),
            out: None,
            opened: false,
            error: None,
        }
    }

    /// Writes the file to `out` from now on.
    pub fn attach(&mut self, out: Box<dyn Write + Send>) {
        self.out = Some(out);
    }

    /// Whether a writer is attached.
    pub fn attached(&self) -> bool {
        self.out.is_some()
    }

    /// Heap bytes (by capacity, roughly: the maps count their entries).
    pub fn heap_bytes(&self) -> u64 {
        (self.tags.len() * 32 + self.pending.capacity() * 16 + self.lanes.len() * 48) as u64
    }

    /// Takes the phases a context saw end.
    pub fn take(&mut self, ended: &mut Vec<(Time, u32)>) {
        self.pending.append(ended);
    }

    /// Writes the spans that ended before `before`. `phase_times` are the run's,
    /// `flow_start` a flow's start time.
    pub fn write_before(
        &mut self,
        before: Time,
        jobs: &[TraceJob],
        phase_times: &[(Option<Time>, Option<Time>)],
        flow_start: &dyn Fn(u32) -> Option<Time>,
    ) {
        if self.out.is_none() || self.pending.is_empty() {
            return;
        }
        self.pending.sort_unstable();
        let cut = self.pending.partition_point(|&(t, _)| t < before);
        let ready: Vec<(Time, u32)> = self.pending.drain(..cut).collect();
        let mut text = String::new();
        if !self.opened {
            self.opened = true;
            text.push('[');
            for (j, job) in jobs.iter().enumerate() {
                text.push_str(&format!(
                    "\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{j},\"args\":{{\"name\":{}}}}},",
                    serde_json::to_string(&format!(
                        "{} ({}, {} ranks)",
                        job.name,
                        job.format.name(),
                        job.hosts.len()
                    ))
                    .unwrap_or_default()
                ));
            }
        }
        for (end, phase) in ready {
            let Some(&tag) = self.tags.get(&phase) else {
                continue;
            };
            let begin = match tag {
                SpanTag::Compute { .. } => phase_times[phase as usize].0,
                SpanTag::Comm { from, .. } => match from {
                    Node::Phase(p) => phase_times[p as usize].0,
                    Node::Flow(f) => flow_start(f),
                },
                SpanTag::Collective {
                    first_entry, ranks, ..
                } => (first_entry..first_entry + ranks)
                    .filter_map(|p| phase_times[p as usize].0)
                    .min(),
            };
            let Some(begin) = begin else { continue };
            if self.written >= self.limit {
                self.left_out += 1;
                continue;
            }
            self.written += 1;
            let (job, name, cat, base, rank) = match tag {
                SpanTag::Compute { job, rank, name } => (
                    job,
                    name,
                    "compute",
                    u64::from(rank) * RANK_TRACKS,
                    Some(rank),
                ),
                SpanTag::Comm {
                    job, rank, name, ..
                } => (
                    job,
                    name,
                    "comm",
                    u64::from(rank) * RANK_TRACKS + 1,
                    Some(rank),
                ),
                SpanTag::Collective { job, name, .. } => {
                    (job, name, "collective", COLLECTIVE_TRACKS, None)
                }
            };
            // Compute spans never overlap (the compiler chains them); the others go to
            // the first track of their kind whose last span ended by `begin`.
            let tid = if cat == "compute" {
                base
            } else {
                let lanes = self.lanes.entry((job, base)).or_default();
                let most = if rank.is_some() {
                    RANK_TRACKS - 1
                } else {
                    1 << 20
                };
                let k = match lanes.iter().position(|&e| e <= begin) {
                    Some(k) => k,
                    None if (lanes.len() as u64) < most => {
                        lanes.push(0);
                        lanes.len() - 1
                    }
                    None => lanes.len() - 1,
                };
                lanes[k] = end;
                base + k as u64
            };
            if self.named.insert((job, tid)) {
                let lane = tid - base;
                let label = match (rank, cat) {
                    (Some(r), "compute") => format!("rank {r} compute"),
                    (Some(r), _) if lane == 0 => format!("rank {r} comm"),
                    (Some(r), _) => format!("rank {r} comm {}", lane + 1),
                    (None, _) if lane == 0 => "collectives".to_string(),
                    (None, _) => format!("collectives {}", lane + 1),
                };
                text.push_str(&format!(
                    "\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{job},\"tid\":{tid},\"args\":{{\"name\":\"{label}\"}}}},"
                ));
            }
            let nm = jobs
                .get(job as usize)
                .and_then(|j| j.names.get(name as usize))
                .map_or("?", String::as_str);
            let args = match rank {
                Some(r) => format!(",\"args\":{{\"rank\":{r}}}"),
                None => String::new(),
            };
            text.push_str(&format!(
                "\n{{\"name\":{},\"cat\":\"{cat}\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{job},\"tid\":{tid}{args}}},",
                serde_json::to_string(nm).unwrap_or_default(),
                us(begin),
                us(end - begin),
            ));
        }
        self.emit(text.as_bytes());
    }

    fn emit(&mut self, bytes: &[u8]) {
        if bytes.is_empty() || self.error.is_some() {
            return;
        }
        if let Some(o) = self.out.as_mut() {
            if let Err(e) = o.write_all(bytes) {
                self.error = Some(e.to_string());
            }
        }
    }

    /// Writes what is left and closes the array: a last record (the counts) that needs
    /// no comma after it.
    pub fn finish(
        &mut self,
        jobs: &[TraceJob],
        phase_times: &[(Option<Time>, Option<Time>)],
        flow_start: &dyn Fn(u32) -> Option<Time>,
    ) {
        if self.out.is_none() {
            return;
        }
        self.write_before(Time::MAX, jobs, phase_times, flow_start);
        if !self.opened {
            self.opened = true;
            self.emit(b"[");
        }
        let tail = format!(
            "\n{{\"name\":\"fabricsim\",\"ph\":\"M\",\"pid\":0,\"args\":{{\"spans\":{},\"left_out\":{}}}}}\n]\n",
            self.written, self.left_out
        );
        self.emit(tail.as_bytes());
        if let Some(o) = self.out.as_mut() {
            if let Err(e) = o.flush() {
                self.error.get_or_insert(e.to_string());
            }
        }
        self.out = None;
    }
}
