//! A streaming pass over a big session file: what the store needs from every line, without
//! keeping the lines (they stay in the file; see `Session::line`).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use crate::fsio::{read_at, read_exact_at};
use crate::json::{self, Value};
use crate::lazy::{self, LazyScratch, Shapes};
use crate::record::{self, Kind, Meta};
use crate::store::records::NO_SKELETON;
use crate::torn;

/// A record found in a file: `(start, end, meta, fingerprint, skeleton)` (byte range of its line
/// without the newline; where its skeleton is in [`Scan::skeletons`], or [`NO_SKELETON`]).
pub type ScannedRec = (usize, usize, Meta, u32, u32);

/// Lines longer than this keep no skeleton (their skeleton is made from the line when asked for).
const MAX_KEPT_SKELETON: usize = 64 << 10;

/// What a scan found: one [`ScannedRec`] per record, in file order.
pub struct Scan {
    pub recs: Vec<ScannedRec>,
    /// The shapes of the records' lazy values (see [`crate::lazy`]).
    pub shapes: Shapes,
    /// The records' skeletons, one after the other.
    pub skeletons: Vec<u8>,
    pub header_id: String,
    /// The first header's `version` (1 when absent; NaN when not a number).
    pub header_version: f64,
    pub ends_with_newline: bool,
    /// The file's length as scanned.
    pub len: u64,
    /// The descriptor the scan read: the records' offsets are offsets of this file, whatever the
    /// path names by the time they are read (another program may rename a file over it).
    pub file: File,
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

/// Files at least this big are scanned by several threads, each over its own part (split at
/// line ends): reading and looking at a line is independent of every other line, and opening a
/// big session is mostly that (134 MB: ~60 ms on one thread).
pub const PARALLEL_SCAN_BYTES: u64 = 16 << 20;

/// At most this many threads scan one file.
const MAX_SCAN_THREADS: usize = 4;

/// Scan `path` line by line (split on `\n`, as the loader does), each line validated once and
/// its lazy values found in that pass (see [`crate::lazy`]). `Ok(None)` when it is missing.
/// Whether a line is canonical is not asked here (that check costs as much as the rest of the
/// scan): `createBranchedSession` checks the lines it copies.
pub fn scan_file(path: &Path) -> Result<Option<Scan>> {
    scan_file_in_parts(path, Split::by_size())
}

/// When a scan splits its file into parts, and into how many.
#[derive(Clone, Copy, Debug)]
struct Split {
    /// Files at least this big are split.
    from_bytes: u64,
    /// At most this many parts (and threads).
    threads: usize,
}

impl Split {
    /// What [`scan_file`] does: files of [`PARALLEL_SCAN_BYTES`] or more on up to
    /// [`MAX_SCAN_THREADS`] threads (no more than the machine has).
    fn by_size() -> Self {
        let threads = crate::cores::available().map_or(1, |n| n.min(MAX_SCAN_THREADS));
        Split {
            from_bytes: PARALLEL_SCAN_BYTES,
            threads,
        }
    }

    /// Never split: the whole file on the calling thread.
    #[cfg(test)]
    fn never() -> Self {
        Split {
            from_bytes: u64::MAX,
            threads: 1,
        }
    }

    /// Always split, whatever the size, into up to `threads` parts.
    #[cfg(test)]
    fn always(threads: usize) -> Self {
        Split {
            from_bytes: 0,
            threads,
        }
    }
}

/// [`scan_file`], split into parts scanned on their own threads as `split` says.
fn scan_file_in_parts(path: &Path, split: Split) -> Result<Option<Scan>> {
    let Split {
        from_bytes: parallel_bytes,
        threads,
    } = split;
    let file = match crate::fsio::open_read(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&e, "open", path)),
    };
    let len = file
        .metadata()
        .map_err(|e| Error::io(&e, "fstat", path))?
        .len();
    let bounds = if len >= parallel_bytes && threads > 1 {
        part_bounds(&file, len, threads).map_err(|e| Error::io(&e, "read", path))?
    } else {
        vec![0, len]
    };
    let scan_part = |k: usize| scan_range(&file, bounds[k], bounds[k + 1]);
    let parts: Vec<std::io::Result<Part>> =
        if bounds.len() == 2 {
            vec![scan_part(0)]
        } else {
            std::thread::scope(|scope| {
                let helpers: Vec<_> = (1..bounds.len() - 1)
                    .map(|k| scope.spawn(move || scan_part(k)))
                    .collect();
                let mut parts = vec![scan_part(0)];
                for h in helpers {
                    parts.push(h.join().unwrap_or_else(|_| {
                        Err(std::io::Error::other("a scanning thread panicked"))
                    }));
                }
                parts
            })
        };
    let mut scan = Scan {
        recs: Vec::new(),
        shapes: Shapes::default(),
        skeletons: Vec::new(),
        header_id: String::new(),
        header_version: 1.0,
        ends_with_newline: true,
        len: bounds.last().copied().unwrap_or(0),
        file,
    };
    let mut header = None;
    for part in parts {
        let part = part.map_err(|e| Error::io(&e, "read", path))?;
        header = header.or_else(|| part.header.clone());
        scan.take_part(part);
    }
    if let Some((id, version)) = header {
        (scan.header_id, scan.header_version) = (id, version);
    }
    let leading = record::leading_count(scan.recs.iter().map(|r| &r.2));
    for r in &mut scan.recs[..leading] {
        r.2.kind = Kind::Leading;
        r.2.lazy = None;
    }
    Ok(Some(scan))
}

