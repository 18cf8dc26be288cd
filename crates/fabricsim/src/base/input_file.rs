//! Reading the files users give (scenarios, topology files, flow files, CDFs): with a
//! size limit, so that `/dev/zero` or a multi-gigabyte log passed by mistake is refused
//! after reading at most the limit, and refusing binary content (a NUL byte, or bytes
//! that are not UTF-8) with a message that says so, instead of a parse error on line 1
//! or a process that grows until the OS kills it. Only regular files are read (a link to
//! one is followed): a FIFO, which would block the open, and a device are refused
//! unopened.

use std::io::Read;
use std::path::Path;

/// Largest scenario file: 16 MiB (the largest shipped scenario is a few KiB; a custom
/// topology written out link by link for 100k hosts stays well below this).
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// Largest data file a scenario names (topology file, flow file, CDF): 512 MiB, some
/// twenty million flow lines, beyond what the flow limit ([`crate::base::ids::MAX_INDEX`])
/// lets a run hold.
pub const MAX_DATA_FILE_BYTES: u64 = 512 << 20;

/// Why a file was not read: a sentence without the path (the caller names the file and
/// field), and for binary content the line and column of the first offending byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// Line and column (1-based, columns in characters as the TOML parser counts them)
    /// of a NUL byte or of the first byte that is not UTF-8.
    pub at: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl ReadError {
    fn new(message: impl Into<String>) -> ReadError {
        ReadError {
            at: None,
            message: message.into(),
        }
    }

    /// The error as `<path>:<line>:<column>: <message>` (`<path>: <message>` when it has
    /// no position), the form of every line error of a file a scenario names.
    pub fn in_file(&self, path: &Path) -> String {
        match self.at {
            Some((l, c)) => format!("{}:{l}:{c}: {}", path.display(), self.message),
            None => format!("{}: {}", path.display(), self.message),
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some((l, c)) = self.at {
            write!(f, "line {l}, column {c}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Line and column of byte `at` of `bytes` (see [`ReadError::at`]).
fn line_col(bytes: &[u8], at: usize) -> (usize, usize) {
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (
        line,
        String::from_utf8_lossy(&bytes[start..at]).chars().count() + 1,
    )
}

/// Reads `path` as text of at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_regular(path, limit)?;
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(ReadError {
            at: Some(line_col(&bytes, at)),
            message: "binary content (a NUL byte): a text file is expected".into(),
        });
    }
    if bytes.len() as u64 > limit {
        return Err(ReadError::new(format!(
            "more than {}: files of at most that are read",
            crate::base::units::fmt_bytes(limit)
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        ReadError {
            at: Some(line_col(e.as_bytes(), at)),
            message: format!("binary content (not UTF-8 at byte {at}): a text file is expected"),
        }
    })
}

/// Reads `path` as binary content of at most `limit` bytes (a Chakra trace).
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let bytes = read_regular(path, limit)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::new(format!(
            "more than {}: files of at most that are read",
            crate::base::units::fmt_bytes(limit)
        )));
    }
    Ok(bytes)
}

/// The bytes of the regular file `path`, at most `limit + 1` of them (the caller tells a
/// file at the limit from a longer one).
fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    // Looked at before it is opened: opening a FIFO blocks until a writer comes, and a
    // device reads without end.
    let m = std::fs::metadata(path).map_err(|e| ReadError::new(format!("cannot read: {e}")))?;
    if m.is_dir() {
        return Err(ReadError::new("cannot read: it is a directory"));
    }
    if !m.is_file() {
        return Err(ReadError::new(not_regular(&m)));
    }
    let f = std::fs::File::open(path).map_err(|e| ReadError::new(format!("cannot read: {e}")))?;
    if let Ok(m) = f.metadata() {
        // What was opened is what was looked at (not swapped for a FIFO in between).
        if !m.is_file() {
            return Err(ReadError::new(not_regular(&m)));
        }
        if m.len() > limit {
            return Err(ReadError::new(format!(
                "{} bytes: files of at most {} are read",
                m.len(),
                crate::base::units::fmt_bytes(limit)
            )));
        }
    }
    let mut bytes = Vec::new();
    // One byte over the limit tells a file at the limit from a longer one, whatever the
    // metadata said (pipes and devices have none).
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::new(format!("cannot read: {e}")))?;
    Ok(bytes)
}

/// Why a file that is not a regular file is not read.
fn not_regular(m: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            return "cannot read: it is a FIFO (named pipe); a regular file is expected";
        }
        if t.is_char_device() || t.is_block_device() {
            return "cannot read: it is a device; a regular file is expected";
        }
        if t.is_socket() {
            return "cannot read: it is a socket; a regular file is expected";
        }
    }
    let _ = m;
    "cannot read: not a regular file; a regular file is expected"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_and_fifos_without_reading_them() {
        let e = read_text(Path::new("/dev/zero"), 1 << 10).unwrap_err();
        assert!(e.message.contains("device"), "{e}");
        let e = read_text(Path::new("/dev/urandom"), 1 << 10).unwrap_err();
        assert!(e.message.contains("device"), "{e}");
        // A FIFO with no writer: opening it would block for ever.
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("p");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_text(&fifo, 1 << 10).unwrap_err().to_string();
            assert!(e.contains("FIFO"), "{e}");
        }
    }

    #[test]
    fn reads_binary_files_up_to_the_limit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.et");
        std::fs::write(&p, b"\x00\xff\x01").unwrap();
        assert_eq!(read_bytes(&p, 3).unwrap(), b"\x00\xff\x01");
        assert!(read_bytes(&p, 2).unwrap_err().message.contains("at most"));
        let e = read_bytes(Path::new("/dev/zero"), 1 << 10).unwrap_err();
        assert!(e.message.contains("device"), "{e}");
        assert!(read_bytes(d.path(), 100)
            .unwrap_err()
            .message
            .contains("directory"));
    }

    #[test]
    fn refuses_files_over_the_limit_and_binary_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.toml");
        std::fs::write(&p, "x = 1\n").unwrap();
        assert_eq!(read_text(&p, 6).unwrap(), "x = 1\n");
        assert!(read_text(&p, 5).unwrap_err().message.contains("at most"));
        std::fs::write(&p, b"a = 1\nb = \"\xc3\xa9\xff\"\n").unwrap();
        let e = read_text(&p, 100).unwrap_err();
        assert!(e.message.contains("not UTF-8"), "{e}");
        // Columns count characters: the 2-byte `é` is one.
        assert_eq!(e.at, Some((2, 7)), "{e}");
        let e = read_text(d.path(), 100).unwrap_err();
        assert!(e.message.contains("directory") && e.at.is_none(), "{e}");
        std::fs::write(&p, "a = 1\nb = \"é\0\"\n").unwrap();
        let e = read_text(&p, 100).unwrap_err();
        assert!(e.message.contains("NUL byte"), "{e}");
        assert_eq!(e.at, Some((2, 7)), "{e}");
        assert_eq!(
            e.in_file(Path::new("a.toml")),
            "a.toml:2:7: binary content (a NUL byte): a text file is expected"
        );
    }
}
