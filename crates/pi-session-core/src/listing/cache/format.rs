//! The cache file's layout: a format header line, the record blocks, a zstd-compressed index of
//! one key line per record, and a fixed-size trailer pointing at the index; and the text of a
//! record and of an index line (written and parsed here only).

use std::collections::HashMap;
use std::fs;

use super::blocks::{read_block, RecordAt};
use super::{Cached, Damaged, Entry, Hit, Stamp, Stored, StoredSummary};
use crate::fsio::read_exact_at;
use crate::json::{self, JsStr, Value};
use crate::listing::SummaryInfo;

/// Bump when the summary format changes: old caches are then ignored.
pub(super) const FORMAT: &str = "pi-session-list-cache/8";

/// Length of the fixed-size last line: `{"index":<offset>}` padded with spaces.
pub(super) const TRAILER: usize = 40;

impl Hit {
    /// The summary of a cache-file line (`Err(Damaged)`: read the file again).
    pub fn line(text: &[u8]) -> Result<Option<StoredSummary<'_>>, Damaged> {
        let members = json::top_level_members(text)
            .map_err(|_| Damaged)?
            .ok_or(Damaged)?;
        let get = |k: &str| {
            members
                .iter()
                .rev()
                .find(|(key, _)| key.as_escaped() == k)
                .map(|(_, r)| &text[r.clone()])
        };
        let v = get("v").ok_or(Damaged)?;
        if v == b"null" {
            return Ok(None);
        }
        if v.first() != Some(&b'{') {
            return Err(Damaged);
        }
        // The texts stay bytes: the decoder checks UTF-8 where it meets non-ASCII.
        let inner = |k: &str| -> Result<&[u8], Damaged> {
            let raw = get(k).ok_or(Damaged)?;
            raw.strip_prefix(b"\"")
                .and_then(|r| r.strip_suffix(b"\""))
                .ok_or(Damaged)
        };
        let info = parse_info(v).ok_or(Damaged)?;
        Ok(Some((info, inner("f")?, inner("a")?)))
    }
}

/// A summary's fields as a record stores them (the `v` member): `{path, id?, cwd, name?,
/// parentSessionPath?, created?, act?, actPending, mtimeMs, messageCount}`, values as the file
/// states them. [`parse_info`] reads it back.
pub(crate) fn write_info(s: &SummaryInfo, out: &mut String) {
    out.push('{');
    s.write_head_members(out);
    s.write_activity_members(out);
    out.push_str(",\"messageCount\":");
    out.push_str(&s.message_count.to_string());
    out.push('}');
}

/// The fields [`write_info`] wrote (`None`: not such a text).
pub(super) fn parse_info(text: &[u8]) -> Option<SummaryInfo> {
    let v = json::parse(text).ok()?;
    let string = |k: &str| match v.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let number = |k: &str| match v.get(k) {
        Some(Value::Number(n)) => Some(*n),
        _ => None,
    };
    let message_count = number("messageCount")?;
    Some(SummaryInfo {
        path: string("path")?.to_string_lossy(),
        id: v.get("id").cloned(),
        cwd: string("cwd")?,
        name: string("name"),
        parent_session_path: v.get("parentSessionPath").cloned(),
        created: v.get("created").cloned(),
        activity: number("act"),
        pending_times: match v.get("actPending")? {
            Value::Array(items) => items.clone(),
            _ => return None,
        },
        mtime_ms: number("mtimeMs")?,
        message_count: (message_count >= 0.0 && message_count.fract() == 0.0)
            .then_some(message_count as u64)?,
    })
}

/// The index of a cache file: header check, trailer, then one key line per record (a zstd frame).
pub(super) fn read_index(f: &fs::File) -> Option<HashMap<String, Entry>> {
    let size = f.metadata().ok()?.len();
    let mut head = vec![0u8; (FORMAT.len() + 16).min(size as usize)];
    read_exact_at(f, &mut head, 0).ok()?;
    let header_end = memchr::memchr(b'\n', &head)?;
    let header_ok = json::parse(&head[..header_end])
        .is_ok_and(|h| matches!(h.get("format"), Some(Value::String(v)) if v.eq_str(FORMAT)));
    if !header_ok || size < TRAILER as u64 {
        return None;
    }
    let mut trailer = [0u8; TRAILER];
    read_exact_at(f, &mut trailer, size - TRAILER as u64).ok()?;
    let index_at = match json::parse(trailer.strip_suffix(b"\n")?).ok()?.get("index") {
        Some(Value::Number(n)) if *n >= 0.0 && n.fract() == 0.0 => *n as u64,
        _ => return None,
    };
    let index_end = size - TRAILER as u64;
    if index_at > index_end {
        return None;
    }
    let index = read_block(f, &(index_at..index_end))?;
    let mut entries = HashMap::new();
    for (n, line) in index
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let (path, stamp, at) = parse_index_line(line)?;
        if at.block.end > index_at || at.block.start > at.block.end {
            return None;
        }
        let entry = Entry {
            stamp,
            value: Stored::At(at),
            used: false,
            order: n as u64,
        };
        entries.insert(path, entry);
    }
    Some(entries)
}