impl Scan {
    /// Appends the records of the next part of the file (its shape ids and skeleton offsets made
    /// the scan's).
    fn take_part(&mut self, part: Part) {
        if let Some(nl) = part.ends_with_newline {
            self.ends_with_newline = nl;
        }
        let ids = self.shapes.absorb(&part.shapes);
        let shift = self.skeletons.len() as u32;
        let mut recs = part.recs;
        for r in &mut recs {
            if let Some(lazy) = &mut r.2.lazy {
                lazy.shape = ids[lazy.shape as usize];
            }
            if r.4 != NO_SKELETON {
                r.4 = r.4.checked_add(shift).unwrap_or(NO_SKELETON);
            }
        }
        if self.skeletons.is_empty() {
            self.skeletons = part.skeletons;
        } else {
            self.skeletons.extend_from_slice(&part.skeletons);
        }
        if self.recs.is_empty() {
            self.recs = recs;
        } else {
            self.recs.extend(recs);
        }
    }
}

/// What one part of a file holds: its records, its first header's id and version, and whether
/// its last line ends with a newline (`None`: no line).
struct Part {
    recs: Vec<ScannedRec>,
    shapes: Shapes,
    skeletons: Vec<u8>,
    header: Option<(String, f64)>,
    ends_with_newline: Option<bool>,
}

/// `[0, b1, …, len]`: up to `parts` parts of about equal size, each starting right after a
/// newline (so no line spans two); fewer when lines are long.
fn part_bounds(file: &File, len: u64, parts: usize) -> std::io::Result<Vec<u64>> {
    let mut bounds = vec![0];
    let mut window = vec![0u8; 64 << 10];
    for k in 1..parts {
        let mut at = (len * k as u64 / parts as u64).max(*bounds.last().unwrap_or(&0));
        // The first newline at or after `at`: the next part starts after it.
        let next = loop {
            if at >= len {
                break None;
            }
            let n = window.len().min((len - at) as usize);
            read_exact_at(file, &mut window[..n], at)?;
            if let Some(i) = memchr::memchr(b'\n', &window[..n]) {
                break Some(at + i as u64 + 1);
            }
            at += n as u64;
        };
        match next {
            Some(b) if b < len && b > *bounds.last().unwrap_or(&0) => bounds.push(b),
            _ => break,
        }
    }
    bounds.push(len);
    Ok(bounds)
}

/// Reads `file[pos..end]` through `read_at` (no shared file offset: parts are read at once).
struct RangeReader<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for RangeReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = buf.len().min((self.end - self.pos) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = read_at(self.file, &mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The lines of `file[start..end]` (`start` at a line's beginning; `end` after a newline or at
/// the end of the file).
fn scan_range(file: &File, start: u64, end: u64) -> std::io::Result<Part> {
    let reader = RangeReader {
        file,
        pos: start,
        end,
    };
    let mut chunks = LineChunks::new(reader, SCAN_CHUNK_BYTES);
    let mut part = Part {
        recs: Vec::new(),
        shapes: Shapes::default(),
        skeletons: Vec::new(),
        header: None,
        ends_with_newline: None,
    };
    let mut lazy = LazyScratch::default();
    while let Some((base, chunk)) = chunks.next_chunk()? {
        for (at, line, has_nl) in chunk_lines(chunk) {
            part.ends_with_newline = Some(has_nl);
            // A part after the first reads glued entries from its first line: the first part,
            // megabytes long, holds the header of any session file. (If it does not, an entry
            // read before the header fails the file's header check, and the file is read whole,
            // by the exact rule, instead.)
            let after_header = start > 0 || part.header.is_some();
            // (An entry glued after torn bytes is rare: it is read whole, with no lazy values.)
            let read = match record::read_meta_lazy(line, &mut lazy) {
                Some(meta) => Some((0, meta)),
                None if after_header => torn::glued_entry(line, record::read_meta),
                None => None,
            };
            let Some((skip, meta)) = read else {
                continue;
            };
            let body = &line[skip..];
            if part.header.is_none() && meta.kind == Kind::Header {
                part.header = Some(header_of(body));
            }
            let check = super::fingerprint(body);
            let rec_start = (start + base) as usize + at + skip;
            let skel = keep_skeleton(body, &meta, &mut part.skeletons);
            part.recs
                .push((rec_start, rec_start + body.len(), meta, check, skel));
        }
    }
    part.shapes = lazy.shapes;
    Ok(part)
}

/// A header line's `id` and `version` (1 when absent; NaN when not a number).
/// Keeps the skeleton of a line in `skeletons` (see [`crate::lazy`]); where it is, or
/// [`NO_SKELETON`] for a line too long to keep.
fn keep_skeleton(line: &[u8], meta: &Meta, skeletons: &mut Vec<u8>) -> u32 {
    let at = skeletons.len();
    match &meta.lazy {
        Some(lazy) if lazy::skeleton_len(line.len(), lazy) <= MAX_KEPT_SKELETON => {
            lazy::push_skeleton(line, lazy, skeletons)
        }
        None if line.len() <= MAX_KEPT_SKELETON => skeletons.extend_from_slice(line),
        _ => return NO_SKELETON,
    }
    u32::try_from(at).unwrap_or(NO_SKELETON)
}

fn header_of(body: &[u8]) -> (String, f64) {
    let mut out = (String::new(), 1.0);
    if let Ok(v) = json::parse(body) {
        if let Some(Value::String(id)) = v.get("id") {
            out.0 = id.to_string_lossy();
        }
        out.1 = match v.get("version") {
            None | Some(Value::Null) => 1.0,
            Some(Value::Number(x)) => *x,
            Some(_) => f64::NAN,
        };
    }
    out
}

#[cfg(test)]
mod tests;
