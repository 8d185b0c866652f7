//! `Session::prepare_batches`: many batches of lines for JS, prepared on several threads, must be
//! exactly the lines `line_for_js` gives one by one, put together (text and cut strings), cover a prefix of
//! what was asked for, and report a bad position or a file changed behind the session's back
//! instead of misreading it.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use pi_session_core::json::{self, JsText};
use pi_session_core::materialize::{CutRef, CutValue, OwnedStep, PreparedBatch, Step};
use pi_session_core::{Config, ErrorCode, Session, Tuning};

mod common;
use common::temp_dir;

const LONG: usize = 16 << 10;

/// A session file of `n` long lines — images (plain long strings), escaped tool output (long
/// strings to decode), prose with characters above U+00FF (short strings cut for them), a little
/// non-ASCII text — opened so that its lines are read from the file
/// when asked for; with its file.
fn session(dir: &Path, n: usize) -> (Session, PathBuf) {
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
    s.new_session(None, None).unwrap();
    let mut parent = "null".to_owned();
    for i in 0..n {
        let id = format!("e{i:04}");
        let image = ((b'A' + (i % 26) as u8) as char)
            .to_string()
            .repeat(LONG + i);
        let output = format!("line\\n{}\\u00e9 caf\u{e9} \u{1f600}", "o".repeat(LONG));
        let role = if i == 0 { "user" } else { "assistant" };
        let cjk = '\u{4e2d}';
        let prose = format!(
            "step {i} \u{2014} caf\u{e9} \u{2192} \u{65e5}\u{672c}\\n{}",
            "p".repeat(80)
        );
        let line = format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2024-01-01T00:00:00.000Z","message":{{"role":"{role}","content":[{{"type":"image","data":"{image}"}},{{"type":"text","text":"{output}"}},{{"type":"text","text":"short {cjk} {i}"}},{{"type":"text","text":"{prose}"}}]}}}}"#
        );
        s.append(line.as_bytes()).unwrap();
        parent = format!("\"{id}\"");
    }
    let file = s.session_file().unwrap().to_path_buf();
    drop(s);
    // Opened again as a big session: every line is read from the file when asked for.
    let config = Config {
        tuning: Tuning {
            lazy_file_bytes: 0,
            ..Tuning::PRODUCT
        },
        ..Config::default()
    };
    let mut s = Session::with_config(
        "/w".into(),
        dir.to_string_lossy().into_owned(),
        true,
        config,
    )
    .unwrap();
    s.set_session_file(file.clone()).unwrap();
    (s, file)
}

/// A cut as comparable values: item, path as text, the string's code units.
type Cut = (u32, Vec<String>, Vec<u16>);

fn units(t: &JsText) -> Vec<u16> {
    match t {
        JsText::Latin1(b) => b.iter().map(|&c| u16::from(c)).collect(),
        JsText::Utf16(u) => u.clone(),
    }
}

fn prepared_cuts(b: &PreparedBatch) -> Vec<Cut> {
    b.cuts()
        .into_iter()
        .map(|c| {
            let path = c
                .path
                .iter()
                .map(|s| match s {
                    OwnedStep::Key(k) => String::from_utf8_lossy(k).into_owned(),
                    OwnedStep::Index(i) => i.to_string(),
                })
                .collect();
            let value = match c.value {
                CutRef::Value(CutValue::Text(t)) => units(t),
                CutRef::Value(CutValue::Shared(buf, range)) => {
                    buf[range.clone()].iter().map(|&c| u16::from(c)).collect()
                }
                CutRef::Wide(units) => units.to_vec(),
            };
            (c.item, path, value)
        })
        .collect()
}

/// What the lines of `positions` are one at a time (`line_for_js`), put together as one batch:
/// the text's code units and the decoded cuts.
fn one_by_one(s: &Session, positions: &[u32]) -> (JsText, Vec<Cut>) {
    let mut cuts = Vec::new();
    let mut texts = Vec::new();
    for (item, &p) in positions.iter().enumerate() {
        let mut sink = |_: u32, path: &[Step<'_>], escaped: &[u8], _plain: bool| {
            let path = path
                .iter()
                .map(|s| match s {
                    Step::Key(k) => String::from_utf8_lossy(k).into_owned(),
                    Step::Index(i) => i.to_string(),
                })
                .collect();
            cuts.push((
                item as u32,
                path,
                units(&json::decode_escaped_bytes(escaped)),
            ));
        };
        texts.push(s.line_for_js(p, &mut sink).unwrap());
    }
    (
        json::json_text_units(format!("[{}]", texts.join(","))),
        cuts,
    )
}

