//! `repair`: write a repaired copy of a session file (or repair it in place, keeping a backup).
//!
//! The rule: nothing that parsed is dropped. Lines readers skip anyway are removed (blank lines,
//! lines that are not JSON — including a torn last line — and `null`/`0`/`false`/`""`), every
//! other line is kept byte for byte unless a fix below changes it, and each change is reported:
//! - a byte order mark, CRLF line ends and invalid UTF-8 become what readers already see;
//! - a missing header is added (id and time from the file name when it has them), a header that
//!   is not first is moved to the top, a non-string header id is replaced;
//! - from format v2 on: entries without an id get one; among records sharing an id, the earlier
//!   ones get fresh ids (readers resolve the id to the last one, so what they show is unchanged);
//!   a dangling `parentId` becomes `null` and a `parentId` cycle is cut at its first entry in file
//!   order (both are roots to readers already); a dangling `firstKeptEntryId` becomes the
//!   compaction's own id (retain nothing, as readers already do).
//!
//! Changed lines are written as `JSON.stringify` writes them; unchanged lines keep their bytes.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use pi_session_core::inspect::{self, find_cycles, split_lines, BOM};
use pi_session_core::json::{self, JsStr, Value};
use pi_session_core::record::{self, Key, UNDEFINED};
use pi_session_core::{fsio, ids, session, timefmt};

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliError, CliResult, EXIT_OK, EXIT_PROBLEMS};
use crate::{resolve, verify, Ctx};

pub const CMD: Command = Command {
    name: "repair",
    summary: "write a repaired copy of a session file (nothing that parsed is dropped)",
    usage: "<path> [--out FILE | --in-place]",
    description: "Removes what readers skip anyway (blank lines, lines that are not JSON such as a \
torn last line, null/false/0/\"\" lines), keeps every other record, and fixes the header, duplicate \
ids, dangling parentId / firstKeptEntryId and parentId cycles the way readers already interpret \
them. Every change is reported with its line number. The repaired file goes to FILE with --out \
(which must not exist), replaces the original with --in-place (the original is kept as \
<file>.bak), or to stdout otherwise. Exits with 1 when problems remain that repair leaves alone \
(records that are not objects, dangling label targets).",
    opts: &[
        Opt {
            long: "out",
            short: Some('o'),
            value: Some("FILE"),
            help: "write the repaired copy to FILE (a new file)",
        },
        Opt {
            long: "in-place",
            short: None,
            value: None,
            help: "replace the file, keeping the original as <file>.bak",
        },
    ],
    min_pos: 1,
    max_pos: Some(1),
    examples: &[
        "pi-sessions repair broken.jsonl --out fixed.jsonl",
        "pi-sessions repair ~/.pi/agent/sessions/--p--/x.jsonl --in-place",
    ],
};

/// One change, tied to a line of the original file when it is about one.
#[derive(Debug, Clone)]
pub struct Action {
    pub line: Option<usize>,
    pub what: String,
}

/// The repaired bytes and what was done.
#[derive(Debug, Clone)]
pub struct Repaired {
    pub bytes: Vec<u8>,
    pub actions: Vec<Action>,
    /// Records written (header included).
    pub kept: usize,
    /// Records written with changes.
    pub changed: usize,
    /// Lines removed.
    pub dropped: usize,
}

struct Line {
    /// Line number in the original file (0 for an added header).
    orig: usize,
    raw: Vec<u8>,
    value: Value,
    changed: bool,
}

impl Line {
    fn set(&mut self, key: &str, v: Value) {
        if let Some(o) = self.value.as_object_mut() {
            o.insert(JsStr::from_str(key), v);
            self.changed = true;
        }
    }
}

fn is_header(v: &Value) -> bool {
    matches!(v.get("type"), Some(Value::String(t)) if t.eq_str("session"))
}

fn key_of(v: Option<&Value>) -> Key {
    match v {
        None => UNDEFINED.into(),
        Some(v) => json::to_json(v).into(),
    }
}

