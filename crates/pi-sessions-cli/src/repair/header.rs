//! The header fix: one is added when missing (id and time from the file name when it has them),
//! moved to the top when it is not first, and given a string id when its id is not one.

use pi_session_core::json::{self, Value};
use pi_session_core::{ids, session, timefmt};

use super::{is_header, Line};

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

pub(super) fn fix_header(
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
