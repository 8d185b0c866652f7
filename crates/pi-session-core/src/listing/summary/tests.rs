//! The per-file summary on small files written for each case: what the meta JSON holds, what the
//! two texts hold, and which files are left out of a listing.

use std::fs;
use std::path::{Path, PathBuf};

use super::{summarize_file_parts, FileSummary, SummaryInfo};
use crate::json::{self, Value};

use crate::testing::temp_dir;

fn write(dir: &Path, text: &str) -> PathBuf {
    let file = dir.join("s.jsonl");
    fs::write(&file, text).unwrap();
    file
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"s-1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/work/p"}"#;

/// A message entry with an ISO entry timestamp and the given message body.
fn message(id: &str, at: &str, body: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"{at}","message":{body}}}"#
    )
}

/// The summary of `text` written to a file (in its own directory, removed after), with the file's
/// mtime given as 5000 ms.
fn summarize(name: &str, text: &str) -> (PathBuf, Option<FileSummary>) {
    let dir = temp_dir(name);
    let file = write(&dir, text);
    let summary = summarize_file_parts(&file, Some(5000.0));
    fs::remove_dir_all(&dir).unwrap();
    (file, summary)
}

/// The summary's fields as the listing cache stores them (the text the cache format keeps
/// byte-identical; its serialization lives in the cache module).
fn meta_text(s: &FileSummary) -> String {
    let mut out = String::new();
    crate::listing::cache::write_info(&s.info, &mut out);
    out
}

/// `p` as a JSON string (escaped: a Windows path has backslashes).
fn quoted(p: &Path) -> String {
    json::string_to_json(&p.to_string_lossy())
}

