//! Unit tests of the JSON module's API: strings, objects, values, the fast paths (validate,
//! top_level_members, is_canonical) and number formatting.

use pi_session_core::json::{
    is_canonical, normalize, parse, to_json, top_level_members, validate, visit_canonical_object,
    write_js_string, write_json, write_number, JsStr, Object, ParseError, Value,
};

fn num(n: f64) -> String {
    let mut s = String::new();
    write_number(n, &mut s);
    s
}

fn obj(text: &str) -> Object {
    parse(text.as_bytes())
        .expect("valid")
        .into_object()
        .expect("object")
}

fn keys(o: &Object) -> Vec<&str> {
    o.keys().map(JsStr::as_escaped).collect()
}

#[test]
fn numbers_are_written_like_number_prototype_to_string() {
    let table: &[(f64, &str)] = &[
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (0.1 + 0.2, "0.30000000000000004"),
        (123456789012345680000.0, "123456789012345680000"),
        (5.0, "5"),
        (-0.0, "0"),
        (0.0, "0"),
        (-1.5, "-1.5"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2.5e-7, "2.5e-7"),
        (1.0, "1"),
        (f64::NAN, "null"),
        (f64::INFINITY, "null"),
        (f64::NEG_INFINITY, "null"),
        (9007199254740993.0, "9007199254740992"),
        (4294967295.0, "4294967295"),
    ];
    for &(n, text) in table {
        assert_eq!(num(n), text, "{n:?}");
    }
}

#[test]
fn a_rust_string_is_escaped_the_way_json_stringify_does() {
    let s = JsStr::from_str("a\"b\\c\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/é😀\u{2028}\u{2029}");
    assert_eq!(
        s.as_escaped(),
        "a\\\"b\\\\c\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}/é😀\u{2028}\u{2029}"
    );
    let mut out = String::new();
    write_js_string(&s, &mut out);
    assert_eq!(out, format!("\"{}\"", s.as_escaped()));
    assert_eq!(
        s.to_string_lossy(),
        "a\"b\\c\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/é😀\u{2028}\u{2029}"
    );
}

#[test]
fn a_plain_string_is_its_own_canonical_form() {
    let s = JsStr::from_str("hello world");
    assert_eq!(s.as_escaped(), "hello world");
    assert_eq!(s.to_string_lossy(), "hello world");
    assert!(JsStr::from_str("").is_empty());
    assert!(!s.is_empty());
    assert_eq!(JsStr::from("x"), JsStr::from(String::from("x")));
    assert_eq!(JsStr::from(String::from("a\nb")).as_escaped(), "a\\nb");
}