/// `{"p":path,"s":size,"m":"mtime ns","c":"ctime ns","i":inode,"b":block offset,"z":block
/// length,"o":offset in block,"n":length,"h":checksum}`
pub(super) fn write_index_line(path: &str, stamp: Stamp, at: &RecordAt, out: &mut String) {
    write_key(path, stamp, out);
    out.push_str(&format!(
        ",\"b\":{},\"z\":{},\"o\":{},\"n\":{},\"h\":{}}}\n",
        at.block.start,
        at.block.end - at.block.start,
        at.record.start,
        at.record.end - at.record.start,
        at.checksum
    ));
}

fn parse_index_line(line: &[u8]) -> Option<(String, Stamp, RecordAt)> {
    let (path, stamp, rest) = parse_key_prefix(line)?;
    let mut rest = rest;
    let mut field = |name: &[u8]| -> Option<u64> {
        rest = rest
            .strip_prefix(b",")?
            .strip_prefix(name)?
            .strip_prefix(b":")?;
        let end = rest.iter().position(|c| !c.is_ascii_digit())?;
        let n = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
        rest = &rest[end..];
        Some(n)
    };
    let block = field(b"\"b\"")?;
    let block_len = field(b"\"z\"")?;
    let start = usize::try_from(field(b"\"o\"")?).ok()?;
    let len = usize::try_from(field(b"\"n\"")?).ok()?;
    let checksum = field(b"\"h\"")?;
    let at = RecordAt {
        block: block..block.checked_add(block_len)?,
        record: start..start.checked_add(len)?,
        checksum,
    };
    (rest == b"}").then_some((path, stamp, at))
}

fn write_key(path: &str, stamp: Stamp, out: &mut String) {
    out.push_str("{\"p\":");
    json::write_js_string(&JsStr::from_str(path), out);
    out.push_str(&format!(
        ",\"s\":{},\"m\":\"{}\",\"c\":\"{}\",\"i\":{}",
        stamp.size, stamp.mtime_ns, stamp.ctime_ns, stamp.ino
    ));
}

/// `{"p":path,"s":size,"m":"mtime ns","c":"ctime ns","i":inode,"v":meta|null,"f":"first","a":"all"}`
/// (path and stamp first: loading reads only those).
pub(super) fn write_entry(path: &str, stamp: Stamp, summary: &Cached, out: &mut String) {
    write_key(path, stamp, out);
    out.push_str(",\"v\":");
    match summary {
        None => out.push_str("null"),
        Some(s) => {
            write_info(&s.info, out);
            out.push_str(",\"f\":\"");
            out.push_str(&s.first_message);
            out.push_str("\",\"a\":\"");
            out.push_str(&s.all_text);
            out.push('"');
        }
    }
    out.push_str("}\n");
}

/// Path and stamp from the start of a cache line, as `write_entry` lays it out (anything else
/// is treated as damaged).
pub(super) fn parse_key(line: &[u8]) -> Option<(String, Stamp)> {
    parse_key_prefix(line).map(|(p, s, _)| (p, s))
}

/// [`parse_key`] and the bytes after the key.
fn parse_key_prefix(line: &[u8]) -> Option<(String, Stamp, &[u8])> {
    let rest = line.strip_prefix(b"{\"p\":\"")?;
    // The path string: up to the first unescaped quote.
    let mut i = 0;
    loop {
        let k = memchr::memchr2(b'"', b'\\', &rest[i..])?;
        if rest[i + k] == b'\\' {
            i += k + 2;
        } else {
            i += k;
            break;
        }
    }
    let path = match json::parse(line.get(5..7 + i)?).ok()? {
        Value::String(ref p) => p.to_string_lossy(),
        _ => return None,
    };
    let mut rest = rest.get(i + 1..)?;
    let mut field = |name: &[u8], quoted: bool| -> Option<i128> {
        rest = rest
            .strip_prefix(b",")?
            .strip_prefix(name)?
            .strip_prefix(b":")?;
        if quoted {
            rest = rest.strip_prefix(b"\"")?;
        }
        let end = rest
            .iter()
            .position(|c| !(c.is_ascii_digit() || *c == b'-'))?;
        let n = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
        rest = &rest[end..];
        if quoted {
            rest = rest.strip_prefix(b"\"")?;
        }
        Some(n)
    };
    let stamp = Stamp {
        size: u64::try_from(field(b"\"s\"", false)?).ok()?,
        mtime_ns: field(b"\"m\"", true)?,
        ctime_ns: field(b"\"c\"", true)?,
        ino: u64::try_from(field(b"\"i\"", false)?).ok()?,
    };
    Some((path, stamp, rest))
}
