//! A switch's shared packet buffer with ingress accounting for PFC.
//!
//! The model follows the Broadcom-style MMU that the HPCC ns-3 module implements and
//! ALGORITHMS.md describes. Every byte in the switch is charged to the (ingress port,
//! priority) it arrived on, in three pools:
//! - a small guaranteed *reserve* per (port, priority),
//! - the *shared* pool, bounded by a dynamic threshold
//!   `Th = alpha * (Buffer - headroom total - reserve total - shared used)`
//!   (Choudhury and Hahne's dynamic threshold) or by a static XOFF threshold,
//! - per-port *headroom*, which absorbs the bytes still in flight after XOFF is sent
//!   (3 * rate * delay / 8 covers the frame in flight, the pause frame's trip and the
//!   peer's reaction).
//!
//! A (port, priority) asks its upstream to pause (XOFF) when it uses headroom or reaches
//! the threshold, and to resume (XON) when its headroom is empty and it is `xon_delta`
//! under the threshold. With PFC the only drops are headroom overflows, which a correct
//! headroom never sees. Without PFC (lossy) the buffer is drop-tail with a dynamic
//! threshold per egress queue.

use super::pfc::{PfcCfg, PfcThreshold};
use super::port::N_PRIO;
use crate::base::trusted::Trusted;

/// Bytes charged to one (ingress port, priority).
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressCounter {
    /// All bytes charged here.
    pub bytes: u64,
    /// Of which in the shared pool.
    pub shared: u64,
    /// Of which in headroom.
    pub headroom: u64,
    /// XOFF sent and not yet resumed.
    pub paused_upstream: bool,
    /// The port's dynamic-threshold alpha (`SharedBuffer::alpha_q16`), kept here too,
    /// in the padding: admission reads it with the counter, whose line the look-ahead
    /// loads, where its own table's line missed the cache (`perf record`, k = 16: 2.7 %
    /// of the event loop's samples).
    alpha_q16: u32,
}

/// Result of offering a packet to the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Stored.
    Admitted,
    /// Stored, and its (port, priority) counter is now over the pause threshold without
    /// holding its upstream paused: what [`SharedBuffer::should_pause`] would find (it
    /// is then asked; otherwise it need not be).
    AdmittedOver,
    /// No room: the packet is dropped.
    Dropped,
}

/// The shared buffer of one switch.
#[derive(Clone, Debug)]
pub struct SharedBuffer {
    /// Total bytes.
    pub size: u64,
    /// Lossless (PFC) or lossy.
    pub lossless: bool,
    mode: PfcThreshold,
    /// alpha in 16.16 fixed point (exact for the usual 1/2^k values, at most 2^24), per
    /// ingress port (`fabric.pfc.alpha_per_rate`).
    alpha_q16: Vec<u32>,
    xoff: u64,
    xon_delta: u64,
    reserve: u64,
    headroom: Vec<u64>,
    headroom_total: u64,
    reserve_total: u64,
    /// What the shared pool may hold: the size less headroom and reserve (at least 0),
    /// computed once for the admission's two threshold tests.
    shared_cap: u64,
    /// Bytes in the shared pool.
    pub shared_used: u64,
    /// Bytes stored.
    pub used: u64,
    /// Most bytes ever stored.
    pub peak: u64,
    /// Bytes in headroom now, over every (port, priority).
    pub headroom_used: u64,
    /// Most bytes ever in headroom at once: what of the headroom set aside
    /// (`headroom_total`) was ever needed (`buffers.csv`).
    pub headroom_peak: u64,
    /// Most bytes one (port, priority) ever held in its headroom: the in-flight bytes
    /// after XOFF a port's headroom must absorb for zero loss.
    pub headroom_peak_port: u64,
    /// Per priority, the counters of every ingress port: empty until a packet of that
    /// priority first arrives (a run uses two or three of the eight: 256
    /// bytes a port when all eight were kept).
    ing: [Vec<IngressCounter>; N_PRIO],
}

/// The counter of a (port, priority) that never held anything.
const EMPTY: IngressCounter = IngressCounter {
    bytes: 0,
    shared: 0,
    headroom: 0,
    paused_upstream: false,
    alpha_q16: 0,
};

impl SharedBuffer {
    /// Heap bytes of the buffer's per-port books (by capacity).
    pub fn heap_bytes(&self) -> u64 {
        use crate::base::memory::vec_bytes;
        vec_bytes(&self.alpha_q16)
            + vec_bytes(&self.headroom)
            + self.ing.iter().map(vec_bytes).sum::<u64>()
    }