#[test]
fn lone_surrogates_survive_parsing_and_decode_lossily() {
    let v = parse(br#""a\uD800b\udc00\ud83d\ude00""#).unwrap();
    let s = v.as_str().unwrap();
    assert_eq!(s.as_escaped(), "a\\ud800b\\udc00😀");
    assert_eq!(s.to_string_lossy(), "a\u{fffd}b\u{fffd}😀");
    assert!(!s.eq_str("a\u{fffd}b\u{fffd}😀"));
    assert_eq!(to_json(&v), "\"a\\ud800b\\udc00😀\"");
}

#[test]
fn eq_str_compares_with_the_decoded_string() {
    let plain = JsStr::from_str("type");
    assert!(plain.eq_str("type"));
    assert!(!plain.eq_str("typ"));
    let escaped = JsStr::from_str("line\n\"quoted\"");
    assert!(escaped.eq_str("line\n\"quoted\""));
    assert!(!escaped.eq_str("line\\n\"quoted\""));
    // A canonical form without backslashes never equals a string that needs escaping.
    assert!(!JsStr::from_str("a").eq_str("a\n"));
    let parsed = parse(br#""\u0074ype""#).unwrap();
    assert!(parsed.as_str().unwrap().eq_str("type"));
}

#[test]
fn decoding_an_unchecked_escaped_string_is_total() {
    let s = JsStr::from_escaped_unchecked("\\/\\ud83d\\ude00\\u0041\\q\\".to_owned());
    assert_eq!(s.to_string_lossy(), "/😀A\\q\\");
}

#[test]
fn object_keys_enumerate_indices_first_then_insertion_order() {
    let mut o = Object::new();
    for k in [
        "b",
        "10",
        "1",
        "a",
        "01",
        "-1",
        "4294967294",
        "4294967295",
        "1.5",
        "0",
    ] {
        o.insert(JsStr::from_str(k), Value::Null);
    }
    assert_eq!(
        keys(&o),
        [
            "0",
            "1",
            "10",
            "4294967294",
            "b",
            "a",
            "01",
            "-1",
            "4294967295",
            "1.5"
        ]
    );
    assert_eq!(o.len(), 10);
}

#[test]
fn assigning_an_existing_key_keeps_its_position() {
    let mut o = obj(r#"{"a":1,"b":2,"c":3}"#);
    o.insert(JsStr::from_str("a"), Value::Number(9.0));
    assert_eq!(to_json(&Value::Object(o)), r#"{"a":9,"b":2,"c":3}"#);
}

#[test]
fn deleting_a_key_keeps_the_order_of_the_rest() {
    let mut o = obj(r#"{"a":1,"2":2,"b":3,"1":4,"c":5}"#);
    assert_eq!(o.remove("b"), Some(Value::Number(3.0)));
    assert_eq!(o.remove("1"), Some(Value::Number(4.0)));
    assert_eq!(o.remove("zz"), None);
    assert_eq!(keys(&o), ["2", "a", "c"]);
    o.insert(JsStr::from_str("b"), Value::Bool(true));
    assert_eq!(keys(&o), ["2", "a", "c", "b"]);
}

#[test]
fn lookups_take_decoded_keys() {
    let mut o = obj(r#"{"a\"b":1,"\u0041":2,"line\nbreak":3,"7":4}"#);
    assert_eq!(o.get("a\"b"), Some(&Value::Number(1.0)));
    assert_eq!(o.get("A"), Some(&Value::Number(2.0)));
    assert_eq!(o.get("line\nbreak"), Some(&Value::Number(3.0)));
    assert_eq!(o.get("7"), Some(&Value::Number(4.0)));
    assert_eq!(o.get("07"), None);
    assert!(o.contains_key("A"));
    *o.get_mut("A").unwrap() = Value::from("x");
    assert_eq!(
        o.get("A").and_then(Value::as_str),
        Some(&JsStr::from_str("x"))
    );
    assert_eq!(
        o.get_js(&JsStr::from_str("a\"b")),
        Some(&Value::Number(1.0))
    );
}

/// Deterministic xorshift so the model test needs no extra crates.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn large_objects_behave_like_a_simple_model_of_js_objects() {
    // The model: a Vec in enumeration order, maintained by linear search. Large key counts
    // exercise the hash index (built, grown, rebuilt on delete).
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut o = Object::new();
    let mut model: Vec<(String, f64)> = Vec::new();
    for step in 0..20_000 {
        let key = match rng.next(4) {
            0 => rng.next(300).to_string(),
            1 => format!("k{}", rng.next(600)),
            2 => format!("0{}", rng.next(50)),
            _ => format!("q\"{}", rng.next(100)),
        };
        if rng.next(5) == 0 {
            let got = o.remove(&key).and_then(|v| v.as_f64());
            let pos = model.iter().position(|(k, _)| *k == key);
            assert_eq!(
                got,
                pos.map(|p| model.remove(p).1),
                "step {step}: delete {key}"
            );
        } else {
            let value = step as f64;
            o.insert(JsStr::from_str(&key), Value::Number(value));
            match model.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = value,
                None => {
                    let is_index =
                        key == "0" || (!key.starts_with('0') && key.parse::<u32>().is_ok());
                    let pos = if is_index {
                        let n: u32 = key.parse().unwrap();
                        model
                            .iter()
                            .position(|(k, _)| {
                                k.parse::<u32>().map_or(true, |m| m > n)
                                    || k.starts_with('0') && k.len() > 1
                            })
                            .unwrap_or(model.len())
                    } else {
                        model.len()
                    };
                    model.insert(pos, (key.clone(), value));
                }
            }
        }
        assert_eq!(o.len(), model.len());
        if step % 1000 == 0 {
            let ours: Vec<(String, f64)> = o
                .iter()
                .map(|(k, v)| (k.to_string_lossy(), v.as_f64().unwrap()))
                .collect();
            assert_eq!(ours, model, "step {step}");
            for (k, v) in &model {
                assert_eq!(o.get(k).and_then(Value::as_f64), Some(*v));
            }
        }
    }
}

#[test]
fn parsing_many_descending_index_keys_with_duplicates_is_correct() {
    let n = 50_000;
    let mut text = String::from("{");
    for i in (0..n).rev() {
        text.push_str(&format!("\"{i}\":{i},\"k{i}\":{i},"));
    }
    text.push_str("\"0\":\"last\",\"k5\":\"five\"}");
    let o = obj(&text);
    assert_eq!(o.len(), 2 * n);
    assert_eq!(o.keys().next().unwrap().as_escaped(), "0");
    assert_eq!(o.get("0"), Some(&Value::from("last")));
    assert_eq!(o.get("k5"), Some(&Value::from("five")));
    let names: Vec<&str> = keys(&o)[n..n + 2].to_vec();
    assert_eq!(names, [format!("k{}", n - 1), format!("k{}", n - 2)]);
    assert_eq!(
        normalize(text.as_bytes()).unwrap(),
        to_json(&Value::Object(o))
    );
}

#[test]
fn truthiness_follows_javascript() {
    let falsy = ["null", "false", "0", "-0", "0.0", "\"\""];
    let truthy = ["true", "1", "-1", "\"0\"", "\" \"", "[]", "{}", "1e-300"];
    for t in falsy {
        assert!(!parse(t.as_bytes()).unwrap().is_truthy(), "{t}");
    }
    for t in truthy {
        assert!(parse(t.as_bytes()).unwrap().is_truthy(), "{t}");
    }
    assert!(!Value::Number(f64::NAN).is_truthy());
}

#[test]
fn value_accessors_only_answer_for_their_kind() {
    let mut v = parse(br#"{"a":{"b":[1,"s"]}}"#).unwrap();
    assert!(v.get("a").unwrap().get("b").unwrap().as_array().is_some());
    assert_eq!(v.get("a").unwrap().get("zz"), None);
    assert_eq!(Value::Number(1.0).get("a"), None);
    assert_eq!(Value::from("a").get("a"), None);
    assert_eq!(Value::Null.as_str(), None);
    let inner = v.get_mut("a").unwrap().take();
    assert!(v.get("a").unwrap().is_null());
    let arr = inner
        .into_object()
        .unwrap()
        .remove("b")
        .unwrap()
        .into_array()
        .unwrap();
    assert_eq!(arr.len(), 2);
    assert_eq!(format!("{:?}", Value::Array(arr)), r#"[1,"s"]"#);
    assert_eq!(
        format!("{:?}", Value::Array(vec![f64::NAN.into(), (-0.0).into()])),
        "[NaN,-0]"
    );
}

#[test]
fn write_json_appends_to_existing_output() {
    let mut out = String::from("[");
    write_json(&parse(b"[[],{},[1]]").unwrap(), &mut out);
    assert_eq!(out, "[[[],{},[1]]");
}

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
