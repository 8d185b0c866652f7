//! Finding sessions without loading them: the bounded header scan, most-recent and by-id
//! lookups, and the session files of a directory or of the whole sessions root, in the order the
//! reference lists them.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::json::{self, Value};
use crate::paths;

/// At most this many bytes are read to find a header.
pub const MAX_HEADER_SCAN_BYTES: usize = 1024 * 1024;

/// A session header found by the bounded scan.
#[derive(Debug, Clone)]
pub struct Header {
    pub id: String,
    pub cwd: Option<String>,
    pub value: Value,
}

/// Why a header scan did not produce a header.
#[derive(Debug)]
pub enum ScanError {
    /// 1 MiB read without finding a parsed line.
    Limit,
    Io(std::io::Error),
}

/// Can this parsed record come before a header? (The listing side of `record::may_lead`.)
pub(crate) fn may_lead(v: &Value) -> bool {
    matches!(v, Value::Object(_))
        && !matches!(v.get("type"), Some(Value::String(t)) if crate::record::is_pi_type(&t.to_string_lossy()))
        && v.get("id").is_none()
        && v.get("parentId").is_none()
}

/// `None`: keep looking (blank, unparseable or falsy lines, and records that may lead a header);
/// `Some(None)`: not a session; `Some(Some(_))`: the header.
fn header_candidate(line: &[u8]) -> Option<Option<Header>> {
    let v = json::parse(line).ok()?;
    if !v.is_truthy() || may_lead(&v) {
        return None;
    }
    let is_header = matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"));
    match (is_header, v.get("id")) {
        (true, Some(Value::String(id))) => {
            let id = id.to_string_lossy();
            let cwd = match v.get("cwd") {
                Some(Value::String(c)) => Some(c.to_string_lossy()),
                _ => None,
            };
            Some(Some(Header { id, cwd, value: v }))
        }
        _ => Some(None),
    }
}

/// Read a file's header looking at no more than 1 MiB: the first line that parses decides.
pub fn read_header(path: &Path) -> Result<Option<Header>, ScanError> {
    let f = crate::fsio::open_read(path).map_err(ScanError::Io)?;
    header_from(f)
}

/// The first read of a header scan; each next read is twice the one before, up to the limit.
/// A header is one line, so most scans end after the first read: reading the whole MiB first
/// cost every open of a big session a megabyte, and a lookup by id one per file it looked at.
const FIRST_HEADER_READ: usize = 4 * 1024;

/// [`read_header`] of a stream: reads only as far as the line that decides (or the limit).
fn header_from(mut r: impl Read) -> Result<Option<Header>, ScanError> {
    let mut buf: Vec<u8> = Vec::new();
    // `buf[start..]` is the line being read; `buf[..searched]` has been looked at for newlines.
    let (mut start, mut searched) = (0, 0);
    let mut want = FIRST_HEADER_READ;
    loop {
        // A byte past the limit says the scan went by it.
        let ask = want.min(MAX_HEADER_SCAN_BYTES + 1 - buf.len());
        // Room for all of it first: read_to_end then reads straight into it, in one call when
        // the reader gives that much (without room it probes with small reads).
        buf.reserve(ask);
        let got = (&mut r)
            .take(ask as u64)
            .read_to_end(&mut buf)
            .map_err(ScanError::Io)?;
        let end = buf.len().min(MAX_HEADER_SCAN_BYTES);
        for nl in memchr::memchr_iter(b'\n', &buf[searched..end]) {
            let nl = searched + nl;
            if let Some(decided) = header_candidate(&buf[start..nl]) {
                return Ok(decided);
            }
            start = nl + 1;
        }
        searched = end;
        // Fewer bytes than asked for: the end of the file.
        if got < ask || buf.len() > MAX_HEADER_SCAN_BYTES {
            break;
        }
        want = want.saturating_mul(2);
    }
    if buf.len() > MAX_HEADER_SCAN_BYTES {
        return Err(ScanError::Limit);
    }
    Ok(header_candidate(&buf[start..]).flatten())
}

/// Discovery treats every scan failure as "not a session".
pub fn read_header_for_discovery(path: &Path) -> Option<Header> {
    read_header(path).ok().flatten()
}

fn cwd_matches(header: &Header, resolved_cwd: &str) -> bool {
    crate::places::cwd_matches(header.cwd.as_deref().unwrap_or(""), resolved_cwd)
}