/// The session id and ISO time a file name `<time>_<id>.jsonl` carries.
fn from_file_name(name: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(stem) = name.and_then(|n| n.strip_suffix(".jsonl")) else {
        return (None, None);
    };
    let Some((ts, id)) = stem.split_once('_') else {
        return (None, None);
    };
    let id = ids::is_valid_session_id(id).then(|| id.to_owned());
    // 2025-01-15T10-00-00-000Z -> 2025-01-15T10:00:00.000Z
    let b = ts.as_bytes();
    let iso = (b.len() == 24 && b[10] == b'T').then(|| {
        let mut s = ts.to_owned().into_bytes();
        s[13] = b':';
        s[16] = b':';
        s[19] = b'.';
        String::from_utf8_lossy(&s).into_owned()
    });
    let iso = iso.filter(|t| timefmt::parse_iso_strict(t).is_some());
    (id, iso)
}

/// Repair a file's bytes. `file_name` supplies a header id and time if one must be made.
pub fn repair_bytes(bytes: &[u8], file_name: Option<&str>) -> Repaired {
    let mut actions = Vec::new();
    let mut act = |line: Option<usize>, what: String| actions.push(Action { line, what });
    let mut lines: Vec<Line> = Vec::new();
    let mut dropped = 0;
    let mut crlf = 0;
    let ranges = split_lines(bytes);
    let unterminated = !bytes.is_empty() && bytes.last() != Some(&b'\n');
    for (i, &(s, e)) in ranges.iter().enumerate() {
        let n = i + 1;
        let mut raw = bytes[s..e].to_vec();
        let mut changed = false;
        if n == 1 && raw.starts_with(BOM) {
            raw.drain(..BOM.len());
            changed = true;
            act(Some(n), "removed the UTF-8 byte order mark".into());
        }
        if raw.iter().all(u8::is_ascii_whitespace) {
            dropped += 1;
            act(Some(n), "dropped a blank line".into());
            continue;
        }
        if raw.last() == Some(&b'\r') {
            raw.pop();
            crlf += 1;
        }
        if std::str::from_utf8(&raw).is_err() {
            raw = String::from_utf8_lossy(&raw).into_owned().into_bytes();
            changed = true;
            act(
                Some(n),
                "replaced invalid UTF-8 with U+FFFD (what readers see)".into(),
            );
        }
        match json::parse(&raw) {
            Err(err) => {
                dropped += 1;
                let torn = n == ranges.len() && unterminated;
                act(
                    Some(n),
                    if torn {
                        format!(
                            "dropped the torn last line (not valid JSON): {}",
                            inspect::preview(&raw, 60)
                        )
                    } else {
                        format!(
                            "dropped a line that is not JSON ({}): {}",
                            err.message,
                            inspect::preview(&raw, 60)
                        )
                    },
                );
            }
            Ok(v) if !v.is_truthy() => {
                dropped += 1;
                act(
                    Some(n),
                    format!("dropped `{}` (readers skip it)", inspect::preview(&raw, 20)),
                );
            }
            Ok(v) => lines.push(Line {
                orig: n,
                raw,
                value: v,
                changed,
            }),
        }
    }
    if crlf > 0 {
        act(None, format!("made {crlf} CRLF line end(s) LF"));
    }
    fix_header(&mut lines, file_name, &mut act);
    let version = match lines.first().and_then(|l| l.value.get("version")) {
        Some(Value::Number(v)) => *v,
        None => 1.0,
        Some(_) => 3.0,
    };
    if version >= 2.0 {
        fix_links(&mut lines, &mut act);
    }
    let mut out = Vec::with_capacity(bytes.len() + 64);
    let mut changed = 0;
    for l in &lines {
        if l.changed {
            changed += 1;
            out.extend_from_slice(json::to_json(&l.value).as_bytes());
        } else {
            out.extend_from_slice(&l.raw);
        }
        out.push(b'\n');
    }
    if unterminated && lines.iter().any(|l| l.orig == ranges.len()) {
        actions.push(Action {
            line: Some(ranges.len()),
            what: "added the missing newline at the end".into(),
        });
    }
    Repaired {
        bytes: out,
        actions,
        kept: lines.len(),
        changed,
        dropped,
    }
}

