//! Unit tests of the JSON module's fast paths: validate, parse errors, top_level_members,
//! is_canonical, visit_canonical_object, normalize and the string scanner (the rest of its API is
//! in json_api.rs).

use pi_session_core::json::{
    is_canonical, normalize, parse, top_level_members, validate, visit_canonical_object, ParseError,
};

#[test]
fn validate_accepts_exactly_what_parse_accepts() {
    for ok in [
        "{}",
        " [1, 2.5e3, \"x\\u00e9\", null, true] ",
        "\"\\ud800\"",
        "-0",
    ] {
        assert!(validate(ok.as_bytes()), "{ok}");
    }
    for bad in [
        "",
        "{",
        "[1,]",
        "01",
        "\"\t\"",
        "\"\\x\"",
        "1 2",
        "\u{feff}1",
        "[1]]",
    ] {
        assert!(!validate(bad.as_bytes()), "{bad}");
    }
    // Invalid UTF-8 inside strings is read as U+FFFD, so it is still valid JSON.
    assert!(validate(b"\"\xff\xfe\""));
    assert!(!validate(b"\xff"));
}

#[test]
fn validate_handles_a_fifty_megabyte_string_line() {
    let body =
        "Lorem ipsum dolor sit amet, \\\"quoted\\\" / é 😀 \\n".repeat(50 * 1024 * 1024 / 50);
    let line = format!(r#"{{"type":"message","text":"{body}","n":1}}"#);
    assert!(line.len() >= 50 * 1024 * 1024);
    assert!(validate(line.as_bytes()));
    let plain = format!("\"{}\"", "x".repeat(50 * 1024 * 1024));
    assert!(validate(plain.as_bytes()));
    assert!(is_canonical(plain.as_bytes()));
    // A control character or missing quote at the very end is still found.
    let mut bad = plain.clone().into_bytes();
    let last = bad.len() - 2;
    bad[last] = b'\n';
    assert!(!validate(&bad));
    assert!(!validate(&plain.as_bytes()[..plain.len() - 1]));
}

#[test]
fn parse_errors_point_at_the_offending_byte() {
    let cases: &[(&str, usize)] = &[
        ("", 0),
        ("[1,]", 3),
        ("\"abc", 4),
        ("{\"a\" 1}", 5),
        ("[1] x", 4),
        ("\"\\u12G4\"", 5),
        ("\"\\x\"", 2),
        ("\"a\tb\"", 2),
        ("-", 1),
        ("1.", 2),
        ("tru", 3),
    ];
    for &(text, offset) in cases {
        let err: ParseError = parse(text.as_bytes()).unwrap_err();
        assert_eq!(err.offset, offset, "{text:?}: {err}");
        assert!(!err.message.is_empty());
    }
    assert!(parse(b"[1,]").unwrap_err().to_string().contains("byte 3"));
}

#[test]
fn top_level_members_lists_keys_and_raw_value_ranges() {
    let line = br#" { "type" : "message" , "\u0069d":[1, 2] ,"n":{"x":null},"type":5 } "#;
    let members = top_level_members(line).unwrap().unwrap();
    let seen: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(k, r)| (k.as_escaped(), &line[r.clone()]))
        .collect();
    assert_eq!(
        seen,
        [
            ("type", &b"\"message\""[..]),
            ("id", b"[1, 2]"),
            ("n", b"{\"x\":null}"),
            ("type", b"5"),
        ]
    );
}