    /// Ports the buffer keeps counters for (a port's local index is below this).
    pub fn n_ports(&self) -> usize {
        self.alpha_q16.len()
    }

    /// A buffer for a switch whose ports have the given headroom sizes.
    pub fn new(size: u64, cfg: &PfcCfg, headroom: Vec<u64>) -> SharedBuffer {
        let n = headroom.len();
        let headroom_total: u64 = if cfg.enabled {
            headroom.iter().sum()
        } else {
            0
        };
        let reserve_total = if cfg.enabled {
            cfg.reserve * (n * N_PRIO) as u64
        } else {
            0
        };
        SharedBuffer {
            size,
            lossless: cfg.enabled,
            mode: cfg.threshold,
            alpha_q16: vec![q16(cfg.alpha); n],
            xoff: cfg.xoff,
            xon_delta: cfg.xon_delta,
            reserve: cfg.reserve,
            headroom,
            headroom_total,
            reserve_total,
            shared_cap: size.saturating_sub(headroom_total + reserve_total),
            shared_used: 0,
            used: 0,
            peak: 0,
            headroom_used: 0,
            headroom_peak: 0,
            headroom_peak_port: 0,
            ing: Default::default(),
        }
    }

    /// Sets each ingress port's dynamic-threshold alpha (one per port, in order).
    pub fn with_port_alpha(mut self, alpha: impl IntoIterator<Item = f64>) -> SharedBuffer {
        self.alpha_q16 = alpha.into_iter().map(q16).collect();
        for v in &mut self.ing {
            for (c, &a) in v.iter_mut().zip(&self.alpha_q16) {
                c.alpha_q16 = a;
            }
        }
        assert_eq!(
            self.alpha_q16.len(),
            self.headroom.len(),
            "one alpha per port"
        );
        self
    }

    /// Headroom set aside for PFC, over every port (0 when lossy).
    pub fn headroom_total(&self) -> u64 {
        self.headroom_total
    }

    /// Reserve set aside, over every (port, priority) (0 when lossy).
    pub fn reserve_total(&self) -> u64 {
        self.reserve_total
    }

    /// Bytes the buffer must set aside before sharing (headroom plus reserve).
    pub fn set_aside(&self) -> u64 {
        self.headroom_total + self.reserve_total
    }

    /// The dynamic threshold on the shared usage of ingress `port`'s priorities.
    #[inline]
    pub fn threshold(&self, port: usize) -> u64 {
        scaled(
            self.shared_cap.saturating_sub(self.shared_used),
            self.alpha_q16[port] as u64,
        )
    }

    /// Counters of (port, priority).
    #[inline]
    pub fn counter(&self, port: usize, prio: usize) -> &IngressCounter {
        self.ing[prio].get(port).unwrap_or(&EMPTY)
    }

