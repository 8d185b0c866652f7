//! Scanning one session's bytes: the prefilter finds the lines where an anchor stands with a
//! plausible start of a secret after it (in raw bytes, so the other lines are never decoded);
//! each such line's string values are decoded and the shapes run on them.

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

use super::forms;
use super::kind::{Kind, Place};
use super::shapes::{self, Shape};
use super::walk::{self, Decoded};
use super::{mask, place};
use crate::record;

/// One credential-shaped string in a session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line of the file.
    pub line: usize,
    /// The id of the entry that holds it; `None` in the header or a line that is not JSON.
    pub entry_id: Option<String>,
    pub place: Place,
    pub kind: Kind,
    /// The secret's bytes in the file, as written (escapes included): what redaction replaces.
    pub range: Range<usize>,
    /// [`mask::fingerprint`] of the decoded secret.
    pub fingerprint: String,
    /// [`mask::preview`] of the decoded secret.
    pub preview: String,
}

/// The anchors' automata and their shapes, built once per process.
struct Anchors {
    /// Every anchor that starts a secret, for decoded strings.
    all: AhoCorasick,
    shapes: Vec<(usize, Shape)>,
    /// The anchors of raw bytes whose first bytes are rare in session text (`sk-ant-`, `AKIA`,
    /// …). The common-looking ones (`://`, `eyJ`, the escapes) go through `memmem` instead:
    /// in one automaton with the others their first bytes (`:`, `/`, `\`, `e`) sent the SIMD
    /// search into verification at every URL, path and escape, and it ran five times slower.
    rare: AhoCorasick,
    rare_shapes: Vec<(usize, Shape)>,
}

/// Anchors the prefilter looks for with `memmem`, each with its shape. The escapes: a JSON writer
/// may spell any character as `\u00XX`, and `/` as `\/` (`JSON.stringify` does neither for
/// printable ASCII, other writers do), so a line with such an escape is decoded and looked at
/// whole.
const COMMON: [(&str, Shape); 4] = [
    ("://", Shape::Url),
    ("eyJ", Shape::Jwt),
    ("\\u00", Shape::Hazard),
    ("\\/", Shape::Hazard),
];

fn build(list: &[(&str, Shape)]) -> AhoCorasick {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(list.iter().map(|(a, _)| a))
        .expect("the anchors are a few short literals")
}

fn anchors() -> &'static Anchors {
    static ANCHORS: OnceLock<Anchors> = OnceLock::new();
    ANCHORS.get_or_init(|| {
        let list = shapes::anchors();
        let rare: Vec<(&str, Shape)> = list
            .iter()
            .filter(|(a, _)| !COMMON.iter().any(|(c, _)| c == a))
            .copied()
            .collect();
        Anchors {
            all: build(&list),
            shapes: list.iter().map(|(a, s)| (a.len(), *s)).collect(),
            rare: build(&rare),
            rare_shapes: rare.iter().map(|(a, s)| (a.len(), *s)).collect(),
        }
    })
}

/// A raw escape that may spell an anchor's character: `\/`, or `\u00XX` of printable ASCII.
fn hazard(bytes: &[u8], at: usize) -> bool {
    match bytes.get(at + 1) {
        Some(b'/') => true,
        _ => matches!(bytes.get(at + 4), Some(b'2'..=b'7')),
    }
}

/// The line of `bytes` around `at` (start, end without the newline).
fn line_around(bytes: &[u8], at: usize) -> Range<usize> {
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
    start..end
}

/// The lines of `bytes` (start, end without the newline) that may hold a secret, in order.
fn candidate_lines(bytes: &[u8]) -> Vec<Range<usize>> {
    let a = anchors();
    let mut lines: Vec<Range<usize>> = Vec::new();
    let add = |lines: &mut Vec<Range<usize>>, at: usize| {
        if !lines.last().is_some_and(|l| l.contains(&at)) {
            lines.push(line_around(bytes, at));
        }
    };
    for m in a.rare.find_iter(bytes) {
        let (len, shape) = a.rare_shapes[m.pattern().as_usize()];
        if shape.may_match(bytes, m.start(), len) {
            add(&mut lines, m.start());
        }
    }
    for (anchor, shape) in COMMON {
        let mut found: Vec<Range<usize>> = Vec::new();
        for at in memchr::memmem::find_iter(bytes, anchor.as_bytes()) {
            let ok = match shape {
                Shape::Hazard => hazard(bytes, at),
                _ => shape.may_match(bytes, at, anchor.len()),
            };
            if ok {
                add(&mut found, at);
            }
        }
        lines.extend(found);
    }
    lines.sort_by_key(|l| l.start);
    lines.dedup_by_key(|l| l.start);
    lines
}

/// Every finding in a session file's bytes, in file order.
pub fn scan_bytes(bytes: &[u8]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut line_no = 1;
    let mut counted = 0;
    for r in candidate_lines(bytes) {
        line_no += memchr::memchr_iter(b'\n', &bytes[counted..r.start]).count();
        counted = r.start;
        for mut f in scan_line(&bytes[r.clone()]) {
            f.line = line_no;
            f.range = f.range.start + r.start..f.range.end + r.start;
            out.push(f);
        }
    }
    out
}