/// The `*.jsonl` names of `dir` in `order`, after putting right what killed writers left there
/// (a session left under a hidden name by a writer killed while replacing it is listed again:
/// see [`crate::fsio::recover`]).
fn jsonl_names(dir: &Path, order: NameOrder) -> std::io::Result<Vec<String>> {
    let mut names = crate::fsio::scan_recovered(dir, |dir| -> std::io::Result<_> {
        let mut out = Vec::new();
        let mut leftovers = false;
        for e in fs::read_dir(dir)? {
            let name = e?.file_name().to_string_lossy().into_owned();
            if name.ends_with(".jsonl") {
                out.push(name);
            } else {
                leftovers |= crate::fsio::is_leftover(&name);
            }
        }
        Ok((out, leftovers))
    })?;
    order.apply(&mut names);
    Ok(names)
}

/// The order in which the lookups below meet a directory's sessions: that of `readdirSync` in the
/// runtime the store serves, which decides which of two sessions with the same id `findById`
/// finds, and which of two equally recent ones `continueRecent` opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameOrder {
    /// Sorted by the names' bytes: Node off Windows (libuv sorts the names it reads).
    Bytes,
    /// As the system lists them (APFS and ext4: neither name nor creation order): Node on
    /// Windows, and Bun.
    System,
}

impl NameOrder {
    fn apply(self, names: &mut [String]) {
        if self == NameOrder::Bytes {
            names.sort_unstable();
        }
    }
}

/// `findMostRecentSession(dir, cwd?)`: newest by mtime whose header is valid (and whose cwd
/// resolves to `resolved_cwd` when given). Any directory or stat error gives `None`.
pub fn find_most_recent(
    dir: &Path,
    resolved_cwd: Option<&str>,
    order: NameOrder,
) -> Option<PathBuf> {
    let names = jsonl_names(dir, order).ok()?;
    let mut files = Vec::with_capacity(names.len());
    for n in names {
        let p = paths::join_in(dir, &n);
        let mtime = file_mtime_ms(&p)?;
        files.push((p, mtime));
    }
    // As the reference's `b.mtimeMs - a.mtimeMs`: times that make one double are a tie, and the
    // stable sort keeps them in `order`, though the file system may tell them apart.
    files.sort_by(|a, b| b.1.total_cmp(&a.1));
    files
        .into_iter()
        .map(|(p, _)| p)
        .find(|p| match read_header_for_discovery(p) {
            Some(h) => resolved_cwd.is_none_or(|c| cwd_matches(&h, c)),
            None => false,
        })
}

/// `SessionManager.findById`: the first `.jsonl` in `order` whose header id equals `id`.
pub fn find_by_id(
    dir: &Path,
    id: &str,
    resolved_cwd: Option<&str>,
    order: NameOrder,
) -> Option<PathBuf> {
    jsonl_names(dir, order)
        .ok()?
        .into_iter()
        .map(|n| paths::join_in(dir, &n))
        .find(|p| match read_header_for_discovery(p) {
            Some(h) => h.id == id && resolved_cwd.is_none_or(|c| cwd_matches(&h, c)),
            None => false,
        })
}

/// Descending order of file names close to `localeCompare`: case-insensitive first, punctuation
/// before digits before letters; for generated names this is plain descending byte order.
pub fn sort_names_desc(names: &mut [String]) {
    fn class(c: char) -> u8 {
        if c.is_alphabetic() {
            2
        } else if c.is_numeric() {
            1
        } else {
            0
        }
    }
    // Keys are built once per name (thousands of names, each compared ~log n times).
    type Key = (Vec<(u8, char)>, Vec<bool>);
    let key = |a: &String| -> Key {
        (
            a.chars()
                .map(|c| (class(c), c.to_lowercase().next().unwrap_or(c)))
                .collect(),
            a.chars().map(char::is_uppercase).collect(),
        )
    };
    // Descending: case-insensitive first; at equal letters lower case sorts before upper case
    // (ICU tertiary order), i.e. `false` (lower) after `true` in the reversed comparison.
    names.sort_by_cached_key(|a| std::cmp::Reverse(key(a)));
}

/// `.jsonl` files of one directory, name-descending (the order `list` summarizes them in).
pub fn list_dir_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut names = jsonl_names(dir, NameOrder::System)?;
    sort_names_desc(&mut names);
    Ok(names.into_iter().map(|n| paths::join_in(dir, &n)).collect())
}