    /// Counters of (port, priority) for an admission, made on the priority's first use
    /// at this switch (the test for it is the index's only bounds check). Every other
    /// change to a counter follows its admission.
    #[inline(always)]
    fn admitting<'a>(
        ing: &'a mut [Vec<IngressCounter>; N_PRIO],
        alpha_q16: &[u32],
        port: usize,
        prio: usize,
    ) -> &'a mut IngressCounter {
        let v = &mut ing[prio];
        // Tested before the index, so that the index needs no check of its own.
        if port < v.len() {
            return &mut v[port];
        }
        open(v, alpha_q16);
        &mut v[port]
    }

    /// Offers `size` bytes arriving on (`port`, `prio`). Always inlined: once per
    /// packet and hop, where a call's register saves cost as much as its lossless test.
    #[inline(always)]
    pub fn admit(&mut self, port: usize, prio: usize, size: u64) -> Admission {
        if self.used + size > self.size {
            return Admission::Dropped;
        }
        if !self.lossless {
            // Drop-tail on the shared buffer: a packet is dropped only when the buffer
            // is full (checked above).
            self.used += size;
            self.peak = self.peak.max(self.used);
            Self::admitting(&mut self.ing, &self.alpha_q16, port, prio).bytes += size;
            return Admission::Admitted;
        }
        // The dynamic threshold is computed only past the reserve (where packets of a
        // lightly loaded port never go); it reads the shared usage, not this counter.
        let c = Self::admitting(&mut self.ing, &self.alpha_q16, port, prio);
        // The shared space left (the dynamic threshold's base) once computed: the test
        // for a pause below reuses it, less what this packet took of it.
        let mut free = None;
        let in_reserve = c.bytes - c.shared - c.headroom;
        if in_reserve + size <= self.reserve {
            // guaranteed
        } else if match self.mode {
            PfcThreshold::Dynamic => {
                let f = self.shared_cap.saturating_sub(self.shared_used);
                free = Some(f);
                c.shared + size <= scaled(f, c.alpha_q16 as u64)
            }
            PfcThreshold::Static => c.bytes + size <= self.xoff,
        } && self.shared_used + size <= self.shared_cap
        {
            c.shared += size;
            self.shared_used += size;
            // The test above left at least `size` free.
            free = free.map(|f| f - size);
        } else if c.headroom + size <= self.headroom[port] {
            c.headroom += size;
            self.headroom_used += size;
            self.headroom_peak = self.headroom_peak.max(self.headroom_used);
            self.headroom_peak_port = self.headroom_peak_port.max(c.headroom);
        } else {
            return Admission::Dropped;
        }
        c.bytes += size;
        self.used += size;
        self.peak = self.peak.max(self.used);
        // `should_pause`'s test, on the counter at hand.
        let over = !c.paused_upstream
            && (c.headroom > 0
                || match self.mode {
                    PfcThreshold::Dynamic => {
                        c.shared > 0 && {
                            let free = free.unwrap_or_else(|| {
                                self.shared_cap.saturating_sub(self.shared_used)
                            });
                            c.shared >= scaled(free, c.alpha_q16 as u64)
                        }
                    }
                    PfcThreshold::Static => c.bytes >= self.xoff,
                });
        if over {
            Admission::AdmittedOver
        } else {
            Admission::Admitted
        }
    }

    /// Hints that the counter of (`port`, `prio`) will be used soon.
    #[inline(always)]
    pub fn prefetch_counter(&self, port: usize, prio: usize) {
        // By address, unchecked: a priority without counters yet, or a wrong guess,
        // prefetches a line for nothing.
        crate::base::prefetch::prefetch_item(&self.ing[prio & (N_PRIO - 1)], port);
    }

    /// Frees `size` bytes charged to (`port`, `prio`): headroom first, then shared, then
    /// reserve (so a paused port drains its headroom before anything else). Returns
    /// whether (`port`, `prio`) still holds its upstream paused: only then can this
    /// release resume it ([`Self::should_resume`]), so the caller skips that test
    /// otherwise (nearly always) without reading the counter again.
    #[inline(always)]
    pub fn release(&mut self, port: usize, prio: usize, size: u64) -> bool {
        let c = self.ing[prio].at_mut(port);
        debug_assert!(c.bytes >= size);
        c.bytes -= size;
        self.used -= size;
        if !self.lossless {
            return false;
        }
        let mut left = size;
        // Headroom holds bytes only while the counter is over its threshold (nearly
        // never): tested, rather than computed on for nothing.
        if c.headroom != 0 {
            let h = left.min(c.headroom);
            c.headroom -= h;
            self.headroom_used -= h;
            left -= h;
        }
        let s = left.min(c.shared);
        c.shared -= s;
        self.shared_used -= s;
        c.paused_upstream
    }

    /// Should (port, prio) send XOFF now? True once, until [`Self::should_resume`].
    #[inline(always)]
    pub fn should_pause(&mut self, port: usize, prio: usize) -> bool {
        if !self.lossless {
            return false;
        }
        let c = &self.ing[prio][port];
        if c.paused_upstream {
            return false;
        }
        let over = c.headroom > 0
            || match self.mode {
                PfcThreshold::Dynamic => c.shared > 0 && c.shared >= self.threshold(port),
                PfcThreshold::Static => c.bytes >= self.xoff,
            };
        let c = self.ing[prio].at_mut(port);
        if over {
            c.paused_upstream = true;
        }
        over
    }

    /// Should (port, prio) send XON now? True once per pause.
    #[inline(always)]
    pub fn should_resume(&mut self, port: usize, prio: usize) -> bool {
        // Nearly every release is of a counter that pauses nothing: that test first.
        let c = &self.ing[prio][port];
        if !c.paused_upstream || c.headroom > 0 {
            return false;
        }
        let under = match self.mode {
            PfcThreshold::Dynamic => c.shared + self.xon_delta <= self.threshold(port),
            PfcThreshold::Static => c.bytes + self.xon_delta <= self.xoff,
        };
        let c = self.ing[prio].at_mut(port);
        if under {
            c.paused_upstream = false;
        }
        under
    }

    /// True if (port, prio) currently holds its upstream paused.
    pub fn is_pausing(&self, port: usize, prio: usize) -> bool {
        self.counter(port, prio).paused_upstream
    }
}

