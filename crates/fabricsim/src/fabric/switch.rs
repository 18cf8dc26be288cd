//! A switch: its ports, shared buffer, per-port ECN markers, forwarding latency and the
//! random state of its load balancer.

use super::buffer::SharedBuffer;
use super::ecn::RedMarker;
use rand_chacha::ChaCha8Rng;

/// One switch.
pub struct Switch {
    /// Node id.
    pub node: u32,
    /// First port id (ports are contiguous).
    pub first_port: u32,
    /// Number of ports.
    pub n_ports: u32,
    /// Shared buffer.
    pub buffer: SharedBuffer,
    /// ECN thresholds per local port.
    pub ecn: Vec<RedMarker>,
    /// Seeded from (run seed, switch name): ECN coin flips and random spraying.
    pub rng: ChaCha8Rng,
    /// ECMP hash salt, so that different switches split flows differently.
    pub salt: u32,
    /// Round-robin cursor for per-packet spraying.
    pub rr: u32,
    /// Packets dropped at this switch.
    pub drops: u64,
    /// Control packets this switch generated (GSE REQUEST/GRANT).
    pub generated: u64,
    /// Control packets addressed to this switch and consumed here.
    pub consumed: u64,
    /// Packets held outside the egress queues (GSE VOQs and reorder buffers).
    pub held: u64,
    /// Wire bytes admitted to the buffer but waiting in GSE VOQs.
    pub voq_wire: u64,
}