#[test]
fn top_level_members_is_none_for_other_documents_and_err_for_invalid_ones() {
    for doc in ["5", "\"s\"", "null", "[]", "true", " [{}] "] {
        assert_eq!(top_level_members(doc.as_bytes()), Ok(None), "{doc}");
    }
    assert_eq!(top_level_members(b"{}"), Ok(Some(Vec::new())));
    for bad in [
        "{",
        "{\"a\":1,}",
        "{\"a\":1} x",
        "{\"a\":[1,}",
        "[1",
        "{\"a\":\"\\q\"}",
        "",
    ] {
        assert!(top_level_members(bad.as_bytes()).is_err(), "{bad}");
    }
    let keys = top_level_members(br#"{"\ud800":1,"a\/b":2}"#)
        .unwrap()
        .unwrap();
    assert_eq!(keys[0].0.as_escaped(), "\\ud800");
    assert_eq!(keys[1].0.as_escaped(), "a/b");
}

#[test]
fn is_canonical_accepts_only_json_stringify_output() {
    let canonical = [
        r#"{"a":1,"b":[true,null,"x"]}"#,
        r#"{"0":1,"1":2,"a":3,"4294967295":4}"#,
        r#""\ud800\n\u0001é😀 /""#,
        "1e+21",
        "0.30000000000000004",
        "-5",
        "[]",
        "{}",
    ];
    for c in canonical {
        assert!(is_canonical(c.as_bytes()), "{c}");
        assert_eq!(normalize(c.as_bytes()).as_deref(), Some(c));
    }
    let not_canonical = [
        "{ \"a\":1}",
        "{\"a\":1}\n",
        r#""a\/b""#,
        r#""\u00e9""#,
        r#""\u000A""#,
        r#""\u001F""#,
        r#""\uD800""#,
        r#""\ud83d\ude00""#,
        "1.0",
        "-0",
        "1E+21",
        "1e21",
        "100e-2",
        r#"{"a":1,"a":2}"#,
        r#"{"b":1,"0":2}"#,
        r#"{"1":1,"0":2}"#,
        r#"{"1":1,"1":2}"#,
        "\"\u{fffd}\u{fffd}",
        "[1,]",
    ];
    for c in not_canonical {
        assert!(!is_canonical(c.as_bytes()), "{c}");
    }
    assert!(!is_canonical(b"\"\xff\""));
    assert!(is_canonical("\"\u{fffd}\"".as_bytes()));
    // UTF-8 is checked in every part of the string scan: short gaps, 32-byte blocks, the tail.
    for pad in [0, 3, 7, 8, 15, 16, 31, 32, 33, 64, 100] {
        let ascii = "a".repeat(pad);
        let good = format!("{{\"k\":\"{ascii}é{ascii}\\n{ascii}😀\"}}");
        assert!(is_canonical(good.as_bytes()), "{good}");
        for bad in [
            &b"\xff"[..],
            b"\xc3",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xc0\xaf",
        ] {
            let mut doc = format!("{{\"k\":\"{ascii}").into_bytes();
            doc.extend_from_slice(bad);
            doc.extend_from_slice(format!("{ascii}\"}}").as_bytes());
            assert!(!is_canonical(&doc), "{}", String::from_utf8_lossy(&doc));
            let mut key = b"{\"".to_vec();
            key.extend_from_slice(bad);
            key.extend_from_slice(format!("{ascii}\":1}}").as_bytes());
            assert!(!is_canonical(&key), "{}", String::from_utf8_lossy(&key));
        }
    }
}

#[test]
fn visit_canonical_object_reports_members_of_canonical_objects_only() {
    let line = r#"{"type":"message","id":"a\"b","n":-1.5e+21,"o":{"x":[1,{"y":"}"}]},"t":true,"e":{},"é":"😀"}"#;
    let mut seen = Vec::new();
    assert!(visit_canonical_object(line.as_bytes(), |k, r| seen.push((
        String::from_utf8_lossy(k).into_owned(),
        line[r].to_owned()
    ))));
    let expect = [
        ("type", "\"message\""),
        ("id", "\"a\\\"b\""),
        ("n", "-1.5e+21"),
        ("o", r#"{"x":[1,{"y":"}"}]}"#),
        ("t", "true"),
        ("e", "{}"),
        ("é", "\"😀\""),
    ];
    let seen: Vec<(&str, &str)> = seen.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(seen, expect);
    assert!(visit_canonical_object(b"{}", |_, _| panic!("no members")));
    for not in [
        &b"[1]"[..],
        b"5",
        b"\"s\"",
        b"{ \"a\":1}",
        br#"{"a":1,"a":2}"#,
        br#"{"a":1.0}"#,
        b"{\"a\":\"\xff\"}",
        br#"{"a":1"#,
    ] {
        assert!(
            !visit_canonical_object(not, |_, _| panic!("not visited")),
            "{}",
            String::from_utf8_lossy(not)
        );
    }
}

#[test]
fn normalize_applies_javascript_object_semantics() {
    let cases: [(&[u8], &str); 4] = [
        (
            br#" {"b" : 1, "1": 2, "b": 3, "0": 4} "#,
            r#"{"0":4,"1":2,"b":3}"#,
        ),
        (br#"[1.0, -0, 1E2, "\u0041\/"]"#, r#"[1,0,100,"A/"]"#),
        (b"\"\\uDBFF\\uDFFF\"", "\"\u{10ffff}\""),
        (b"\"\xff\"", "\"\u{fffd}\""),
    ];
    for (input, output) in cases {
        assert_eq!(normalize(input).as_deref(), Some(output), "{output}");
    }
    assert_eq!(normalize(b"[1,]"), None);
    // Many keys: duplicates are tracked by hashing rather than scanning.
    let many: Vec<String> = (0..100).map(|i| format!("\"k{i}\":{i}")).collect();
    let canonical = format!("{{{}}}", many.join(","));
    assert!(is_canonical(canonical.as_bytes()));
    let spaced = format!("{{ {} }}", many.join(", "));
    assert_eq!(normalize(spaced.as_bytes()).unwrap(), canonical);
    let duplicated = format!("{{{},\"k7\":\"again\"}}", many.join(","));
    assert!(!is_canonical(duplicated.as_bytes()));
    assert_eq!(
        normalize(duplicated.as_bytes()).unwrap(),
        canonical.replace("\"k7\":7", "\"k7\":\"again\"")
    );
}

#[test]
fn string_scanning_finds_special_bytes_at_every_offset() {
    // The string scanner works a word and a block at a time; put each interesting byte at
    // every offset of a few blocks and compare with what JSON.parse must do.
    let interesting: &[u8] = &[
        0x00, 0x1f, 0x20, b'"', b'\\', 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xff,
    ];
    for &c in interesting {
        for at in 0..100 {
            let mut doc = vec![b'"'];
            doc.extend(std::iter::repeat_n(b'a', at));
            doc.push(c);
            doc.extend(std::iter::repeat_n(b'z', 70));
            doc.push(b'"');
            let valid = c >= 0x20 && c != b'"' && c != b'\\';
            assert_eq!(validate(&doc), valid, "byte {c:#x} at {at}");
            assert_eq!(parse(&doc).is_ok(), valid, "byte {c:#x} at {at}");
            let err = parse(&doc).err().map(|e| e.offset);
            if c < 0x20 {
                assert_eq!(err, Some(at + 1), "byte {c:#x} at {at}");
            }
            if valid {
                let s = parse(&doc).unwrap().into_string().unwrap();
                assert_eq!(s.escaped_len(), at + 70 + if c >= 0x80 { 3 } else { 1 });
            }
        }
    }
}