/// Candidates of `listAll()` under the sessions root: every `.jsonl` in every subdirectory (or
/// symlink), with its mtime (ms) when stat works; newest first, then base name descending, then
/// in `order` (directories first).
pub fn list_all_candidates(root: &Path, order: NameOrder) -> Vec<(PathBuf, Option<f64>)> {
    let Ok(rd) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() || ft.is_symlink() {
            dirs.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    // Equally recent files with one name keep the order of their directories, then of theirs.
    order.apply(&mut dirs);
    let mut files = Vec::new();
    for d in dirs {
        let dir = paths::join_in(root, &d);
        if let Ok(names) = jsonl_names(&dir, order) {
            files.extend(names.into_iter().map(|n| paths::join_in(&dir, &n)));
        }
    }
    let mut c: Vec<(PathBuf, Option<f64>)> = files
        .into_iter()
        .map(|p| {
            let m = file_mtime_ms(&p);
            (p, m)
        })
        .collect();
    c.sort_by(|a, b| {
        let ma = a.1.unwrap_or(f64::NEG_INFINITY);
        let mb = b.1.unwrap_or(f64::NEG_INFINITY);
        mb.total_cmp(&ma).then_with(|| {
            let mut v = [base(&a.0), base(&b.0)];
            let (na, nb) = (v[0].clone(), v[1].clone());
            sort_names_desc(&mut v);
            if na == nb {
                std::cmp::Ordering::Equal
            } else if v[0] == na {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        })
    });
    c
}

fn base(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A file time as Node's (and Bun's) `Stats.mtimeMs`: `sec * 1000 + nsec / 1e6` in doubles, from
/// the time's whole seconds and its nanoseconds into that second (`0..1e9`, before 1970 too).
/// The same time as one double of seconds times 1000 is another double for about a quarter of
/// times (a unit in the last place), which moves `Math.round` across a half millisecond and
/// splits ties the reference sees.
pub fn mtime_ms(t: std::time::SystemTime) -> f64 {
    let (sec, nsec) = match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as f64, d.subsec_nanos()),
        Err(e) => {
            let d = e.duration();
            match d.subsec_nanos() {
                0 => (-(d.as_secs() as f64), 0),
                n => (-(d.as_secs() as f64) - 1.0, 1_000_000_000 - n),
            }
        }
    };
    sec * 1000.0 + f64::from(nsec) / 1e6
}