/// The counters of a priority's first packet at a switch, one per port (each with its
/// port's alpha).
#[cold]
#[inline(never)]
fn open(v: &mut Vec<IngressCounter>, alpha_q16: &[u32]) {
    *v = (alpha_q16.iter())
        .map(|&alpha_q16| IngressCounter { alpha_q16, ..EMPTY })
        .collect();
}

/// `free` bytes times a Q16 fraction: the dynamic threshold.
#[inline(always)]
fn scaled(free: u64, alpha_q16: u64) -> u64 {
    // free < 2^40 and alpha < 256 keep the product below 2^64.
    (free * alpha_q16) >> 16
}

fn q16(alpha: f64) -> u32 {
    (alpha * 65536.0).round().clamp(1.0, (1u32 << 24) as f64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::Rate;

    fn cfg(mode: PfcThreshold) -> PfcCfg {
        PfcCfg {
            threshold: mode,
            reserve: 1000,
            xoff: 10_000,
            xon_delta: 1000,
            ..PfcCfg::default()
        }
    }

    #[test]
    fn only_the_priorities_that_arrive_get_counters() {
        let mut b = SharedBuffer::new(1_000_000, &cfg(PfcThreshold::Static), vec![5000; 4]);
        let none = b.heap_bytes();
        assert_eq!(b.admit(2, 3, 1000), Admission::Admitted);
        let one = b.heap_bytes();
        // One counter per port for priority 3, none for the seven others.
        assert_eq!(one - none, 4 * std::mem::size_of::<IngressCounter>() as u64);
        assert_eq!(b.counter(2, 3).bytes, 1000);
        assert_eq!(b.counter(2, 5).bytes, 0);
        assert!(!b.is_pausing(1, 5));
        assert_eq!(b.admit(1, 3, 500), Admission::Admitted);
        b.release(2, 3, 1000);
        assert_eq!((b.counter(2, 3).bytes, b.counter(1, 3).bytes), (0, 500));
        assert_eq!(b.heap_bytes(), one);
    }

    #[test]
    fn headroom_in_use_and_its_peaks_follow_admissions_and_releases() {
        let mut b = SharedBuffer::new(1_000_000, &cfg(PfcThreshold::Static), vec![5000; 2]);
        assert_eq!(
            (b.headroom_total(), b.reserve_total()),
            (10_000, 2 * 8 * 1000)
        );
        // 10 KB fill port 0's reserve and threshold; the next 3 KB go to its headroom,
        // then 2 KB to port 1's.
        for _ in 0..10 {
            b.admit(0, 3, 1000);
        }
        assert_eq!((b.headroom_used, b.headroom_peak), (0, 0));
        for _ in 0..3 {
            b.admit(0, 3, 1000);
        }
        for _ in 0..12 {
            b.admit(1, 3, 1000);
        }
        assert_eq!(b.headroom_used, 5000);
        assert_eq!((b.headroom_peak, b.headroom_peak_port), (5000, 3000));
        // Releases drain headroom first; the peaks stay.
        for _ in 0..4 {
            b.release(0, 3, 1000);
        }
        assert_eq!(b.headroom_used, 2000);
        assert_eq!((b.headroom_peak, b.headroom_peak_port), (5000, 3000));
    }

    #[test]
    fn static_threshold_pauses_and_resumes() {
        let mut b = SharedBuffer::new(1_000_000, &cfg(PfcThreshold::Static), vec![5000; 2]);
        let mut paused = false;
        for _ in 0..10 {
            let a = b.admit(0, 3, 1000);
            assert_ne!(a, Admission::Dropped);
            let pause = b.should_pause(0, 3);
            assert_eq!(
                a == Admission::AdmittedOver,
                pause,
                "admit's hint is the test"
            );
            paused |= pause;
        }
        assert!(
            paused,
            "10 KB on one ingress reaches the 10 KB XOFF threshold"
        );
        assert!(!b.should_pause(0, 3), "XOFF is sent once");
        // Headroom absorbs in-flight bytes, then drops.
        for _ in 0..5 {
            assert_eq!(b.admit(0, 3, 1000), Admission::Admitted);
        }
        assert_eq!(b.admit(0, 3, 1000), Admission::Dropped);
        for _ in 0..5 {
            b.release(0, 3, 1000);
            assert!(
                !b.should_resume(0, 3),
                "headroom still occupied or above XON"
            );
        }
        b.release(0, 3, 1000);
        assert!(b.should_resume(0, 3));
        assert_eq!(b.used, 9000);
    }

    #[test]
    fn dynamic_threshold_shrinks_as_buffer_fills() {
        let mut b = SharedBuffer::new(100_000, &cfg(PfcThreshold::Dynamic), vec![0; 1]);
        let t0 = b.threshold(0);
        for _ in 0..20 {
            b.admit(0, 0, 1000);
        }
        assert!(b.threshold(0) < t0);
        assert!(b.used <= b.size);
    }

    #[test]
    fn conservation_of_bytes() {
        let mut b = SharedBuffer::new(50_000, &cfg(PfcThreshold::Dynamic), vec![4000; 4]);
        let mut stored = 0u64;
        for i in 0..200usize {
            if b.admit(i % 4, i % 8, 700) != Admission::Dropped {
                stored += 700;
            }
        }
        assert_eq!(b.used, stored);
        for i in 0..200usize {
            let (p, q) = (i % 4, i % 8);
            if b.counter(p, q).bytes >= 700 {
                b.release(p, q, 700);
                stored -= 700;
            }
        }
        assert_eq!(b.used, stored);
        assert!(b.shared_used <= b.used);
    }

    /// The shortcut the switch takes after a release: it asks flow control whether to
    /// resume only when `release` says the counter holds its upstream paused. Over a
    /// long mixed sequence under both thresholds, the full test never answers yes when
    /// the shortcut skipped it.
    #[test]
    fn a_skipped_resume_test_would_have_said_no() {
        for mode in [PfcThreshold::Dynamic, PfcThreshold::Static] {
            let mut b = SharedBuffer::new(60_000, &cfg(mode), vec![3000; 4]);
            let (mut pauses, mut resumes, mut held) = (0, 0, Vec::new());
            let mut x = 12_345u64;
            for _ in 0..20_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let (p, q) = ((x >> 33) as usize % 4, (x >> 40) as usize % 3);
                let size = 300 + (x >> 50) % 1200;
                if (x >> 20) % 5 < 3 {
                    let a = b.admit(p, q, size);
                    if a != Admission::Dropped {
                        held.push((p, q, size));
                        // The switch asks `should_pause` only on admit's hint.
                        let pause = b.should_pause(p, q);
                        assert_eq!(a == Admission::AdmittedOver, pause, "{mode:?}");
                        pauses += pause as u32;
                    }
                } else if !held.is_empty() {
                    let (p, q, size) = held.swap_remove((x >> 8) as usize % held.len());
                    let holding = b.release(p, q, size);
                    let resume = b.should_resume(p, q);
                    assert!(holding || !resume, "{mode:?}");
                    resumes += resume as u32;
                }
            }
            // The sequence does pause and resume, so the shortcut was put to the test.
            assert!(
                pauses > 10 && resumes > 10,
                "{mode:?}: {pauses} pauses, {resumes} resumes"
            );
        }
    }

    #[test]
    fn alpha_per_rate_sets_each_ports_threshold() {
        let mut c = cfg(PfcThreshold::Dynamic);
        c.reserve = 0;
        c.alpha_per_rate.insert("400Gbps".into(), 0.5);
        c.alpha_per_rate.insert("100Gbps".into(), 0.125);
        assert!(c.validate(5000).is_ok());
        let rates = [Rate::gbps(400), Rate::gbps(100), Rate::gbps(25)];
        let mut b = SharedBuffer::new(800_000, &c, vec![0; 3])
            .with_port_alpha(rates.iter().map(|&r| c.alpha_for(r)));
        // The whole buffer is free: 1/2, 1/8 and (the default alpha) 1/8 of it.
        assert_eq!(
            (b.threshold(0), b.threshold(1), b.threshold(2)),
            (400_000, 100_000, 100_000)
        );
        // The 400G port keeps admitting to the shared pool where the 100G port pauses.
        for _ in 0..150 {
            b.admit(0, 3, 1000);
            b.admit(1, 3, 1000);
        }
        assert!(b.should_pause(1, 3));
        assert!(!b.should_pause(0, 3));
        // A key that is not a rate, or a bad alpha, is refused naming the key.
        let mut bad = cfg(PfcThreshold::Dynamic);
        bad.alpha_per_rate.insert("fast".into(), 0.5);
        let e = bad.validate(5000).unwrap_err();
        assert!(e.field.contains("alpha_per_rate.\"fast\""), "{e}");
        let mut bad = cfg(PfcThreshold::Dynamic);
        bad.alpha_per_rate.insert("100Gbps".into(), 0.0);
        assert!(bad.validate(5000).is_err());
    }
}
