//! The per-packet path allocates nothing: once queues, link rings and the event queue have
//! grown to their working size, a simulation moves hundreds of thousands of packets
//! without a single heap allocation. Counted with a global allocator that tallies calls.

use fabricsim::base::units::US;
use fabricsim::sim::Simulation;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A k = 4 fat-tree, a permutation of long flows with ECMP collisions, DCQCN and ECN,
/// with link-level flow control `flow_control`: all the per-packet machinery runs.
fn fat_tree(flow_control: &str) -> String {
    format!(
        r#"
max_time = "20ms"
[topology]
kind = "fat_tree"
k = 4
rate = "100Gbps"
link_delay = "1us"
{flow_control}
[cc]
algorithm = "dcqcn"
[[workload]]
kind = "permutation"
size = "100MB"
"#
    )
}

/// PFC with static thresholds: they bound every queue, so the fabric reaches a steady
/// state.
const PFC: &str = "[fabric.pfc]\nthreshold = \"static\"\nxoff = \"200KB\"\n";

/// One test, so that no other test's allocations land in the counted windows.
#[test]
fn steady_state_moves_packets_without_allocating() {
    steady_state_allocates_nothing(&fat_tree(PFC));
    // The same with credit flow control: virtual channels, cut-through, credit returns.
    steady_state_allocates_nothing(&fat_tree(
        "[fabric.pfc]\nenabled = false\n[fabric.credit]\nenabled = true\n",
    ));
    // With bit errors (3 % of full frames corrupted per hop) and link-level
    // retransmission: corruption draws and go-back-N replays allocate nothing either.
    steady_state_allocates_nothing(&format!(
        "{}[fabric.reliability]\nber = 1e-6\nllr = true\n",
        fat_tree(PFC)
    ));
    // With a packet capture of three ports (a NIC, an edge and an aggregation switch
    // port): noting frames allocates nothing either, and changes no result.
    let pcap = format!("{}{CAPTURE}", fat_tree(PFC));
    steady_state_allocates_nothing(&pcap);
    let flows = |src: &str| {
        let src = src.replace("max_time = \"20ms\"", "max_time = \"2ms\"");
        let l = fabricsim::load_str(&src, "t.toml", Path::new("."), &[]).unwrap();
        let mut sim = Simulation::build(&l.scenario, "t.toml", Path::new(".")).unwrap();
        sim.run(&mut |_| {});
        fabricsim::output::flows_csv(&sim) + &fabricsim::output::ports_csv(&sim)
    };
    assert_eq!(flows(&pcap), flows(&fat_tree(PFC)));
}

/// `[record.pcap]` of three ports, room for every frame they send in 20 ms.
const CAPTURE: &str =
    "[record.pcap]\nports = [\"host0\", \"edge0.0:0\", \"agg0.0:2\"]\nlimit = 1000000\n";

fn steady_state_allocates_nothing(src: &str) {
    let l = fabricsim::load_str(src, "t.toml", Path::new("."), &[]).unwrap();
    let mut sim = Simulation::build(&l.scenario, "t.toml", Path::new(".")).unwrap();
    // Warm up: queues, rings and buckets grow to their working size.
    assert!(sim.run_until(5_000 * US, &mut |_| {}).is_none());
    let hops0 = sim.packet_hops();
    let allocs0 = ALLOCS.load(Ordering::Relaxed);
    assert!(
        sim.run_until(10_000 * US, &mut |_| {}).is_none(),
        "still running"
    );
    let allocs = ALLOCS.load(Ordering::Relaxed) - allocs0;
    let hops = sim.packet_hops() - hops0;
    assert!(hops > 200_000, "the window moved {hops} packet-hops");
    // A queue, ring or event bucket reaching a new maximum depth still grows its buffer
    // now and then (about one allocation per 75,000 packet-hops here, fading as maxima
    // settle); an allocation per packet or per event would be hundreds of thousands.
    assert!(
        allocs * 10_000 < hops,
        "{allocs} allocations for {hops} packet-hops"
    );
    if let Some(c) = &sim.fabric.capture {
        let n = c.records().len();
        assert!(
            n > 10_000 && c.missed() == 0,
            "{n} frames captured, {} missed",
            c.missed()
        );
    }
    if let Some(f) = &sim.fabric.faults {
        let s = f.summary(sim.ctx.now);
        assert!(
            s.frames_replayed > 0,
            "the counted window replayed frames: {s:?}"
        );
    }
    // Pausing and resuming gives the same result as running straight through.
    let out = sim.run(&mut |_| {});
    let mut straight = Simulation::build(&l.scenario, "t.toml", Path::new(".")).unwrap();
    assert_eq!(straight.run(&mut |_| {}), out);
    assert_eq!(
        fabricsim::output::flows_csv(&straight),
        fabricsim::output::flows_csv(&sim)
    );
}
