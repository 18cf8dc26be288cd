//! Reading the files users give (scenarios, topology files, flow files, CDFs): with a
//! size limit, so that `/dev/zero` or a multi-gigabyte log passed by mistake is refused
//! after reading at most the limit, and refusing binary content (a NUL byte, or bytes
//! that are not UTF-8) with a message that says so, instead of a parse error on line 1
//! or a process that grows until the OS kills it.

use std::io::Read;
use std::path::Path;

/// Largest scenario file: 16 MiB (the largest shipped scenario is a few KiB; a custom
/// topology written out link by link for 100k hosts stays well below this).
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// Largest data file a scenario names (topology file, flow file, CDF): 512 MiB, some
/// twenty million flow lines, beyond what the flow limit ([`crate::base::ids::MAX_INDEX`])
/// lets a run hold.
pub const MAX_DATA_FILE_BYTES: u64 = 512 << 20;

/// Reads `path` as text of at most `limit` bytes. The error is a sentence without the
/// path (the caller names the file and field).
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    if let Ok(m) = f.metadata() {
        if m.is_dir() {
            return Err("cannot read: it is a directory".into());
        }
        if m.is_file() && m.len() > limit {
            return Err(format!(
                "{} bytes: files of at most {} are read",
                m.len(),
                crate::base::units::fmt_bytes(limit)
            ));
        }
    }
    let mut bytes = Vec::new();
    // One byte over the limit tells a file at the limit from a longer one, whatever the
    // metadata said (pipes and devices have none).
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.contains(&0) {
        return Err("binary content (a NUL byte): a text file is expected".into());
    }
    if bytes.len() as u64 > limit {
        return Err(format!(
            "more than {}: files of at most that are read",
            crate::base::units::fmt_bytes(limit)
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "binary content (not UTF-8 at byte {}): a text file is expected",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_an_endless_device_after_the_limit() {
        let e = read_text(Path::new("/dev/zero"), 1 << 10).unwrap_err();
        assert!(e.contains("binary"), "{e}");
        let e = read_text(Path::new("/dev/urandom"), 1 << 10).unwrap_err();
        assert!(e.contains("binary") || e.contains("more than"), "{e}");
    }

    #[test]
    fn refuses_files_over_the_limit_and_binary_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.toml");
        std::fs::write(&p, "x = 1\n").unwrap();
        assert_eq!(read_text(&p, 6).unwrap(), "x = 1\n");
        assert!(read_text(&p, 5).unwrap_err().contains("at most"));
        std::fs::write(&p, [b'a', 0xff, 0xfe]).unwrap();
        assert!(read_text(&p, 100).unwrap_err().contains("not UTF-8"));
        assert!(read_text(d.path(), 100).unwrap_err().contains("directory"));
    }
}
