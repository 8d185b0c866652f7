//! A session file's lines as `loadEntriesFromFile` sees them: the whole text, split on `\n`, each
//! line read for what the store needs ([`record::read_meta`]); big texts are read in chunks on
//! scoped threads. Unlike the reference, an entry glued after a torn record is read too
//! ([`crate::torn`]).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Result;
use crate::fsio;
use crate::lazy::{LazyScratch, Shapes};
use crate::record::{self, Kind, Meta};
use crate::torn;

/// A physical line: byte range in the text, and its meta when it is a record.
pub type Line = (usize, usize, Option<Meta>);

/// Below this many bytes per thread, one thread reads the whole text (a thread costs ~20 µs).
const PARALLEL_PIECE_BYTES: usize = 1 << 20;
/// At most this many threads read one text.
const MAX_PARSE_THREADS: usize = 8;

/// Chunks of a text per reading thread: a thread that starts late or loses its core for a while
/// leaves the chunks it has not taken to the others, where a fixed piece per thread would keep
/// the caller waiting for it.
const CHUNKS_PER_THREAD: usize = 8;
/// Chunks are at least this big (each costs a little to hand over and join).
const MIN_CHUNK_BYTES: usize = 256 << 10;

/// The lines of `text`, read on `threads` threads (the calling one and scoped helpers; a helper
/// that cannot be made leaves its share to the others): the text is cut at line boundaries into
/// chunks, each thread takes the next chunk nobody has taken until none is left, and the chunks'
/// lines are joined in order.
fn lines_in_chunks(text: &[u8], threads: usize) -> (Vec<Line>, Shapes) {
    if threads < 2 {
        return split_lines(text, 0, text.len());
    }
    let chunks = (threads * CHUNKS_PER_THREAD)
        .min(text.len() / MIN_CHUNK_BYTES)
        .max(threads);
    let mut bounds = vec![0];
    for i in 1..chunks {
        let at = (text.len() * i / chunks).max(*bounds.last().unwrap_or(&0));
        let cut = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |p| at + p + 1);
        bounds.push(cut);
    }
    bounds.push(text.len());
    bounds.dedup();
    let count = bounds.len() - 1;
    let next = AtomicUsize::new(0);
    let take = || {
        let mut read = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= count {
                return read;
            }
            read.push((k, split_lines(text, bounds[k], bounds[k + 1])));
        }
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads.min(count))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, take).ok())
            .collect();
        let mut parts: Vec<Option<(Vec<Line>, Shapes)>> = (0..count).map(|_| None).collect();
        for (k, part) in take() {
            parts[k] = Some(part);
        }
        for helper in helpers {
            match helper.join() {
                Ok(read) => read.into_iter().for_each(|(k, part)| parts[k] = Some(part)),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        let total = parts
            .iter()
            .flatten()
            .map(|(lines, _)| lines.len())
            .sum::<usize>();
        // (Every chunk was taken by a thread that returned; one missing would be read here.)
        let mut parts = parts
            .into_iter()
            .enumerate()
            .map(|(k, part)| part.unwrap_or_else(|| split_lines(text, bounds[k], bounds[k + 1])));
        let (mut lines, mut shapes) = parts.next().unwrap_or_default();
        lines.reserve(total.saturating_sub(lines.len()));
        for (more, more_shapes) in parts {
            let ids = shapes.absorb(&more_shapes);
            lines.extend(more.into_iter().map(|(s, e, mut meta)| {
                if let Some(lazy) = meta.as_mut().and_then(|m| m.lazy.as_mut()) {
                    lazy.shape = ids[lazy.shape as usize];
                }
                (s, e, meta)
            }));
        }
        (lines, shapes)
    })
}

/// The lines of `text[from..to]` (`from` starts a line; a fragment after the last `\n` before
/// `to` counts as a line), with their metas and offsets into the whole text.
fn split_lines(text: &[u8], from: usize, to: usize) -> (Vec<Line>, Shapes) {
    let mut lines = Vec::new();
    let mut lazy = LazyScratch::default();
    let mut start = from;
    for nl in memchr::memchr_iter(b'\n', &text[from..to]) {
        let nl = from + nl;
        lines.push((
            start,
            nl,
            record::read_meta_lazy(&text[start..nl], &mut lazy),
        ));
        start = nl + 1;
    }
    if start < to {
        lines.push((
            start,
            to,
            record::read_meta_lazy(&text[start..to], &mut lazy),
        ));
    }
    (lines, lazy.shapes)
}

/// A file's lines as `loadEntriesFromFile` sees them.
pub struct LoadedFile {
    pub text: Vec<u8>,
    /// Every physical line (split on `\n`), in order; a line after the header that holds an entry
    /// glued after a torn record ([`crate::torn`]) is two: the torn bytes (no record), then the
    /// entry.
    pub lines: Vec<Line>,
    /// The shapes of the lines' lazy values (see [`crate::lazy`]).
    pub shapes: Shapes,
}

