//! Unit tests of the JSON module's API: strings, objects, values and number formatting (its fast
//! paths are in json_fast_paths.rs).

use pi_session_core::json::{
    normalize, parse, to_json, write_js_string, write_json, write_number, JsStr, Object, Value,
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