/// `statSync(path).mtimeMs` ([`mtime_ms`] of the file's modification time); `None` when either
/// cannot be had.
pub fn file_mtime_ms(path: &Path) -> Option<f64> {
    fs::metadata(path).ok()?.modified().ok().map(mtime_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    /// `text`, then `x` bytes without end, at most `chunk` bytes a read; counts what was read.
    struct Endless<'a> {
        text: &'a [u8],
        chunk: usize,
        read: usize,
    }

    impl Read for Endless<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.chunk);
            for (k, b) in buf[..n].iter_mut().enumerate() {
                *b = self.text.get(self.read + k).copied().unwrap_or(b'x');
            }
            self.read += n;
            Ok(n)
        }
    }

    #[test]
    fn a_header_scan_reads_no_further_than_the_first_read_after_the_header() {
        let text = format!("{HEADER}\n");
        let mut r = Endless {
            text: text.as_bytes(),
            chunk: usize::MAX,
            read: 0,
        };
        let h = header_from(&mut r).unwrap().unwrap();
        assert_eq!((h.id.as_str(), h.cwd.as_deref()), ("s1", Some("/p")));
        assert!(r.read <= FIRST_HEADER_READ, "read {} bytes", r.read);
    }

    #[test]
    fn lines_cut_by_short_reads_decide_as_whole_lines() {
        // Blank, unparseable and leading lines are passed over; an entry before a header decides.
        let lead = r#"{"note":"an extension's line"}"#;
        for (text, id) in [
            (format!("\n{{not json\n{lead}\n{HEADER}\n"), Some("s1")),
            (
                format!("{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}}\n{HEADER}\n"),
                None,
            ),
        ] {
            for chunk in [1, 3, 64] {
                let mut r = Endless {
                    text: text.as_bytes(),
                    chunk,
                    read: 0,
                };
                let h = header_from(&mut r).unwrap();
                assert_eq!(
                    h.map(|h| h.id).as_deref(),
                    id,
                    "{text:?} read {chunk} at a time"
                );
            }
        }
    }

    #[test]
    fn the_scan_limit_is_a_mebibyte_of_lines_with_an_unended_last_one_at_the_end_of_the_file() {
        // A header line of exactly the limit, at the end of the file: the last line decides.
        let pad = MAX_HEADER_SCAN_BYTES - HEADER.len();
        let exact = HEADER.replace(r#""/p""#, &format!("\"/p{}\"", "q".repeat(pad)));
        assert_eq!(exact.len(), MAX_HEADER_SCAN_BYTES);
        let h = header_from(exact.as_bytes()).unwrap().unwrap();
        assert_eq!(h.id, "s1");
        // The same line with its newline, or one byte more: past the limit.
        for more in ["\n", "x"] {
            let over = format!("{exact}{more}");
            assert!(matches!(
                header_from(over.as_bytes()),
                Err(ScanError::Limit)
            ));
        }
        // Endless junk without a newline goes by the limit after reading one byte past it.
        let mut r = Endless {
            text: b"",
            chunk: usize::MAX,
            read: 0,
        };
        assert!(matches!(header_from(&mut r), Err(ScanError::Limit)));
        assert_eq!(r.read, MAX_HEADER_SCAN_BYTES + 1);
        // A file shorter than the limit whose only line is junk has no header.
        assert!(header_from(&b"{not json"[..]).unwrap().is_none());
    }

    fn at(sec: i64, nsec: u32) -> std::time::SystemTime {
        use std::time::{Duration, UNIX_EPOCH};
        match u64::try_from(sec) {
            Ok(s) => UNIX_EPOCH + Duration::new(s, nsec),
            Err(_) => UNIX_EPOCH - Duration::new(sec.unsigned_abs(), 0) + Duration::new(0, nsec),
        }
    }

    #[test]
    fn mtime_ms_is_the_double_node_makes_of_seconds_and_nanoseconds() {
        // Node 22/24/26 and Bun give these `mtimeMs` for these times (`touch -d @sec.nsec`);
        // seconds as one double times 1000 give 1660387520285.4998 and 1759075653409.5 instead.
        assert_eq!(
            mtime_ms(at(1_660_387_520, 285_499_926)),
            1_660_387_520_285.5
        );
        assert_eq!(
            mtime_ms(at(1_759_075_653, 409_499_856)),
            1_759_075_653_409.499_8
        );
        assert_eq!(mtime_ms(at(1_700_000_000, 0)), 1_700_000_000_000.0);
        // Before 1970 the nanoseconds still count up from the whole second below.
        assert_eq!(mtime_ms(at(-1, 500_000_000)), -500.0);
        assert_eq!(mtime_ms(at(-2, 0)), -2000.0);
        // 100 ns apart (an NTFS tick) is less than a unit in the last place today: one double.
        assert_eq!(
            mtime_ms(at(1_700_000_000, 0)),
            mtime_ms(at(1_700_000_000, 100))
        );
    }

    #[test]
    fn find_most_recent_takes_times_of_one_double_as_equally_recent() {
        let dir = crate::testing::temp_dir("recent-tie");
        let header = |id: &str| HEADER.replace("\"s1\"", &format!("\"{id}\"")) + "\n";
        for (name, nsec) in [("a.jsonl", 0), ("b.jsonl", 100), ("c.jsonl", 0)] {
            let p = dir.join(name);
            fs::write(&p, header(name)).unwrap();
            let f = fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(at(1_700_000_000, nsec)).unwrap();
        }
        // b is 100 ns newer where the file system keeps nanoseconds, but not in milliseconds as
        // a double: the three are a tie, and the first in name order wins.
        let found = find_most_recent(&dir, None, NameOrder::Bytes);
        assert_eq!(found, Some(dir.join("a.jsonl")));
        // A whole millisecond is newer.
        let f = fs::File::options()
            .write(true)
            .open(dir.join("c.jsonl"))
            .unwrap();
        f.set_modified(at(1_700_000_000, 1_000_000)).unwrap();
        let found = find_most_recent(&dir, None, NameOrder::Bytes);
        assert_eq!(found, Some(dir.join("c.jsonl")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