impl LoadedFile {
    /// Split and read `text`. The final fragment after the last `\n` counts as a line.
    ///
    /// Reading each line's members is most of an open's time, and lines are independent, so a
    /// text of several megabytes is read by one thread per core, in chunks cut at line boundaries,
    /// and joined in order: the same lines, sooner (a resume waits for it).
    pub fn parse(text: Vec<u8>) -> LoadedFile {
        let threads = (text.len() / PARALLEL_PIECE_BYTES)
            .min(crate::cores::available().unwrap_or(1))
            .min(MAX_PARSE_THREADS);
        let (lines, shapes) = lines_in_chunks(&text, threads);
        let mut loaded = LoadedFile {
            text,
            lines,
            shapes,
        };
        loaded.split_glued();
        loaded
    }

    /// Split each line after the first header that holds an entry glued after a torn record into
    /// the torn bytes and the entry (only lines that are no record are looked at: few, if any).
    fn split_glued(&mut self) {
        let is_header = |l: &Line| l.2.as_ref().is_some_and(|m| m.kind == Kind::Header);
        let Some(header) = self.lines.iter().position(is_header) else {
            return;
        };
        let text = &self.text;
        let found: Vec<(usize, usize, Meta)> = self.lines[header + 1..]
            .iter()
            .enumerate()
            .filter(|(_, l)| l.2.is_none())
            .filter_map(|(i, &(s, e, _))| {
                let (at, meta) = torn::glued_entry(&text[s..e], record::read_meta)?;
                Some((header + 1 + i, s + at, meta))
            })
            .collect();
        if found.is_empty() {
            return;
        }
        let mut lines = Vec::with_capacity(self.lines.len() + found.len());
        let mut found = found.into_iter().peekable();
        for (i, (s, e, meta)) in std::mem::take(&mut self.lines).into_iter().enumerate() {
            match found.next_if(|f| f.0 == i) {
                Some((_, at, entry)) => {
                    lines.push((s, at, None));
                    lines.push((at, e, Some(entry)));
                }
                None => lines.push((s, e, meta)),
            }
        }
        self.lines = lines;
    }

    /// `loadEntriesFromFile` accepts the file: its first record is a header with a string id
    /// (unlike the reference, records marked by [`LoadedFile::mark_leading`] may come first).
    pub fn has_valid_header(&self) -> bool {
        match self.records().find(|(_, m)| m.kind != Kind::Leading) {
            Some((_, m)) => m.kind == Kind::Header && m.header_id_is_string,
            None => false,
        }
    }

    /// Mark the records that lead the header of a session file ([`record::leading_count`]) as
    /// [`Kind::Leading`]. Only for files: entries handed over in memory keep the reference's rules.
    pub fn mark_leading(&mut self) {
        let n = record::leading_count(self.lines.iter().filter_map(|l| l.2.as_ref()));
        for m in self.lines.iter_mut().filter_map(|l| l.2.as_mut()).take(n) {
            m.kind = Kind::Leading;
            m.lazy = None;
        }
    }

    /// How many records were marked by [`LoadedFile::mark_leading`].
    pub fn leading(&self) -> usize {
        self.records()
            .take_while(|(_, m)| m.kind == Kind::Leading)
            .count()
    }

    pub fn records(&self) -> impl Iterator<Item = (&[u8], &Meta)> {
        self.lines
            .iter()
            .filter_map(|(s, e, m)| m.as_ref().map(|m| (&self.text[*s..*e], m)))
    }

    pub fn ends_with_newline(&self) -> bool {
        self.text.is_empty() || self.text.last() == Some(&b'\n')
    }
}

/// Read a session file like `loadEntriesFromFile`: `None` when missing; when the header is valid and
/// the file does not end with a newline, one `\n` is appended to the file so later appends start on a
/// fresh line (nothing else is changed; see [`super::end_torn_tail`]).
pub fn load_file(path: &Path) -> Result<Option<LoadedFile>> {
    match read_file(path)? {
        Some(loaded) => end_tail(path, loaded).map(Some),
        None => Ok(None),
    }
}

/// [`load_file`] without its write: the file read and its lines looked at, a torn tail left as
/// it is (see [`end_tail`]). `Ok(None)` when it is missing.
pub fn read_file(path: &Path) -> Result<Option<LoadedFile>> {
    let Some(text) = fsio::read_all(path)? else {
        return Ok(None);
    };
    let mut loaded = LoadedFile::parse(text);
    loaded.mark_leading();
    Ok(Some(loaded))
}

