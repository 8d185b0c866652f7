//! Skeleton records: an `inMemory` session gives the core only the members it reads of an entry
//! (JS keeps the entry as an object). The structure must come out as from the whole entry, and a
//! skeleton must never be handed out as the entry nor reach a session that writes.

use pi_session_core::materialize::{CutSink, Step};
use pi_session_core::{context, tree, Error, ErrorCode, Session};

mod common;
use common::temp_dir;

struct NoCuts;
impl CutSink for NoCuts {
    fn cut(&mut self, _: u32, _: &[Step<'_>], _: &[u8], _: bool) {}
}

const MSG_A: &str = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"question","extra":[1,2,3]}}"#;
const MSG_B: &str = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"assistant","content":"answer","provider":"p","model":"m"}}"#;
const LABEL: &str = r#"{"type":"label","id":"l","parentId":"b","timestamp":"2024-01-01T00:00:03.000Z","targetId":"a","label":"start"}"#;
const COMPACTION: &str = r#"{"type":"compaction","id":"c","parentId":"l","timestamp":"2024-01-01T00:00:04.000Z","summary":"s","firstKeptEntryId":"b","tokensBefore":5,"details":{"big":"payload"}}"#;

/// What JS sends for each of the lines above in a session that never writes.
const SKEL_A: &str = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user"}}"#;
const SKEL_B: &str = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"assistant"}}"#;
const SKEL_C: &str = r#"{"type":"compaction","id":"c","parentId":"l","timestamp":"2024-01-01T00:00:04.000Z","firstKeptEntryId":"b"}"#;

fn in_memory() -> Session {
    let mut s = Session::blank("/w".into(), String::new(), false).unwrap();
    s.new_session(None, None).unwrap();
    s
}

fn code(r: Result<impl Sized, Error>) -> ErrorCode {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.code,
    }
}

#[test]
fn skeletons_give_the_structure_of_whole_entries() {
    let mut whole = in_memory();
    let mut skel = in_memory();
    for line in [MSG_A, MSG_B, LABEL, COMPACTION] {
        whole.append(line.as_bytes()).unwrap();
    }
    for (line, skeleton) in [
        (SKEL_A, true),
        (SKEL_B, true),
        (LABEL, false),
        (SKEL_C, true),
    ] {
        if skeleton {
            skel.append_skeleton(line.as_bytes()).unwrap();
        } else {
            skel.append(line.as_bytes()).unwrap();
        }
    }
    assert_eq!(skel.record_count(), whole.record_count());
    assert_eq!(skel.entry_count(), whole.entry_count());
    let (sp, wp) = (skel.context_path(), whole.context_path());
    assert_eq!(sp, wp);
    assert_eq!(context::select(&skel, &sp), context::select(&whole, &wp));
    assert_eq!(context::plan(&skel, &sp), context::plan(&whole, &wp));
    assert_eq!(tree::tree(&skel), tree::tree(&whole));
    assert_eq!(skel.branch_from(None), whole.branch_from(None));
    assert_eq!(skel.label_pos("\"a\""), whole.label_pos("\"a\""));
}

#[test]
fn a_skeleton_is_never_handed_out() {
    let mut s = in_memory();
    let a = s.append_skeleton(SKEL_A.as_bytes()).unwrap();
    let b = s.append(MSG_B.as_bytes()).unwrap();
    assert_eq!(code(s.line_for_js(a, &mut NoCuts)), ErrorCode::Internal);
    assert_eq!(
        s.prepare_batches(&[b, a], usize::MAX, usize::MAX, 1)
            .unwrap_err()
            .code,
        ErrorCode::Internal
    );
    // Whole records still are.
    assert_eq!(s.line_for_js(b, &mut NoCuts).unwrap(), MSG_B);
}

#[test]
fn a_session_that_writes_takes_no_skeleton() {
    let dir = temp_dir("skeletons");
    let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
    s.new_session(None, None).unwrap();
    assert_eq!(
        code(s.append_skeleton(SKEL_A.as_bytes())),
        ErrorCode::InvalidArgument
    );
    assert_eq!(s.record_count(), 1, "nothing was added");
    let header = s.line(0).unwrap().into_owned();
    let header = String::from_utf8(header).unwrap();
    assert_eq!(
        code(s.load_preloaded(vec![header.clone(), SKEL_A.into()], true)),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(s.push_preloaded(vec![SKEL_A.into()], true)),
        ErrorCode::InvalidArgument
    );
    // Nor records of an in-memory session that are skeletons.
    let mut source = in_memory();
    source.append_skeleton(SKEL_A.as_bytes()).unwrap();
    assert_eq!(
        code(s.load_records_of(&mut source, &[0, 1])),
        ErrorCode::InvalidArgument
    );
    s.append(MSG_A.as_bytes()).unwrap();
    assert!(std::fs::read_to_string(s.session_file().unwrap())
        .unwrap()
        .ends_with(&format!("{MSG_A}\n")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn preloaded_skeletons_are_marked_but_headers_and_labels_are_whole() {
    let mut s = Session::blank("/w".into(), String::new(), false).unwrap();
    let header = r#"{"type":"session","version":3,"id":"h","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#;
    s.load_preloaded(
        vec![header.into(), SKEL_A.into(), SKEL_B.into(), LABEL.into()],
        true,
    )
    .unwrap();
    assert_eq!(s.session_id(), "h");
    assert_eq!(s.line_for_js(0, &mut NoCuts).unwrap(), header);
    assert_eq!(code(s.line_for_js(1, &mut NoCuts)), ErrorCode::Internal);
    assert_eq!(code(s.line_for_js(2, &mut NoCuts)), ErrorCode::Internal);
    assert_eq!(s.line_for_js(3, &mut NoCuts).unwrap(), LABEL);
    // Without a header, after a new one.
    let mut t = in_memory();
    t.push_preloaded(vec![SKEL_A.into(), LABEL.into()], true)
        .unwrap();
    assert_eq!(code(t.line_for_js(1, &mut NoCuts)), ErrorCode::Internal);
    assert_eq!(t.line_for_js(2, &mut NoCuts).unwrap(), LABEL);
    // An old version would be migrated from its lines, which a skeleton lacks: refused.
    let v1 = r#"{"type":"session","id":"old","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let mut u = Session::blank("/w".into(), String::new(), false).unwrap();
    assert_eq!(
        code(u.load_preloaded(vec![v1.into(), SKEL_A.into()], true)),
        ErrorCode::Internal
    );
}

#[test]
fn branched_copies_of_skeletons_are_skeletons() {
    let mut s = in_memory();
    s.append_skeleton(SKEL_A.as_bytes()).unwrap();
    s.append_skeleton(SKEL_B.as_bytes()).unwrap();
    s.append(LABEL.as_bytes()).unwrap();
    // The compaction's first kept entry points across the label, so it is re-chained: a new line.
    s.append_skeleton(SKEL_C.as_bytes()).unwrap();
    assert_eq!(s.create_branched_session(Some("\"c\""), "c").unwrap(), None);
    // Header, a, b, c (re-chained past the label), then the label re-created.
    assert_eq!(s.record_count(), 5);
    assert!(s.line_for_js(0, &mut NoCuts).is_ok());
    for pos in 1..4 {
        assert_eq!(
            code(s.line_for_js(pos, &mut NoCuts)),
            ErrorCode::Internal,
            "record {pos}"
        );
    }
    let label = s.line_for_js(4, &mut NoCuts).unwrap();
    assert!(
        label.contains(r#""targetId":"a","label":"start""#),
        "{label}"
    );
}
