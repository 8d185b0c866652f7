//! A streaming pass over a big session file: what the store needs from every line, without
//! keeping the lines (they stay in the file; see `Session::line`).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use crate::json::{self, Value};
use crate::record::{self, Kind, Meta};

/// A record found in a file: `(start, end, meta, fingerprint)` (byte range of its line without
/// the newline).
pub type ScannedRec = (usize, usize, Meta, u32);

/// What a scan found: one [`ScannedRec`] per record, in file order.
pub struct Scan {
    pub recs: Vec<ScannedRec>,
    pub header_id: String,
    /// The first header's `version` (1 when absent; NaN when not a number).
    pub header_version: f64,
    pub ends_with_newline: bool,
}

/// Reads a stream in big chunks of whole lines through one reused buffer, so lines are looked at
/// where they were read to (no per-line copy, no fresh pages per chunk).
pub struct LineChunks<R> {
    src: R,
    buf: Vec<u8>,
    /// `buf[..consumed]` was handed out by the last call.
    consumed: usize,
    /// `buf[..filled]` holds data.
    filled: usize,
    /// Stream offset of `buf[0]`.
    offset: u64,
    eof: bool,
}

impl<R: Read> LineChunks<R> {
    pub fn new(src: R, capacity: usize) -> Self {
        LineChunks {
            src,
            buf: vec![0; capacity.max(1)],
            consumed: 0,
            filled: 0,
            offset: 0,
            eof: false,
        }
    }

    /// The next run of whole lines, each ending in `\n` (only the stream's final fragment may
    /// lack it), with the stream offset of its first byte; `None` at the end. A line longer than
    /// the buffer grows it.
    pub fn next_chunk(&mut self) -> std::io::Result<Option<(u64, &[u8])>> {
        if self.consumed > 0 {
            self.buf.copy_within(self.consumed..self.filled, 0);
            self.filled -= self.consumed;
            self.offset += self.consumed as u64;
            self.consumed = 0;
        }
        // The bytes kept from the last call hold no newline.
        let mut searched = self.filled;
        loop {
            if let Some(nl) = memchr::memrchr(b'\n', &self.buf[searched..self.filled]) {
                self.consumed = searched + nl + 1;
                return Ok(Some((self.offset, &self.buf[..self.consumed])));
            }
            searched = self.filled;
            if self.eof {
                if self.filled == 0 {
                    return Ok(None);
                }
                self.consumed = self.filled;
                return Ok(Some((self.offset, &self.buf[..self.filled])));
            }
            if self.filled == self.buf.len() {
                let grown = self.buf.len() * 2;
                self.buf.resize(grown, 0);
            }
            match self.src.read(&mut self.buf[self.filled..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// The lines of a chunk from [`LineChunks`]: `(offset in the chunk, line without its newline,
/// whether a newline follows)`.
pub fn chunk_lines(chunk: &[u8]) -> impl Iterator<Item = (usize, &[u8], bool)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= chunk.len() {
            return None;
        }
        let start = at;
        match memchr::memchr(b'\n', &chunk[at..]) {
            Some(k) => {
                at += k + 1;
                Some((start, &chunk[start..start + k], true))
            }
            None => {
                at = chunk.len();
                Some((start, &chunk[start..], false))
            }
        }
    })
}

/// Buffer size of the streaming copies (fork, branch).
pub const CHUNK_BYTES: usize = 8 << 20;

/// Buffer size of the scan on open: reads of 1 MiB cost no more per byte than bigger ones, and the
/// scan's peak memory is what a huge session's open adds to the process.
pub const SCAN_CHUNK_BYTES: usize = 1 << 20;

/// Scan `path` line by line (split on `\n`, as the loader does). `Ok(None)` when it is missing.
/// Records also learn whether they are canonical ([`Meta::canonical`]), which lets
/// `createBranchedSession` copy them without looking at them again.
pub fn scan_file(path: &Path) -> Result<Option<Scan>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&e, "open", path)),
    };
    let mut chunks = LineChunks::new(file, SCAN_CHUNK_BYTES);
    let mut scan = Scan {
        recs: Vec::new(),
        header_id: String::new(),
        header_version: 1.0,
        ends_with_newline: true,
    };
    let mut seen_header = false;
    while let Some((base, chunk)) = chunks
        .next_chunk()
        .map_err(|e| Error::io(&e, "read", path))?
    {
        for (at, body, has_nl) in chunk_lines(chunk) {
            scan.ends_with_newline = has_nl;
            let Some(meta) = record::read_meta_canonical(body) else {
                continue;
            };
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
            let check = super::fingerprint(body);
            let start = base as usize + at;
            scan.recs.push((start, start + body.len(), meta, check));
        }
    }
    let leading = record::leading_count(scan.recs.iter().map(|r| &r.2));
    for r in &mut scan.recs[..leading] {
        r.2.kind = Kind::Leading;
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
