//! Entries handed out as skeletons, their big members read back on demand (the `lazy` module):
//! a skeleton is its line with exactly the big members of its holder replaced, both for a session
//! held in memory and for one whose lines stay in the file; each lazy value reads back as the
//! member's JSON; a reader keeps reading after its session moved on, and refuses bytes changed
//! in place.

use std::fs;
use std::path::{Path, PathBuf};

use pi_session_core::json::{self, Value};
use pi_session_core::lazy::{Holder, LazyReader, MAX_LAZY_DEPTH, MIN_LAZY_BYTES};
use pi_session_core::materialize::{Form, PreparedBatch};
use pi_session_core::{Config, Error, ErrorCode, Session, Tuning};

mod common;
use common::temp_dir;

type R = Result<(), Error>;

const BIG: usize = MIN_LAZY_BYTES * 4;

/// The lines of a session with big members in every holder kind (ASCII only, so that no string
/// of a skeleton or value is cut out on its way to JS), each line's id first.
fn lines() -> Vec<String> {
    let big = |s: &str| s.repeat(BIG / s.len() + 1)[..BIG].to_owned();
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let ts = r#""timestamp":"2024-01-01T00:00:01.000Z""#;
    vec![
        header.to_owned(),
        format!(
            r#"{{"type":"message","id":"u","parentId":null,{ts},"message":{{"role":"user","content":"{}","timestamp":1}}}}"#,
            big("ask ")
        ),
        format!(
            r#"{{"type":"message","id":"a","parentId":"u",{ts},"message":{{"role":"assistant","content":[{{"type":"text","text":"{}"}}],"usage":{{"input":1,"note":"{}"}},"stopReason":"stop","timestamp":2}}}}"#,
            big("reply "),
            big("eager ")
        ),
        format!(
            r#"{{"type":"message","id":"t","parentId":"a",{ts},"message":{{"role":"toolResult","toolCallId":"c","content":[{{"type":"text","text":"{}"}}],"details":{{"lines":["{}"]}},"isError":false}}}}"#,
            big("ou\\n"),
            big("d ")
        ),
        format!(
            r#"{{"type":"message","id":"small","parentId":"t",{ts},"message":{{"role":"user","content":"hi"}}}}"#
        ),
        format!(
            r#"{{"type":"custom","customType":"x","data":{{"v":"{}"}},"id":"c","parentId":"small",{ts}}}"#,
            big("data ")
        ),
        format!(
            r#"{{"type":"compaction","id":"k","parentId":"c",{ts},"summary":"{}","firstKeptEntryId":"t","tokensBefore":5}}"#,
            big("sum ")
        ),
        // Names JavaScript could not rebuild in order: kept whole.
        format!(
            r#"{{"type":"custom","customType":"y","data":"{}","data":"{}","id":"dup","parentId":"k",{ts}}}"#,
            big("a "),
            big("b ")
        ),
        // Not canonical (spaces): read by the validating reader, with the same result.
        format!(
            r#"{{ "type": "custom_message", "customType": "z", "content": "{}", "id": "sp", "parentId": "dup", {ts} }}"#,
            big("spaced ")
        ),
        // Nested as deeply as a lazy record may be (the entry is level 1, so `data` holds
        // MAX_LAZY_DEPTH - 1 levels): lazy as any other.
        format!(
            r#"{{"type":"custom","customType":"d","data":{}"{}"{},"id":"edge","parentId":"sp",{ts}}}"#,
            "[".repeat(MAX_LAZY_DEPTH - 1),
            big("deep "),
            "]".repeat(MAX_LAZY_DEPTH - 1)
        ),
        // One level deeper (the message is level 2, its content holds the rest): kept whole, so
        // that the entry stays an object JSON.stringify walks without recursion on Node 26.
        format!(
            r#"{{"type":"message","id":"deep","parentId":"edge",{ts},"message":{{"role":"user","content":{}"{}"{},"timestamp":3}}}}"#,
            "[".repeat(MAX_LAZY_DEPTH - 1),
            big("deeper "),
            "]".repeat(MAX_LAZY_DEPTH - 1)
        ),
    ]
}

/// The session of [`lines`], opened with its lines in memory or left in the file.
fn open(dir: &Path, in_file: bool) -> Result<(Session, PathBuf), Error> {
    let file = dir.join("s.jsonl");
    fs::write(&file, lines().join("\n") + "\n").unwrap();
    let config = Config {
        tuning: Tuning {
            lazy_file_bytes: if in_file { 0 } else { u64::MAX },
            ..Tuning::PRODUCT
        },
        ..Config::default()
    };
    let mut s = Session::with_config("/w".into(), dir.to_string_lossy().into(), true, config)?;
    s.set_session_file(file.clone())?;
    Ok((s, file))
}

