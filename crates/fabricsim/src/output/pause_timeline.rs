//! The PFC pause timeline of a run's `report.html`: when each of the most paused ports
//! (a switch's or a NIC's) was held by its peer's PFC pause, from the recorder's pause
//! samples (taken every `[record] queue_interval`): a horizontal bar per port over the
//! sampling instants it was found paused, each sample standing for one interval.

use crate::base::charts::LineChart;
use crate::base::ids::PortId;
use crate::sim::Simulation;

/// Most ports in the timeline.
pub const MAX_PAUSE_PORTS: usize = 6;

/// The timeline, or None when no port was found paused (or pauses were not sampled).
pub fn pause_timeline(sim: &Simulation) -> Option<LineChart> {
    let samples = &sim.record.pause_samples;
    let iv = sim.ctx.params.queue_interval?;
    if samples.is_empty() {
        return None;
    }
    // Ports by paused samples, most first (ties: lower id).
    let mut count: std::collections::BTreeMap<u32, usize> = Default::default();
    for s in samples {
        *count.entry(s.port).or_default() += 1;
    }
    let total = count.len();
    let mut ports: Vec<(u32, usize)> = count.into_iter().collect();
    ports.sort_by_key(|&(p, n)| (std::cmp::Reverse(n), p));
    ports.truncate(MAX_PAUSE_PORTS);
    let us = |t: u64| t as f64 / 1e6;
    let name = |p: u32| {
        format!(
            "{}:{}",
            sim.port_node_name(PortId(p)),
            sim.fabric.ports[p as usize].local
        )
    };
    let mut c = LineChart::over_time(
        format!(
            "PFC pause timeline ({} of {total} paused ports, most paused first)",
            ports.len()
        ),
        "port (node:port)",
        Vec::new(),
    );
    for (row, &(port, _)) in ports.iter().enumerate() {
        // Consecutive samples merge into one paused interval; a break ends the bar.
        let y = row as f64;
        let mut pts: Vec<(f64, f64)> = Vec::new();
        let mut open: Option<(u64, u64)> = None;
        for s in samples.iter().filter(|s| s.port == port) {
            open = match open {
                Some((a, b)) if s.t == b => Some((a, s.t + iv)),
                Some((a, b)) => {
                    pts.extend([(us(a), y), (us(b), y), (us(b), f64::NAN)]);
                    Some((s.t, s.t + iv))
                }
                None => Some((s.t, s.t + iv)),
            };
        }
        if let Some((a, b)) = open {
            pts.extend([(us(a), y), (us(b), y)]);
        }
        c.series.push((name(port), pts));
    }
    c.y_categories = ports.iter().map(|&(p, _)| name(p)).collect();
    c.note = format!(
        "A bar where the port's peer held it paused (PFC XOFF on any priority), as found \
         at each queue sampling instant ([record] queue_interval = {}); a bar covers the \
         interval after each such instant. Total paused time per port: the ports table.",
        crate::base::units::fmt_time(iv)
    );
    Some(c)
}
