//! Compares the JSON module with Node's `JSON.stringify(JSON.parse(text))` on fixtures generated
//! by `tests/data/gen_json_cases.mjs` (hand-picked edge cases plus seeded random documents).

use pi_session_core::json::{
    is_canonical, normalize, parse, to_json, top_level_members, validate, visit_canonical_object,
    Object, Value,
};

struct Case {
    name: String,
    input: Vec<u8>,
    /// `None` when `JSON.parse` throws.
    output: Option<String>,
}

fn load(file: &str) -> Vec<Case> {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(|line| {
            let rec = parse(line.as_bytes()).unwrap_or_else(|e| panic!("{path}: {e}: {line}"));
            let field = |k: &str| {
                rec.get(k)
                    .and_then(Value::as_str)
                    .map(|s| s.to_string_lossy())
            };
            let input = match (field("input"), field("input_hex")) {
                (Some(s), _) => s.into_bytes(),
                (None, Some(h)) => decode_hex(&h),
                _ => panic!("fixture line without input: {line}"),
            };
            Case {
                name: field("name").unwrap_or_default(),
                input,
                output: field("output"),
            }
        })
        .collect()
}

fn decode_hex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Every way of processing `case.input` must agree with Node; returns the disagreements.
fn check(case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            problems.push(format!("{}: {what}", case.name));
        }
    };
    let input = case.input.as_slice();
    let expected = case.output.as_deref();

    let parsed = parse(input);
    expect(
        "parse succeeds iff JSON.parse does",
        parsed.is_ok() == expected.is_some(),
    );
    expect(
        "validate agrees with JSON.parse",
        validate(input) == expected.is_some(),
    );
    expect(
        "normalize matches Node",
        normalize(input).as_deref() == expected,
    );
    if let Ok(value) = &parsed {
        expect(
            "to_json(parse) matches Node",
            Some(to_json(value).as_str()) == expected,
        );
        let copy = value.clone();
        expect("a clone compares equal", copy == *value || has_nan(value));
        expect(
            "a clone serializes the same",
            to_json(&copy) == to_json(value),
        );
    }
    expect(
        "is_canonical iff the input is Node's output",
        is_canonical(input) == (expected.map(str::as_bytes) == Some(input)),
    );
    expect(
        "visit_canonical_object takes exactly canonical objects, with their members",
        canonical_members_agree(input, expected),
    );
    if let Some(out) = expected {
        expect("Node's output is canonical", is_canonical(out.as_bytes()));
        expect(
            "visit_canonical_object agrees on Node's output",
            canonical_members_agree(out.as_bytes(), expected),
        );
        expect(
            "normalize is idempotent",
            normalize(out.as_bytes()).as_deref() == Some(out),
        );
    }

    match top_level_members(input) {
        Err(_) => expect(
            "top_level_members fails iff JSON.parse does",
            expected.is_none(),
        ),
        Ok(None) => expect(
            "top_level_members is None only for valid non-objects",
            matches!(&parsed, Ok(v) if v.as_object().is_none()),
        ),
        Ok(Some(members)) => {
            // Replaying the members with JS assignment semantics must rebuild the object.
            let mut object = Object::new();
            for (key, range) in members {
                match parse(&input[range]) {
                    Ok(v) => object.insert(key, v),
                    Err(_) => expect("each member range holds one value", false),
                }
            }
            expect(
                "members replayed in order give Node's object",
                Some(to_json(&Value::Object(object)).as_str()) == expected,
            );
        }
    }
    problems
}

fn has_nan(v: &Value) -> bool {
    // No fixture produces NaN (JSON cannot express it), but keep the clone check honest.
    matches!(v, Value::Number(n) if n.is_nan())
}

fn run(file: &str, expected_count: usize) {
    let cases = load(file);
    assert!(
        cases.len() >= expected_count,
        "{file} has {} cases",
        cases.len()
    );
    let problems: Vec<String> = cases.iter().flat_map(check).collect();
    assert!(
        problems.is_empty(),
        "{} disagreements with Node:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_hand_picked_edge_case_matches_node() {
    run("json_cases.jsonl", 150);
}

#[test]
fn twenty_thousand_random_documents_match_node() {
    run("json_props.jsonl", 20_000);
}

#[test]
fn the_fixtures_cover_both_valid_and_invalid_documents() {
    let cases = load("json_cases.jsonl");
    let invalid = cases.iter().filter(|c| c.output.is_none()).count();
    let bytes = cases
        .iter()
        .filter(|c| std::str::from_utf8(&c.input).is_err())
        .count();
    assert!(invalid >= 50, "only {invalid} invalid documents");
    assert!(bytes >= 10, "only {bytes} documents with invalid UTF-8");
}

#[test]
fn mutated_documents_get_the_same_verdict_from_every_entry_point() {
    // Byte-level mutations of the random documents (mostly invalid, some still valid) must never
    // panic, and all entry points must agree with `parse` + `to_json`.
    let interesting = b"\"\\{}[],:0123456789-+.eE \t\n\rtrufalsn\x00\x1f\x7f\x80\xc3\xa9\xff/u";
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut problems = Vec::new();
    let mut still_valid = 0;
    for case in load("json_props.jsonl").iter().take(4000) {
        let mut doc = case.input.clone();
        for _ in 0..1 + next(3) {
            let at = next(doc.len() + 1);
            match next(3) {
                0 if at < doc.len() => {
                    doc.remove(at);
                }
                1 if at < doc.len() => doc[at] = interesting[next(interesting.len())],
                _ => doc.insert(at, interesting[next(interesting.len())]),
            }
        }
        let expected = parse(&doc).ok().map(|v| to_json(&v));
        let ok = expected.is_some();
        still_valid += usize::from(ok);
        if validate(&doc) != ok
            || top_level_members(&doc).is_ok() != ok
            || normalize(&doc) != expected
            || is_canonical(&doc) != (expected.as_deref().map(str::as_bytes) == Some(&doc[..]))
            || !canonical_members_agree(&doc, expected.as_deref())
        {
            problems.push(String::from_utf8_lossy(&doc).into_owned());
        }
    }
    assert!(
        problems.is_empty(),
        "inconsistent verdicts:\n{}",
        problems.join("\n")
    );
    println!("{still_valid} of 4000 mutated documents still parse");
    assert!(
        still_valid > 200,
        "only {still_valid} mutated documents still parse"
    );
}

/// `visit_canonical_object` accepts exactly the canonical objects, and reports the members
/// `top_level_members` finds.
fn canonical_members_agree(doc: &[u8], expected: Option<&str>) -> bool {
    let mut seen = Vec::new();
    let accepted = visit_canonical_object(doc, |k, r| seen.push((k.to_vec(), r)));
    let canonical_object = doc.first() == Some(&b'{') && expected.map(str::as_bytes) == Some(doc);
    if accepted != canonical_object {
        return false;
    }
    if !accepted {
        return seen.is_empty();
    }
    let members = top_level_members(doc).unwrap().unwrap();
    members.len() == seen.len()
        && members
            .iter()
            .zip(&seen)
            .all(|((k, r), (sk, sr))| k.as_escaped().as_bytes() == &sk[..] && r == sr)
}