fn fix_header(
    lines: &mut Vec<Line>,
    file_name: Option<&str>,
    act: &mut impl FnMut(Option<usize>, String),
) {
    let (name_id, name_ts) = from_file_name(file_name);
    let fresh_id = || {
        name_id.clone().unwrap_or_else(|| {
            let ms = chrono::Utc::now().timestamp_millis().max(0) as u64;
            ids::session_uuid_v7(ms)
        })
    };
    match lines.iter().position(|l| is_header(&l.value)) {
        None => {
            let id = fresh_id();
            let ts = name_ts.clone().unwrap_or_else(|| timefmt::now_iso().0);
            let text = session::header_line(&id, &ts, "", None);
            let value = json::parse(text.as_bytes()).expect("header_line writes JSON");
            act(
                None,
                format!("added a session header (id {id}, time {ts}, cwd unknown)"),
            );
            lines.insert(
                0,
                Line {
                    orig: 0,
                    raw: text.into_bytes(),
                    value,
                    changed: false,
                },
            );
        }
        Some(0) => {}
        Some(h) => {
            let line = lines.remove(h);
            act(
                Some(line.orig),
                "moved the session header to the top (readers need it first)".into(),
            );
            lines.insert(0, line);
        }
    }
    let header = &mut lines[0];
    if !matches!(header.value.get("id"), Some(Value::String(_))) {
        let id = fresh_id();
        act(
            Some(header.orig).filter(|&n| n > 0),
            format!(
                "replaced the header id {} with the string {id}",
                header
                    .value
                    .get("id")
                    .map(json::to_json)
                    .unwrap_or_else(|| "(missing)".into())
            ),
        );
        header.set("id", Value::from(id.as_str()));
    }
}

