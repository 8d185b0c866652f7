//! A streaming pass over a big session file: what the store needs from every line, without
//! keeping the lines (they stay in the file; see `Session::line`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::error::{Error, Result};
use crate::json::{self, Value};
use crate::record::{self, Kind, Meta};

/// What a scan found: `(start, end, meta, fingerprint)` per record, in file order.
pub struct Scan {
    pub recs: Vec<(usize, usize, Meta, u32)>,
    pub header_id: String,
    /// The first header's `version` (1 when absent; NaN when not a number).
    pub header_version: f64,
    pub ends_with_newline: bool,
}

/// Scan `path` line by line (split on `\n`, as the loader does). `Ok(None)` when it is missing.
pub fn scan_file(path: &Path) -> Result<Option<Scan>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&e, "open", path)),
    };
    let mut reader = BufReader::with_capacity(8 << 20, file);
    let mut line = Vec::with_capacity(1 << 16);
    let mut offset = 0usize;
    let mut scan = Scan {
        recs: Vec::new(),
        header_id: String::new(),
        header_version: 1.0,
        ends_with_newline: true,
    };
    let mut seen_header = false;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(&e, "read", path))?;
        if n == 0 {
            break;
        }
        let has_nl = line.last() == Some(&b'\n');
        let body = if has_nl { &line[..n - 1] } else { &line[..] };
        scan.ends_with_newline = has_nl;
        if let Some(meta) = record::read_meta(body) {
            if !seen_header && meta.kind == Kind::Header {
                seen_header = true;
                if let Ok(v) = json::parse(body) {
                    if let Some(Value::String(id)) = v.get("id") {
                        scan.header_id = id.to_string_lossy();
                    }
                    scan.header_version = match v.get("version") {
                        None | Some(Value::Null) => 1.0,
                        Some(Value::Number(x)) => *x,
                        Some(_) => f64::NAN,
                    };
                }
            }
            let check = crate::session::Session::line_fingerprint(body);
            scan.recs.push((offset, offset + body.len(), meta, check));
        }
        offset += n;
    }
    Ok(Some(scan))
}

/// Read exactly `buf.len()` bytes at `offset`.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            let n = file.seek_read(&mut buf[done..], offset + done as u64)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += n;
        }
        Ok(())
    }
}