/// A batch without cut strings, as a JSON value.
fn batch_json(b: &PreparedBatch) -> Value {
    assert!(b.plan.is_empty(), "nothing cut");
    json::parse(b.text.to_string_lossy().as_bytes()).unwrap()
}

/// Skeletons parsed, and their holders as (item, shape id).
type Skeletons = (Vec<Value>, Vec<(u32, u32)>);

/// The skeletons of every record.
fn skeletons(s: &Session) -> Result<Skeletons, Error> {
    let positions: Vec<u32> = (0..s.record_count() as u32).collect();
    let mut items = Vec::new();
    let mut holders = Vec::new();
    s.for_each_batch_as(Form::Skeleton, &positions, 1 << 20, usize::MAX, 2, |b| {
        let at = items.len() as u32;
        holders.extend(b.holders.chunks(2).map(|h| (at + h[0], h[1])));
        items.extend(batch_json(&b).into_array().unwrap());
        true
    })?;
    Ok((items, holders))
}

/// Whether a member of this name and value is lazy.
fn lazy_member(name: &str, value: &Value) -> bool {
    let eager = [
        "type",
        "id",
        "parentId",
        "timestamp",
        "role",
        "usage",
        "stopReason",
        "customType",
        "toolCallId",
        "isError",
        "firstKeptEntryId",
        "tokensBefore",
    ];
    json::to_json(value).len() >= MIN_LAZY_BYTES && !eager.contains(&name)
}