/// A secret found in a decoded string, before it knows its line.
struct Hit {
    kind: Kind,
    /// Raw range in the line.
    raw: Range<usize>,
    secret: Vec<u8>,
    place: Place,
}

/// The findings of one line (ranges relative to it).
fn scan_line(line: &[u8]) -> Vec<Finding> {
    let mut hits = Vec::new();
    let meta = record::read_meta(line);
    let valid = meta.is_some() || crate::json::validate(line);
    let entry_id = meta
        .as_ref()
        .filter(|m| m.kind != record::Kind::Header)
        .and_then(|m| id_text(&m.id));
    if !valid {
        // Not JSON: its bytes are all there is to look at.
        find_in(line, &|r| r, Place::Other, &mut hits);
    } else {
        let (kind, role) = match &meta {
            Some(m) => (m.kind, m.role.clone()),
            None => (record::Kind::Other, record::Role::Missing),
        };
        let mut strings: Vec<(Range<usize>, Place)> = Vec::new();
        walk::strings(line, |path, r| {
            if !place::is_opaque(line, path) {
                strings.push((r, place::place(line, kind, &role, path)));
            }
        });
        for (r, p) in &strings {
            scan_string(line, r.clone(), *p, &mut hits);
        }
        aws_secrets(line, &strings, &mut hits);
    }
    dedupe(&mut hits);
    hits.into_iter()
        .map(|h| Finding {
            line: 0,
            entry_id: entry_id.clone(),
            place: h.place,
            kind: h.kind,
            range: h.raw,
            fingerprint: mask::fingerprint(&h.secret),
            preview: mask::preview(h.kind, &h.secret),
        })
        .collect()
}

/// A record key as text: a string id without its quotes.
pub(super) fn id_text(key: &str) -> Option<String> {
    match crate::json::parse(key.as_bytes()).ok()? {
        crate::json::Value::String(ref s) => Some(s.to_string_lossy()),
        crate::json::Value::Null => None,
        _ => Some(key.to_owned()),
    }
}

/// Run the shapes over one string value (raw content range `r` of `line`).
fn scan_string(line: &[u8], r: Range<usize>, place: Place, hits: &mut Vec<Hit>) {
    let raw = &line[r.clone()];
    if memchr::memchr(b'\\', raw).is_none() {
        let base = r.start;
        find_in(
            raw,
            &|x: Range<usize>| x.start + base..x.end + base,
            place,
            hits,
        );
    } else {
        let d = Decoded::new(raw, r.start);
        find_in(&d.text, &|x| d.raw_range(x), place, hits);
    }
}

/// Every shape that verifies at an anchor of `text`; `to_raw` maps a range of `text` to the line.
fn find_in(
    text: &[u8],
    to_raw: &dyn Fn(Range<usize>) -> Range<usize>,
    place: Place,
    hits: &mut Vec<Hit>,
) {
    let a = anchors();
    for m in a.all.find_iter(text) {
        let (len, shape) = a.shapes[m.pattern().as_usize()];
        if let Some((r, kind)) = shape.verify(text, m.start(), len) {
            hits.push(Hit {
                kind,
                raw: to_raw(r.clone()),
                secret: text[r].to_vec(),
                place,
            });
        }
    }
}

/// AWS secret keys: only in the string of an access key id (within 512 bytes of it) or in a
/// short string next to it (within 1 KiB of raw bytes), as `aws_secret_access_key` beside
/// `aws_access_key_id` in a tool's arguments or a credentials file.
fn aws_secrets(line: &[u8], strings: &[(Range<usize>, Place)], hits: &mut Vec<Hit>) {
    let ids: Vec<Range<usize>> = hits
        .iter()
        .filter(|h| h.kind == Kind::AwsKeyId)
        .map(|h| h.raw.clone())
        .collect();
    for id in ids {
        let near = id.start.saturating_sub(1024)..id.end + 1024;
        for (r, p) in strings {
            if r.end < near.start || r.start > near.end {
                continue;
            }
            let d = Decoded::new(&line[r.clone()], r.start);
            let window = if r.contains(&id.start) {
                let at = id.start - r.start;
                at.saturating_sub(512)..at + 532
            } else if r.start >= near.start && r.end <= near.end {
                0..d.text.len()
            } else {
                continue;
            };
            for s in forms::aws_secrets(&d.text, window) {
                hits.push(Hit {
                    kind: Kind::AwsSecret,
                    raw: d.raw_range(s.clone()),
                    secret: d.text[s].to_vec(),
                    place: *p,
                });
            }
        }
    }
}

/// Overlapping findings become one: the named credential inside a URL's password or a JWT wins
/// over the general shape around it; else the longer.
fn dedupe(hits: &mut Vec<Hit>) {
    let general = |k: Kind| matches!(k, Kind::UrlPassword | Kind::Jwt | Kind::AwsSecret);
    hits.sort_by_key(|h| (h.raw.start, std::cmp::Reverse(h.raw.end)));
    let mut kept: Vec<Hit> = Vec::with_capacity(hits.len());
    for h in hits.drain(..) {
        match kept.last_mut() {
            Some(k) if h.raw.start < k.raw.end => {
                let better = (general(k.kind) && !general(h.kind))
                    || (general(k.kind) == general(h.kind) && h.raw.len() > k.raw.len());
                if better {
                    *k = h;
                }
            }
            _ => kept.push(h),
        }
    }
    *hits = kept;
}