fn fix_links(lines: &mut [Line], act: &mut impl FnMut(Option<usize>, String)) {
    // Entries: object records after the header that are not further headers.
    let entries: Vec<usize> = (1..lines.len())
        .filter(|&i| matches!(lines[i].value, Value::Object(_)) && !is_header(&lines[i].value))
        .collect();
    let mut taken: HashSet<Key> = entries
        .iter()
        .map(|&i| key_of(lines[i].value.get("id")))
        .collect();
    let fresh = |taken: &mut HashSet<Key>| {
        let id = ids::entry_id(|c| taken.contains(&*record::string_key(c)));
        taken.insert(record::string_key(&id));
        id
    };
    for &i in &entries {
        if lines[i].value.get("id").is_none() {
            let id = fresh(&mut taken);
            act(
                Some(lines[i].orig),
                format!("gave the entry without an id the id {id}"),
            );
            lines[i].set("id", Value::from(id.as_str()));
        }
    }
    // Duplicates: every record but the last one with an id gets a fresh id.
    let mut last_of: HashMap<Key, usize> = HashMap::new();
    for &i in &entries {
        last_of.insert(key_of(lines[i].value.get("id")), i);
    }
    for &i in &entries {
        let k = key_of(lines[i].value.get("id"));
        let last = last_of[&k];
        if last != i {
            let id = fresh(&mut taken);
            act(
                Some(lines[i].orig),
                format!(
                    "renamed duplicate id {k} to \"{id}\" (readers resolve {k} to the record on line {})",
                    lines[last].orig
                ),
            );
            lines[i].set("id", Value::from(id.as_str()));
        }
    }
    let ids: Vec<Key> = entries
        .iter()
        .map(|&i| key_of(lines[i].value.get("id")))
        .collect();
    let index: HashMap<Key, usize> = ids
        .iter()
        .cloned()
        .enumerate()
        .map(|(k, v)| (v, k))
        .collect();
    let mut parent_of: Vec<Option<usize>> = vec![None; entries.len()];
    for (k, &i) in entries.iter().enumerate() {
        let parent = key_of(lines[i].value.get("parentId"));
        if !record::key_truthy(&parent) {
            continue;
        }
        match index.get(&parent) {
            Some(&p) => parent_of[k] = Some(p),
            None => {
                act(
                    Some(lines[i].orig),
                    format!("parentId {parent} does not exist: set it to null (a root, as readers already show it)"),
                );
                lines[i].set("parentId", Value::Null);
            }
        }
    }
    for cycle in find_cycles(&parent_of, &index, &ids) {
        let first = cycle[0];
        let i = entries[first];
        act(
            Some(lines[i].orig),
            format!(
                "cut a parentId cycle of {} entr{} here: parentId set to null",
                cycle.len(),
                if cycle.len() == 1 { "y" } else { "ies" }
            ),
        );
        lines[i].set("parentId", Value::Null);
    }
    for (k, &i) in entries.iter().enumerate() {
        if !matches!(lines[i].value.get("type"), Some(Value::String(t)) if t.eq_str("compaction")) {
            continue;
        }
        let fk = key_of(lines[i].value.get("firstKeptEntryId"));
        if record::key_truthy(&fk) && fk != ids[k] && !index.contains_key(&fk) {
            act(
                Some(lines[i].orig),
                format!("firstKeptEntryId {fk} does not exist: set it to the compaction's own id (keeps nothing before it, as readers already do)"),
            );
            let own = lines[i].value.get("id").cloned().unwrap_or(Value::Null);
            lines[i].set("firstKeptEntryId", own);
        }
    }
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let path = resolve::session(ctx.env, &p.pos[0])?;
    let in_place = p.flag("in-place");
    let out_path = p.value("out").map(Path::new);
    if in_place && out_path.is_some() {
        return Err(CliError::usage_in(
            "repair",
            "give either --out or --in-place, not both",
        ));
    }
    if let Some(o) = out_path {
        if o.exists() {
            return Err(CliError::usage_in(
                "repair",
                format!(
                    "{} exists: choose a new file for --out (or use --in-place to replace the original)",
                    o.display()
                ),
            ));
        }
    }
    let original = std::fs::read(&path)
        .map_err(|e| CliError::failed(format!("{}: cannot read: {e}", path.display())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let r = repair_bytes(&original, name.as_deref());
    let after = inspect::inspect(&r.bytes);
    let to_stdout = out_path.is_none() && !in_place;
    // The report goes to stderr when the repaired file itself goes to stdout.
    let st = if to_stdout { ctx.err_style } else { ctx.style };
    let mut report = String::new();
    report.push_str(&st.bold(&format!("Repairing {}\n", path.display())));
    for a in &r.actions {
        let loc = match a.line {
            Some(l) => format!("{}:{l}:", path.display()),
            None => format!("{}:", path.display()),
        };
        report.push_str(&format!(
            "  {} {}\n",
            st.dim(&loc),
            crate::text::sanitize(&a.what)
        ));
    }
    let unchanged = r.bytes == original;
    let written_to = if unchanged && out_path.is_none() && in_place {
        report.push_str("Nothing to repair: the file is left as it is.\n");
        None
    } else if let Some(o) = out_path {
        fsio::create_new_atomic(o, &r.bytes)
            .map_err(|e| CliError::failed(format!("{}: {}", o.display(), e.message)))?;
        Some(o.display().to_string())
    } else if in_place {
        let bak = fsio::backup(&path, &original).map_err(|e| {
            CliError::failed(format!("{}: backup failed: {}", path.display(), e.message))
        })?;
        fsio::replace_atomic(&path, &r.bytes)
            .map_err(|e| CliError::failed(format!("{}: {}", path.display(), e.message)))?;
        report.push_str(&format!("Kept the original as {}\n", bak.display()));
        Some(path.display().to_string())
    } else {
        ctx.out.write_all(&r.bytes)?;
        None
    };
    let summary = format!(
        "{} record{} kept ({} changed), {} line{} dropped",
        r.kept,
        if r.kept == 1 { "" } else { "s" },
        r.changed,
        r.dropped,
        if r.dropped == 1 { "" } else { "s" },
    );
    match written_to {
        Some(w) => report.push_str(&format!("Wrote {w}: {summary}\n")),
        None if !(unchanged && in_place) => report.push_str(&format!("{summary}\n")),
        None => {}
    }
    let problems = after.problems();
    if problems == 0 {
        report.push_str(&st.green("✓ the repaired file verifies clean\n"));
    } else {
        report.push_str(
            &st.yellow("Left as they are (repair cannot fix these without dropping data):\n"),
        );
        let shown =
            Path::new(out_path.map_or("(repaired)", |o| o.to_str().unwrap_or("(repaired)")));
        for f in after
            .findings
            .iter()
            .filter(|f| f.severity != inspect::Severity::Note)
        {
            report.push_str(&format!("  {}\n", verify::finding_line(st, shown, f)));
        }
    }
    if to_stdout {
        ctx.err.write_all(report.as_bytes())?;
    } else {
        ctx.out.write_all(report.as_bytes())?;
    }
    Ok(if problems == 0 {
        EXIT_OK
    } else {
        EXIT_PROBLEMS
    })
}