#[test]
fn batches_prepared_on_several_threads_are_the_lines_batch_by_batch() {
    let dir = temp_dir("batches");
    let (s, _) = session(&dir, 40);
    let positions = s.entry_positions();
    for threads in [1, 2, 3, 8] {
        let batches = s
            .prepare_batches(&positions, 100_000, usize::MAX, threads)
            .unwrap();
        assert!(batches.len() > 5, "several batches ({})", batches.len());
        let mut at = 0;
        for b in &batches {
            let span = &positions[at..at + b.count];
            let (text, cuts) = one_by_one(&s, span);
            assert_eq!(b.text, text, "threads {threads}, batch at {at}");
            assert_eq!(prepared_cuts(b), cuts, "threads {threads}, batch at {at}");
            // Three cuts per line: the image shared, the tool output decoded, the prose in the
            // batch's wide units (the short string with one CJK character stays in the text).
            let cuts = b.cuts();
            assert_eq!(cuts.len(), 3 * b.count);
            for line in cuts.chunks(3) {
                assert!(matches!(line[0].value, CutRef::Value(CutValue::Shared(..))));
                assert!(matches!(line[1].value, CutRef::Value(CutValue::Text(_))));
                assert!(matches!(line[2].value, CutRef::Wide(_)));
            }
            assert_eq!(b.values.len(), 2 * b.count);
            at += b.count;
        }
        assert_eq!(at, positions.len(), "all of it");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_run_starts_with_small_batches_that_double() {
    // The caller waits for the first batch alone: it is a sixteenth of the budget, and each next
    // one twice the one before (lines of the same size here, so the counts follow).
    let dir = temp_dir("batches-ramp");
    let (s, file) = session(&dir, 200);
    let positions = s.entry_positions();
    let line = fs::metadata(&file).unwrap().len() as usize / (positions.len() + 1);
    let budget = 64 * line;
    let counts: Vec<usize> = s
        .prepare_batches(&positions, budget, usize::MAX, 2)
        .unwrap()
        .iter()
        .map(|b| b.count)
        .collect();
    assert!(counts.len() > 6, "{counts:?}");
    assert!(counts[0] <= 5, "the first batch is small: {counts:?}");
    for w in counts[..5].windows(2) {
        assert!(w[1] > w[0], "each of the first ones bigger: {counts:?}");
    }
    assert!(counts[5] >= 3 * counts[1], "then the budget: {counts:?}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_call_covers_a_prefix_of_about_max_total_bytes() {
    let dir = temp_dir("batches-prefix");
    let (s, _) = session(&dir, 30);
    let positions = s.entry_positions();
    let batches = s.prepare_batches(&positions, 100_000, 300_000, 2).unwrap();
    let covered: usize = batches.iter().map(|b| b.count).sum();
    assert!(
        covered > 0 && covered < positions.len(),
        "a prefix: {covered}"
    );
    // Asking for the rest gives the rest.
    let rest = s
        .prepare_batches(&positions[covered..], 100_000, usize::MAX, 2)
        .unwrap();
    assert_eq!(
        covered + rest.iter().map(|b| b.count).sum::<usize>(),
        positions.len()
    );
    // An empty request is no batch; a bad position is an error.
    assert!(s
        .prepare_batches(&[], 100_000, usize::MAX, 2)
        .unwrap()
        .is_empty());
    let bad = [positions[0], 1_000_000];
    let err = s.prepare_batches(&bad, 100_000, usize::MAX, 2).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_changed_behind_the_session_stops_the_batches_at_the_changed_line() {
    let dir = temp_dir("batches-changed");
    let (s, file) = session(&dir, 30);
    let positions = s.entry_positions();
    // Overwrite one byte near the start of the 20th entry's line, in place (the fingerprint a
    // line is checked against covers its length and both ends).
    let text = fs::read(&file).unwrap();
    let line_start = text
        .split(|&b| b == b'\n')
        .take(positions[20] as usize)
        .map(|l| l.len() + 1)
        .sum::<usize>();
    assert_eq!(&text[line_start..line_start + 8], br#"{"type":"#);
    fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .write_all_at(b"T", line_start as u64 + 2)
        .unwrap();
    // Lines before it are given; from the changed one on, the change is reported. (Asking for
    // the rest, as JS does, may give more lines before it first: a call's first batches are
    // smaller.)
    let mut covered = 0;
    let err = loop {
        match s.prepare_batches(&positions[covered..], 100_000, usize::MAX, 2) {
            Ok(batches) => {
                let more: usize = batches.iter().map(|b| b.count).sum();
                assert!(more > 0, "each call gives lines or the error");
                covered += more;
                assert!(covered <= 20, "stops before the changed line ({covered})");
            }
            Err(e) => break e,
        }
    };
    assert_eq!(err.code, ErrorCode::FileChanged);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn batches_reach_the_consumer_in_order_and_it_can_stop_them() {
    let dir = temp_dir("batches-each");
    let (s, _) = session(&dir, 40);
    let positions = s.entry_positions();
    let all = s
        .prepare_batches(&positions, 100_000, usize::MAX, 1)
        .unwrap();
    for threads in [1, 2, 4] {
        // In order, whichever thread prepared them.
        let mut seen = Vec::new();
        let covered = s
            .for_each_batch(&positions, 100_000, usize::MAX, threads, |b| {
                seen.push(b);
                true
            })
            .unwrap();
        assert_eq!(covered, positions.len());
        assert_eq!(seen.len(), all.len());
        for (a, b) in seen.iter().zip(&all) {
            assert_eq!((a.count, &a.text), (b.count, &b.text), "threads {threads}");
        }
        // A consumer that stops after two batches gets no third, and the count says so.
        let mut calls = 0;
        let covered = s
            .for_each_batch(&positions, 100_000, usize::MAX, threads, |_| {
                calls += 1;
                calls < 2
            })
            .unwrap();
        assert_eq!(calls, 2);
        assert_eq!(covered, all[0].count + all[1].count);
    }
    fs::remove_dir_all(&dir).unwrap();
}