/// The torn-tail repair of a file read by [`read_file`]: a valid session whose last line has no
/// newline gets one, on disk and in memory.
pub fn end_tail(path: &Path, mut loaded: LoadedFile) -> Result<LoadedFile> {
    if loaded.has_valid_header() && !loaded.ends_with_newline() {
        super::end_torn_tail(path, loaded.text.len() as u64, false)?;
        // The line ends here whoever ended it on disk.
        loaded.text.push(b'\n');
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text of `n` lines of every shape the loader meets: records, a malformed line, a blank
    /// line, a scalar, CRLF, and a fragment without a newline at the end.
    fn mixed_text(n: usize) -> Vec<u8> {
        let mut text = Vec::new();
        text.extend_from_slice(br#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#);
        text.push(b'\n');
        for i in 0..n {
            let line = match i % 7 {
                0 => format!(r#"{{"type":"message","id":"e{i}","parentId":"e{}","timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{}"}}}}"#, i.saturating_sub(1), "x".repeat(i % 300)),
                1 => "{not json".to_string(),
                2 => String::new(),
                3 => "42".to_string(),
                4 => format!("{{\"type\":\"label\",\"id\":\"l{i}\",\"parentId\":null,\"targetId\":\"e0\",\"label\":\"a\"}}\r"),
                _ => format!(r#"{{"type":"custom","id":"c{i}","parentId":"e0","customType":"t","data":{{"n":{i}}}}}"#),
            };
            text.extend_from_slice(line.as_bytes());
            text.push(b'\n');
        }
        text.extend_from_slice(br#"{"type":"message","id":"torn","par"#);
        text
    }

    #[test]
    fn a_big_text_read_in_chunks_gives_the_lines_of_one_sequential_pass() {
        let text = mixed_text(120_000);
        assert!(
            text.len() > 3 * PARALLEL_PIECE_BYTES,
            "big enough to be read on several threads"
        );
        let sequential = split_lines(&text, 0, text.len()).0;
        let loaded = LoadedFile::parse(text.clone());
        assert_eq!(loaded.lines.len(), sequential.len());
        assert_eq!(format!("{:?}", loaded.lines), format!("{sequential:?}"));
        assert_eq!(
            loaded.lines.last().map(|l| l.1),
            Some(text.len()),
            "the torn fragment is the last line"
        );
    }

    #[test]
    fn any_number_of_threads_gives_the_lines_of_one_sequential_pass() {
        let text = mixed_text(20_000);
        let sequential = format!("{:?}", split_lines(&text, 0, text.len()).0);
        for threads in [2, 3, 4, 7, 64] {
            assert_eq!(
                format!("{:?}", lines_in_chunks(&text, threads).0),
                sequential,
                "{threads} threads"
            );
        }
        let short = b"{\"a\":1}\n{\"b\":2}";
        assert_eq!(
            format!("{:?}", lines_in_chunks(short, 8).0),
            format!("{:?}", split_lines(short, 0, short.len()).0)
        );
    }

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;
    const TORN: &str = r#"{"type":"message","id":"t","parentId":"a","message":{"role":"toolResult","content":"cut he"#;

    fn entry(id: &str, parent: &str) -> String {
        format!(r#"{{"type":"custom","id":"{id}","parentId":"{parent}","customType":"x"}}"#)
    }

    #[test]
    fn a_line_of_torn_bytes_and_a_glued_entry_is_read_as_two() {
        let glued = format!("{TORN}{}", entry("b", "a"));
        let text = format!(
            "{HEADER}\n{}\n{glued}\n{}\n",
            entry("a", "s"),
            entry("c", "b")
        );
        let loaded = LoadedFile::parse(text.clone().into_bytes());
        let ids: Vec<&str> = loaded.records().map(|(_, m)| &*m.id).collect();
        assert_eq!(ids, ["\"s\"", "\"a\"", "\"b\"", "\"c\""]);
        let start = text.find(&glued).unwrap();
        let torn = (start, start + TORN.len(), None::<()>);
        let split: Vec<_> = loaded
            .lines
            .iter()
            .map(|l| (l.0, l.1, l.2.as_ref().map(|_| ())))
            .collect();
        assert_eq!(split[2], torn, "the torn bytes: a line that is no record");
        assert_eq!(
            split[3],
            (torn.1, start + glued.len(), Some(())),
            "then the entry"
        );
        assert_eq!(loaded.lines.len(), 5);
    }

    #[test]
    fn before_the_header_a_glued_entry_is_not_read() {
        let text = format!(
            "{TORN}{}\n{HEADER}\n{TORN}{}\n",
            entry("b", "a"),
            entry("c", "s")
        );
        let loaded = LoadedFile::parse(text.into_bytes());
        let ids: Vec<&str> = loaded.records().map(|(_, m)| &*m.id).collect();
        assert_eq!(ids, ["\"s\"", "\"c\""]);
        assert!(loaded.has_valid_header());
        assert_eq!(loaded.lines.len(), 4, "the first line stays one line");
    }

    #[test]
    fn a_text_without_newlines_or_empty_is_one_line_or_none() {
        assert!(LoadedFile::parse(Vec::new()).lines.is_empty());
        let one = LoadedFile::parse(vec![b'x'; 3 * PARALLEL_PIECE_BYTES]);
        assert_eq!(one.lines.len(), 1);
        assert_eq!(
            (one.lines[0].0, one.lines[0].1),
            (0, 3 * PARALLEL_PIECE_BYTES)
        );
    }
}
