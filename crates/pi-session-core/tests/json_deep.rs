//! Deep nesting must never overflow the stack: every pass over a value (parse, validate,
//! serialize, clone, compare, debug-print, drop) uses explicit heap stacks. The tests run on a
//! thread with a deliberately small stack so that any per-level recursion fails loudly.

use pi_session_core::json::{
    is_canonical, normalize, parse, to_json, top_level_members, validate, JsStr, Object, Value,
};

const SMALL_STACK: usize = 256 * 1024;

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the test thread panicked (or overflowed its stack)");
}

fn nested_arrays(depth: usize) -> String {
    let mut s = "[".repeat(depth);
    s.push_str(&"]".repeat(depth));
    s
}

fn nested_objects(depth: usize) -> String {
    let mut s = r#"{"a":"#.repeat(depth);
    s.push('1');
    s.push_str(&"}".repeat(depth));
    s
}

#[test]
fn a_hundred_thousand_nested_arrays_parse_serialize_and_drop() {
    on_small_stack(|| {
        let text = nested_arrays(100_000);
        assert!(validate(text.as_bytes()));
        assert!(is_canonical(text.as_bytes()));
        assert_eq!(normalize(text.as_bytes()).as_deref(), Some(text.as_str()));
        assert_eq!(top_level_members(text.as_bytes()), Ok(None));
        let value = parse(text.as_bytes()).unwrap();
        assert_eq!(to_json(&value), text);
        drop(value);
    });
}

#[test]
fn a_hundred_thousand_nested_objects_parse_clone_compare_and_drop() {
    on_small_stack(|| {
        let text = nested_objects(100_000);
        assert!(validate(text.as_bytes()));
        let spaced = text.replace(':', " : ");
        assert_eq!(normalize(spaced.as_bytes()).as_deref(), Some(text.as_str()));
        let members = top_level_members(text.as_bytes()).unwrap().unwrap();
        assert_eq!(members.len(), 1);
        assert_eq!(members[0].1, 5..text.len() - 1);
        let value = parse(text.as_bytes()).unwrap();
        let copy = value.clone();
        assert!(copy == value);
        assert_eq!(to_json(&copy), text);
        assert_eq!(format!("{copy:?}"), text);
        drop(copy);
        drop(value);
    });
}

#[test]
fn two_hundred_thousand_nested_arrays_built_in_code_drop_without_recursion() {
    on_small_stack(|| {
        let mut v = Value::Null;
        for i in 0..200_000 {
            v = if i % 3 == 0 {
                let mut o = Object::new();
                o.insert(JsStr::from_str("k"), v);
                o.insert(JsStr::from_str("n"), Value::Number(i as f64));
                Value::Object(o)
            } else {
                Value::Array(vec![Value::Bool(true), v, Value::from("x")])
            };
        }
        drop(v);
    });
}

#[test]
fn deeply_nested_invalid_documents_fail_cleanly() {
    on_small_stack(|| {
        let unclosed = "[".repeat(200_000);
        assert!(!validate(unclosed.as_bytes()));
        let err = parse(unclosed.as_bytes()).unwrap_err();
        assert_eq!(err.offset, unclosed.len());
        let mut mismatched = nested_arrays(100_000);
        mismatched.replace_range(100_000..100_001, "}");
        assert!(parse(mismatched.as_bytes()).is_err());
        assert_eq!(normalize(mismatched.as_bytes()), None);
    });
}

#[test]
fn wide_values_with_deep_branches_clone_and_drop() {
    on_small_stack(|| {
        let branch = nested_arrays(20_000);
        let text = format!("[{}]", vec![branch.as_str(); 20].join(","));
        let value = parse(text.as_bytes()).unwrap();
        let copy = value.clone();
        assert!(copy == value);
        let mut other = parse(text.as_bytes()).unwrap();
        other.as_array_mut().unwrap()[19] = Value::Null;
        assert!(copy != other);
        assert_eq!(to_json(&copy), text);
    });
}
