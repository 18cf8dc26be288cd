//! Just enough of the MAC to generate realistic traffic: the frame check sequence
//! (IEEE 802.3 clause 3.2.9, CRC-32), padding to the 64-octet minimum, and the MAC control
//! frames PHYSec must hide: PAUSE (IEEE 802.3 Annex 31B) and priority flow control
//! (IEEE 802.1Qbb). MACsec (IEEE 802.1AE) cannot encrypt these, because they are consumed
//! by the MAC control sublayer below the MACsec SecY; PHYSec encrypts them like any frame.

/// Minimum frame length, FCS included.
pub const MIN_FRAME: usize = 64;
/// The jumbo frame length used in the tests (9 KiB payload class).
pub const JUMBO_FRAME: usize = 9216;
/// Destination address of MAC control frames.
pub const MAC_CONTROL_DA: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
/// EtherType of MAC control frames.
pub const MAC_CONTROL_ETHERTYPE: u16 = 0x8808;

const fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC_TABLE: [u32; 256] = crc_table();

/// The Ethernet CRC-32 of `data` (reflected polynomial 0xEDB88320, initial and final
/// inversion).
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c = CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// Build a frame: addresses, EtherType, payload padded to the minimum, FCS appended
/// (least significant octet first, as transmitted).
pub fn build_frame(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(payload.len() + 18);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    if f.len() < MIN_FRAME - 4 {
        f.resize(MIN_FRAME - 4, 0);
    }
    let fcs = crc32(&f);
    f.extend_from_slice(&fcs.to_le_bytes());
    f
}

/// True if the last four octets are the correct FCS of the rest.
pub fn fcs_ok(frame: &[u8]) -> bool {
    if frame.len() < 4 {
        return false;
    }
    let (body, fcs) = frame.split_at(frame.len() - 4);
    crc32(body).to_le_bytes() == fcs
}

/// An IEEE 802.3 PAUSE frame (opcode 0x0001) asking for `quanta` pause quanta.
pub fn pause_frame(src: [u8; 6], quanta: u16) -> Vec<u8> {
    let mut p = vec![0x00, 0x01];
    p.extend_from_slice(&quanta.to_be_bytes());
    build_frame(MAC_CONTROL_DA, src, MAC_CONTROL_ETHERTYPE, &p)
}

/// An IEEE 802.1Qbb PFC frame (opcode 0x0101) with a class-enable vector and eight
/// per-priority pause times.
pub fn pfc_frame(src: [u8; 6], class_enable: u8, quanta: [u16; 8]) -> Vec<u8> {
    let mut p = vec![0x01, 0x01, 0x00, class_enable];
    for q in quanta {
        p.extend_from_slice(&q.to_be_bytes());
    }
    build_frame(MAC_CONTROL_DA, src, MAC_CONTROL_ETHERTYPE, &p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        // The standard CRC-32 check value for "123456789".
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn control_frames_are_minimum_size_with_good_fcs() {
        let p = pfc_frame([2, 0, 0, 0, 0, 1], 0x08, [0, 0, 0, 0xffff, 0, 0, 0, 0]);
        assert_eq!(p.len(), MIN_FRAME);
        assert!(fcs_ok(&p));
        assert_eq!(&p[12..16], &[0x88, 0x08, 0x01, 0x01]);
        let q = pause_frame([2, 0, 0, 0, 0, 1], 100);
        assert_eq!(q.len(), MIN_FRAME);
        assert!(fcs_ok(&q));
        let mut bad = q.clone();
        bad[20] ^= 1;
        assert!(!fcs_ok(&bad));
    }
}
