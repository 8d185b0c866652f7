//! The streaming scan: parts scanned apart read as one pass, part bounds, and the records the
//! loader finds.

use super::*;

/// Files that differ in where their lines, header and end fall.
fn files() -> Vec<Vec<u8>> {
    let header = br#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}"#;
    let entry = |i: usize| {
        format!(
            r#"{{"type":"message","id":"e{i}","parentId":null,"timestamp":"t","message":{{"role":"user","content":"{}"}}}}"#,
            "x".repeat(i * 7 % 300)
        )
    };
    let mut out = Vec::new();
    let body: Vec<String> = (0..200).map(entry).collect();
    let lines = |pre: &[&[u8]], post: &str| {
        let mut f = Vec::new();
        for l in pre {
            f.extend_from_slice(l);
            f.push(b'\n');
        }
        f.extend_from_slice(header);
        f.push(b'\n');
        f.extend_from_slice(body.join("\n").as_bytes());
        f.extend_from_slice(post.as_bytes());
        f
    };
    out.push(lines(&[], "\n"));
    // A torn tail, blank lines, CRLF, garbage and a second header.
    out.push(lines(&[], "\n\n{\"type\":\"message\",\"id\":\"torn"));
    out.push(lines(
        &[b"not json", b"", br#"{"type":"message","id":"lead"}"#],
        "\r\n\n",
    ));
    let mut second = lines(&[], "\n");
    second.extend_from_slice(
        br#"{"type":"session","version":2,"id":"s2","timestamp":"t","cwd":"/w"}"#,
    );
    out.push(second);
    // The header far into the file (found by a later part), one long line.
    let lead: Vec<Vec<u8>> = (0..150).map(|i| entry(i).into_bytes()).collect();
    let lead: Vec<&[u8]> = lead.iter().map(|l| l.as_slice()).collect();
    out.push(lines(&lead, ""));
    let long = format!(
        r#"{{"type":"message","id":"long","parentId":null,"timestamp":"t","message":{{"role":"user","content":"{}"}}}}"#,
        "y".repeat(100_000)
    );
    out.push(format!("{}\n{long}\n", String::from_utf8_lossy(header)).into_bytes());
    out.push(Vec::new());
    // Entries glued after torn records: mid-file, at the end without a newline, and before
    // the header (not read there).
    let torn = r#"{"type":"message","id":"cut","parentId":null,"message":{"content":"ab"#;
    let glued = |i: usize| format!("{torn}{}", entry(1000 + i));
    let mut f = lines(&[glued(0).as_bytes()], "\n");
    f.extend_from_slice(format!("{}\n{}\n{}", glued(1), entry(3), glued(2)).as_bytes());
    out.push(f);
    out
}

fn summary(s: &Scan) -> (String, String, String, bool) {
    (
        format!("{:?}", s.recs),
        s.header_id.clone(),
        format!("{:?}", s.header_version),
        s.ends_with_newline,
    )
}

#[test]
fn a_file_scanned_in_parts_is_scanned_as_in_one() {
    let dir = crate::testing::temp_dir("scan-parts");
    for (i, bytes) in files().iter().enumerate() {
        let path = dir.join(format!("f{i}.jsonl"));
        std::fs::write(&path, bytes).unwrap();
        let whole = scan_file_in_parts(&path, Split::never()).unwrap().unwrap();
        for threads in [2, 3, 7, 64] {
            let parts = scan_file_in_parts(&path, Split::always(threads))
                .unwrap()
                .unwrap();
            assert_eq!(
                summary(&parts),
                summary(&whole),
                "file {i}, {threads} threads"
            );
        }
    }
    assert!(scan_file_in_parts(&dir.join("missing"), Split::always(2))
        .unwrap()
        .is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_scan_finds_the_records_the_loader_finds() {
    let dir = crate::testing::temp_dir("scan-loader");
    for (i, bytes) in files().iter().enumerate() {
        let path = dir.join(format!("f{i}.jsonl"));
        std::fs::write(&path, bytes).unwrap();
        let scan = scan_file_in_parts(&path, Split::never()).unwrap().unwrap();
        let scanned: Vec<_> = scan
            .recs
            .iter()
            .map(|r| (r.0, r.1, r.2.id.clone()))
            .collect();
        let loaded = super::super::LoadedFile::parse(bytes.clone());
        let read: Vec<_> = loaded
            .lines
            .iter()
            .filter_map(|(s, e, m)| m.as_ref().map(|m| (*s, *e, m.id.clone())))
            .collect();
        assert_eq!(scanned, read, "file {i}");
    }
    let last = scan_file_in_parts(
        &dir.join(format!("f{}.jsonl", files().len() - 1)),
        Split::never(),
    )
    .unwrap()
    .unwrap();
    let ids: Vec<&str> = last.recs.iter().map(|r| &*r.2.id).collect();
    assert!(
        ids.contains(&"\"e1001\"") && ids.contains(&"\"e1002\""),
        "{ids:?}"
    );
    assert!(!ids.contains(&"\"e1000\""), "not before the header");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parts_start_after_a_newline_and_never_split_a_line() {
    let dir = crate::testing::temp_dir("scan-bounds");
    let path = dir.join("f.jsonl");
    let bytes = b"aaaa\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\ncc\nd";
    std::fs::write(&path, bytes).unwrap();
    let file = File::open(&path).unwrap();
    let len = bytes.len() as u64;
    for parts in 1..12 {
        let b = part_bounds(&file, len, parts).unwrap();
        assert_eq!((b[0], *b.last().unwrap()), (0, len));
        assert!(b.windows(2).all(|w| w[0] < w[1]), "{b:?}");
        assert!(
            b[1..b.len() - 1]
                .iter()
                .all(|&x| bytes[x as usize - 1] == b'\n'),
            "{b:?}"
        );
    }
    drop(file);
    std::fs::remove_dir_all(&dir).unwrap();
}