#[test]
fn a_skeleton_is_its_line_with_the_big_members_of_its_holder_as_zero() -> R {
    for in_file in [false, true] {
        let dir = temp_dir(if in_file {
            "lazy-skel-file"
        } else {
            "lazy-skel-mem"
        });
        let (mut s, _) = open(&dir, in_file)?;
        let (items, holders) = skeletons(&s)?;
        let reader = s.lazy_reader();
        let originals: Vec<Value> = lines()
            .iter()
            .map(|l| json::parse(l.as_bytes()).unwrap())
            .collect();
        assert_eq!(items.len(), originals.len());
        let mut expected_holders = Vec::new();
        for (i, (item, original)) in items.iter().zip(&originals).enumerate() {
            let id = original
                .get("id")
                .and_then(Value::as_str)
                .map(|s| s.to_string_lossy());
            let kept_whole = matches!(
                id.as_deref(),
                Some("dup") | Some("small") | Some("s") | Some("deep")
            );
            let mut expected = original.clone();
            let holder = match expected.get_mut("message") {
                Some(m) => m.as_object_mut().unwrap(),
                None => expected.as_object_mut().unwrap(),
            };
            if !kept_whole {
                let names: Vec<String> = holder.keys().map(|k| k.to_string_lossy()).collect();
                for name in names {
                    if lazy_member(&name, holder.get(&name).unwrap()) {
                        *holder.get_mut(&name).unwrap() = Value::Number(0.0);
                    }
                }
                expected_holders.push(i as u32);
            }
            assert_eq!(item, &expected, "record {i} ({id:?}), in file: {in_file}");
        }
        assert_eq!(
            holders.iter().map(|h| h.0).collect::<Vec<_>>(),
            expected_holders
        );
        // Each holder's shape names its members in order, the lazy ones marked.
        for &(item, shape) in &holders {
            let shape = reader.shapes().get(shape).unwrap();
            let original = &originals[item as usize];
            let (holder, object) = match original.get("message") {
                Some(m) => (Holder::Message, m.as_object().unwrap()),
                None => (Holder::Entry, original.as_object().unwrap()),
            };
            assert_eq!(shape.holder, holder);
            let names: Vec<String> = object.keys().map(|k| k.to_string_lossy()).collect();
            let shape_names: Vec<String> = shape
                .keys
                .iter()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect();
            assert_eq!(shape_names, names);
            for (k, name) in names.iter().enumerate() {
                assert_eq!(
                    shape.lazy.contains(&(k as u8)),
                    lazy_member(name, object.get(name).unwrap()),
                    "{name}"
                );
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }
    Ok(())
}

/// Every lazy value of `reader`, read one by one, as (position, name, value).
fn every_value(reader: &LazyReader) -> Result<Vec<(u32, String, Value)>, Error> {
    let originals: Vec<Value> = lines()
        .iter()
        .map(|l| json::parse(l.as_bytes()).unwrap())
        .collect();
    let mut out = Vec::new();
    for pos in 0..reader.len() as u32 {
        let original = &originals[pos as usize];
        let object = original
            .get("message")
            .unwrap_or(original)
            .as_object()
            .unwrap();
        for name in object.keys() {
            let name = name.to_string_lossy();
            if let Ok(b) = reader.value(pos, name.as_bytes()) {
                let value = batch_json(&b).into_array().unwrap().remove(0);
                assert_eq!(
                    &value,
                    object.get(&name).unwrap(),
                    "record {pos} member {name}"
                );
                out.push((pos, name, value));
            }
        }
    }
    Ok(out)
}

#[test]
fn each_lazy_value_reads_back_as_its_member_and_only_lazy_members_can_be_read() -> R {
    for in_file in [false, true] {
        let dir = temp_dir(if in_file {
            "lazy-values-file"
        } else {
            "lazy-values-mem"
        });
        let (mut s, _) = open(&dir, in_file)?;
        let reader = s.lazy_reader();
        let names: Vec<(u32, String)> = every_value(&reader)?
            .into_iter()
            .map(|(p, n, _)| (p, n))
            .collect();
        let want = [
            (1, "content"),
            (2, "content"),
            (3, "content"),
            (3, "details"),
            (5, "data"),
            (6, "summary"),
            (8, "content"),
            (9, "data"),
        ];
        assert_eq!(names, want.map(|(p, n)| (p, n.to_owned())));
        let err = reader.value(2, b"usage").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        fs::remove_dir_all(&dir).unwrap();
    }
    Ok(())
}

#[test]
fn a_reader_keeps_reading_after_its_session_moved_on_or_was_dropped() -> R {
    for in_file in [false, true] {
        let dir = temp_dir(if in_file {
            "lazy-moved-file"
        } else {
            "lazy-moved-mem"
        });
        let (mut s, file) = open(&dir, in_file)?;
        let reader = s.lazy_reader();
        let before = every_value(&reader)?;
        s.new_session(None, None)?;
        assert_eq!(every_value(&reader)?, before);
        drop(s);
        // Even the file gone (pi's /resume deletes sessions this way): the reader holds it open.
        fs::remove_file(&file).unwrap();
        assert_eq!(every_value(&reader)?, before);
        fs::remove_dir_all(&dir).unwrap();
    }
    Ok(())
}

#[test]
fn a_file_changed_in_place_is_refused_when_a_value_is_read_and_a_memory_session_never_reads_it() -> R
{
    for in_file in [false, true] {
        let dir = temp_dir(if in_file {
            "lazy-changed-file"
        } else {
            "lazy-changed-mem"
        });
        let (mut s, file) = open(&dir, in_file)?;
        let reader = s.lazy_reader();
        // The same length, other bytes where a line is checked (its length and both ends).
        let text = fs::read_to_string(&file).unwrap();
        fs::write(
            &file,
            text.replace(r#""timestamp":2}}"#, r#""timestamp":3}}"#),
        )
        .unwrap();
        match reader.value(2, b"content") {
            Err(e) => {
                assert!(in_file);
                assert_eq!(e.code, ErrorCode::FileChanged);
            }
            Ok(b) => {
                assert!(!in_file);
                assert!(
                    b.text.to_string_lossy().contains("reply "),
                    "as read at open"
                );
            }
        }
        // Cut short behind our back: the same refusal, not an I/O error of a short read.
        fs::write(&file, &text[..text.len() / 2]).unwrap();
        match reader.value(8, b"content") {
            Err(e) => {
                assert!(in_file);
                assert_eq!(e.code, ErrorCode::FileChanged, "{}", e.message);
            }
            Ok(_) => assert!(!in_file),
        }
        fs::remove_dir_all(&dir).unwrap();
    }
    Ok(())
}

#[test]
fn values_read_ahead_come_in_order_in_batches_of_about_the_budget() -> R {
    let dir = temp_dir("lazy-ahead");
    let (mut s, _) = open(&dir, true)?;
    let reader = s.lazy_reader();
    let positions: Vec<u32> = (0..reader.len() as u32).collect();
    for threads in [1, 2, 4] {
        let mut got = Vec::new();
        let mut batches = 0;
        let given =
            reader.for_each_values(&positions, b"content", BIG, usize::MAX, threads, |of, b| {
                batches += 1;
                got.extend(of.into_iter().zip(batch_json(&b).into_array().unwrap()));
                true
            })?;
        assert_eq!(given, 4);
        assert_eq!(batches, 4, "one value per batch of the budget");
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [1, 2, 3, 8]);
        for (pos, value) in got {
            assert_eq!(
                reader
                    .value(pos, b"content")
                    .map(|b| batch_json(&b).into_array().unwrap().remove(0))?,
                value
            );
        }
        // About max_total in all: a prefix.
        let mut of_all = Vec::new();
        reader.for_each_values(&positions, b"content", BIG, 2 * BIG, threads, |of, _| {
            of_all.extend(of);
            true
        })?;
        assert_eq!(of_all, [1, 2]);
    }
    fs::remove_dir_all(&dir).unwrap();
    Ok(())
}