#[test]
fn a_session_summary_holds_the_header_fields_the_message_count_and_both_texts() {
    let header = r#"{"type":"session","version":3,"id":"s-1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/work/p","parentSession":"/old.jsonl"}"#;
    let text = [
        header.to_owned(),
        message("a", "2024-01-01T00:00:01.000Z", r#"{"role":"user","content":"hello"}"#),
        message(
            "b",
            "2024-01-01T00:00:02.000Z",
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","name":"ls"},{"type":"text","text":"there"}]}"#,
        ),
        message("c", "2024-01-01T00:00:03.000Z", r#"{"role":"user","content":"second"}"#),
        String::new(),
    ]
    .join("\n");
    let (file, summary) = summarize("full", &text);
    let s = summary.expect("a session is listed");
    assert_eq!(
        meta_text(&s),
        format!(
            r#"{{"path":{},"id":"s-1","cwd":"/work/p","parentSessionPath":"/old.jsonl","created":"2024-01-01T00:00:00.000Z","act":1704067203000,"actPending":[],"mtimeMs":5000,"messageCount":3}}"#,
            quoted(&file)
        )
    );
    assert_eq!(s.first_message, "hello", "the first user message");
    assert_eq!(
        s.all_text, "hello hi there second",
        "the text blocks of every user and assistant message, joined by spaces"
    );
}

#[test]
fn a_header_only_file_is_a_session_without_messages_or_activity() {
    let (file, summary) = summarize("header-only", &format!("{HEADER}\n"));
    let s = summary.expect("a header alone is a session");
    assert_eq!(
        meta_text(&s),
        format!(
            r#"{{"path":{},"id":"s-1","cwd":"/work/p","created":"2024-01-01T00:00:00.000Z","actPending":[],"mtimeMs":5000,"messageCount":0}}"#,
            quoted(&file)
        )
    );
    assert_eq!((s.first_message.as_str(), s.all_text.as_str()), ("", ""));
}

#[test]
fn a_torn_last_line_is_skipped_and_the_lines_before_it_count() {
    let text = format!(
        "{HEADER}\n{}\n{{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"message\":{{\"role\":\"user\",\"cont",
        message("a", "2024-01-01T00:00:01.000Z", r#"{"role":"user","content":"kept"}"#)
    );
    let (_, summary) = summarize("torn", &text);
    let s = summary.expect("a torn tail does not hide the session");
    assert!(
        meta_text(&s).ends_with(r#""messageCount":1}"#),
        "{}",
        meta_text(&s)
    );
    assert_eq!(s.first_message, "kept");
    assert_eq!(s.all_text, "kept");
}

#[test]
fn activity_is_the_newest_message_time_preferring_the_message_timestamp() {
    let text = [
        HEADER.to_owned(),
        // The numeric message timestamp wins over the entry's own.
        message(
            "a",
            "2024-01-01T00:00:09.000Z",
            r#"{"role":"user","content":"one","timestamp":1704067201000}"#,
        ),
        // No message timestamp: the entry's ISO timestamp counts.
        message(
            "b",
            "2024-01-01T00:00:02.000Z",
            r#"{"role":"assistant","content":"two"}"#,
        ),
        // Other roles and messages without content do not count.
        message(
            "c",
            "2024-01-01T00:00:30.000Z",
            r#"{"role":"toolResult","content":"x"}"#,
        ),
        message("d", "2024-01-01T00:00:40.000Z", r#"{"role":"user"}"#),
        String::new(),
    ]
    .join("\n");
    let (_, summary) = summarize("activity", &text);
    let s = summary.expect("listed");
    assert!(
        meta_text(&s).contains(r#""act":1704067202000,"actPending":[]"#),
        "{}",
        meta_text(&s)
    );
    assert!(
        meta_text(&s).contains(r#""messageCount":4"#),
        "every message entry counts"
    );
    assert_eq!(s.all_text, "one two");
}

#[test]
fn an_entry_timestamp_that_is_not_strict_iso_is_left_to_javascript() {
    let text = format!(
        "{HEADER}\n{}\n",
        message("a", "Jan 2 2024", r#"{"role":"user","content":"hi"}"#)
    );
    let (_, summary) = summarize("pending", &text);
    let meta = meta_text(&summary.expect("listed"));
    assert!(!meta.contains("\"act\":"), "{meta}");
    assert!(meta.contains(r#""actPending":["Jan 2 2024"]"#), "{meta}");
}

#[test]
fn the_name_is_the_last_session_info_name_trimmed_and_an_empty_one_clears_it() {
    let info =
        |name: &str| format!(r#"{{"type":"session_info","id":"i","parentId":null,"name":{name}}}"#);
    let named = format!(
        "{HEADER}\n{}\n{}\n",
        info(r#""  first ""#),
        info(r#""\t second \n""#)
    );
    let (_, summary) = summarize("named", &named);
    let meta = meta_text(&summary.expect("listed"));
    assert!(
        meta.contains(r#""cwd":"/work/p","name":"second","created""#),
        "{meta}"
    );

    let cleared = format!("{HEADER}\n{}\n{}\n", info(r#""kept?""#), info(r#""   ""#));
    let (_, summary) = summarize("cleared", &cleared);
    let meta = meta_text(&summary.expect("listed"));
    assert!(!meta.contains("\"name\""), "{meta}");

    let null = format!("{HEADER}\n{}\n{}\n", info(r#""kept?""#), info("null"));
    let (_, summary) = summarize("null-name", &null);
    assert!(!meta_text(&summary.expect("listed")).contains("\"name\""));
}

#[test]
fn lines_end_at_a_newline_a_crlf_or_a_lone_carriage_return() {
    let user = |id: &str, text: &str| {
        message(
            id,
            "2024-01-01T00:00:01.000Z",
            &format!(r#"{{"role":"user","content":"{text}"}}"#),
        )
    };
    let text = format!("{HEADER}\r\n{}\r{}\n", user("a", "one"), user("b", "two"));
    let (_, summary) = summarize("cr", &text);
    let s = summary.expect("listed");
    assert!(
        meta_text(&s).ends_with(r#""messageCount":2}"#),
        "{}",
        meta_text(&s)
    );
    assert_eq!(s.all_text, "one two");
}

#[test]
fn the_modification_time_is_the_given_one_or_else_the_files() {
    let dir = temp_dir("mtime");
    let file = write(&dir, &format!("{HEADER}\n"));
    let given = summarize_file_parts(&file, Some(1234.5)).expect("listed");
    assert!(
        meta_text(&given).contains(r#""mtimeMs":1234.5,"#),
        "{}",
        meta_text(&given)
    );
    let stat = fs::metadata(&file).unwrap().modified().unwrap();
    let want = format!(
        "\"mtimeMs\":{},",
        crate::json::to_json(&crate::json::Value::Number(crate::listing::mtime_ms(stat)))
    );
    let own = summarize_file_parts(&file, None).expect("listed");
    assert!(
        meta_text(&own).contains(&want),
        "{} lacks {want}",
        meta_text(&own)
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn files_the_reference_would_skip_have_no_summary() {
    let cases = [
        ("no-header", "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n".to_owned()),
        ("empty", String::new()),
        ("scalar-first", format!("42\n{HEADER}\n")),
        (
            "null-message",
            format!("{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":null}}\n"),
        ),
        (
            "numeric-content",
            format!("{HEADER}\n{}\n", message("a", "2024-01-01T00:00:01.000Z", r#"{"role":"user","content":7}"#)),
        ),
        (
            "null-block",
            format!("{HEADER}\n{}\n", message("a", "2024-01-01T00:00:01.000Z", r#"{"role":"user","content":[null]}"#)),
        ),
    ];
    for (name, text) in cases {
        let (_, summary) = summarize(name, &text);
        assert!(summary.is_none(), "{name} is not listed");
    }
    assert!(summarize_file_parts(Path::new("/nonexistent/pi/s.jsonl"), None).is_none());
}

#[test]
fn the_summary_holds_typed_fields_as_the_file_states_them() {
    let header = r#"{"type":"session","version":3,"id":"s-1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/work/p","parentSession":7}"#;
    let text = format!(
        "{header}\n{}\n{}\n",
        message(
            "a",
            "2024-01-01T00:00:01.000Z",
            r#"{"role":"user","content":"hello"}"#
        ),
        r#"{"type":"session_info","id":"i","parentId":"a","name":" named "}"#
    );
    let (file, summary) = summarize("typed", &text);
    let s = summary.expect("listed").info;
    assert_eq!(s.path, file.to_string_lossy());
    assert_eq!(s.id, Some(json::parse(br#""s-1""#).unwrap()));
    assert_eq!(s.cwd.to_string_lossy(), "/work/p");
    assert_eq!(
        s.name.map(|n| n.to_string_lossy()).as_deref(),
        Some("named")
    );
    assert_eq!(s.parent_session_path, Some(Value::Number(7.0)));
    assert_eq!(
        s.created,
        Some(json::parse(br#""2024-01-01T00:00:00.000Z""#).unwrap())
    );
    assert_eq!(s.activity, Some(1_704_067_201_000.0));
    assert!(s.pending_times.is_empty());
    assert_eq!((s.mtime_ms, s.message_count), (5000.0, 1));
}

fn info_with(
    activity: Option<f64>,
    pending: &[&str],
    created: Option<&str>,
    mtime_ms: f64,
) -> SummaryInfo {
    let v = |t: &str| json::parse(t.as_bytes()).unwrap();
    SummaryInfo {
        path: "/s.jsonl".into(),
        id: None,
        cwd: json::JsStr::default(),
        name: None,
        parent_session_path: None,
        created: created.map(v),
        activity,
        pending_times: pending.iter().map(|t| v(t)).collect(),
        mtime_ms,
        message_count: 0,
    }
}

#[test]
fn modified_is_the_activity_else_a_valid_header_date_else_the_rounded_mtime() {
    let iso = r#""2024-01-01T00:00:00.000Z""#;
    assert_eq!(
        info_with(Some(9.0), &[], Some(iso), 1.0).modified(),
        Some(9.0)
    );
    // No positive activity: the header's timestamp, when it is a date string.
    assert_eq!(
        info_with(Some(0.0), &[], Some(iso), 1.0).modified(),
        Some(1_704_067_200_000.0)
    );
    // Else the mtime, rounded as Math.round does (halves toward +infinity).
    assert_eq!(info_with(None, &[], Some("12"), 2.5).modified(), Some(3.0));
    assert_eq!(info_with(None, &[], None, -2.5).modified(), Some(-2.0));
    assert_eq!(info_with(None, &[], None, -2.6).modified(), Some(-3.0));
}

#[test]
fn modified_waits_for_a_js_date_where_only_javascript_reads_the_timestamp() {
    let pending = info_with(Some(5.0), &[r#""Jan 2 2024""#], None, 1.0);
    assert_eq!(pending.modified(), None);
    let jan2 = 1_704_153_600_000.0;
    let by = |v: &Value| -> Result<Option<f64>, ()> {
        Ok(matches!(v, Value::String(s) if s.eq_str("Jan 2 2024")).then_some(jan2))
    };
    assert_eq!(pending.modified_by(by), Ok(jan2));
    // An invalid pending date leaves the activity as it was.
    let invalid = info_with(Some(5.0), &[r#"{"a":1}"#], None, 1.0);
    assert_eq!(invalid.modified_by(by), Ok(5.0));
    // A header timestamp that is not strict ISO needs Date too, unless an activity decides.
    let loose = info_with(None, &[], Some(r#""Jan 2 2024""#), 1.0);
    assert_eq!(loose.modified(), None);
    assert_eq!(loose.modified_by(by), Ok(jan2));
    assert_eq!(
        info_with(Some(4.0), &[], Some(r#""Jan 2 2024""#), 1.0).modified(),
        Some(4.0)
    );
}
