//! The command line itself: help for every command, usage errors, "not found", colours.

mod common;
use common::*;

const COMMANDS: &[&str] = &[
    "list", "show", "tree", "stats", "search", "verify", "repair", "merge", "move", "export", "rm",
    "demo",
];

#[test]
fn every_command_has_help() {
    let w = World::new("help");
    for c in COMMANDS {
        for flag in ["--help", "-h"] {
            let o = w.run(&[c, flag]);
            assert_eq!(o.code, 0, "{c} {flag}");
            assert!(
                o.out.contains(&format!("Usage: pi-sessions {c} ")),
                "{c}: {}",
                o.out
            );
            assert!(o.out.contains("Options:"));
        }
        let h = w.run(&["help", c]);
        assert!(h.out.contains(&format!("Usage: pi-sessions {c} ")));
    }
    let top = w.run(&["--help"]);
    assert_eq!(top.code, 0);
    for c in COMMANDS {
        assert!(top.out.contains(&format!("  {c:<8} ")), "{c} in overview");
    }
    assert!(w.run(&["--version"]).out.starts_with("pi-sessions "));
}

#[test]
fn usage_errors_exit_2_with_a_hint() {
    let w = World::new("usage");
    let unknown = w.run(&["frobnicate"]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.err.contains("unknown command 'frobnicate'"));
    let opt = w.run(&["list", "--bogus"]);
    assert_eq!(opt.code, 2);
    assert!(opt.err.contains("unknown option --bogus"));
    assert!(opt.err.contains("Try 'pi-sessions list --help'."));
    let missing = w.run(&["show"]);
    assert_eq!(missing.code, 2);
    assert!(missing.err.contains("missing argument"));
    let extra = w.run(&["tree", "a", "b"]);
    assert_eq!(extra.code, 2);
    let color = w.run(&["list", "--color", "purple"]);
    assert_eq!(color.code, 2);
}

#[test]
fn colours_only_on_a_terminal_and_never_with_no_color() {
    let w = World::new("colour");
    let f = fixture("v3-conversation.jsonl");
    let args = ["show", f.to_str().unwrap()];
    let mut env = w.env();
    env.no_color = false;
    assert!(
        !w.run_with(&env, &args).out.contains('\x1b'),
        "not a terminal"
    );
    env.is_tty_out = true;
    assert!(
        w.run_with(&env, &args)
            .out
            .contains("\x1b[1;32muser\x1b[0m"),
        "a terminal"
    );
    let never = w.run_with(&env, &["show", f.to_str().unwrap(), "--color=never"]);
    assert!(!never.out.contains('\x1b'));
    env.no_color = true;
    assert!(!w.run_with(&env, &args).out.contains('\x1b'), "NO_COLOR");
    let forced = w.run_with(&env, &["--color", "always", "show", f.to_str().unwrap()]);
    assert!(
        !forced.out.contains('\x1b'),
        "NO_COLOR wins over --color always"
    );
    env.no_color = false;
    env.is_tty_out = false;
    let always = w.run_with(&env, &["--color", "always", "show", f.to_str().unwrap()]);
    assert!(always.out.contains('\x1b'));
}

#[test]
fn the_progress_bar_goes_to_stderr_only_on_a_terminal() {
    let w = World::new("progress");
    let text = std::fs::read_to_string(fixture("v3-conversation.jsonl")).unwrap();
    for i in 0..120 {
        w.write(FIXTURE_CWD, &format!("s{i:03}.jsonl"), &text);
    }
    let quiet = w.run(&["list", "--json"]);
    assert!(quiet.err.is_empty());
    let mut env = w.env();
    env.is_tty_err = true;
    let o = w.run_with(&env, &["list", "--json"]);
    assert!(
        o.err.contains("loading sessions") && o.err.contains("120/120"),
        "{:?}",
        o.err
    );
    assert!(o.err.ends_with("\r\x1b[K"), "the bar is erased");
    assert_eq!(arr(&json(&o.out)).len(), 120, "stdout holds only the JSON");
}

#[test]
fn what_does_not_exist_exits_3_without_a_usage_hint() {
    let w = World::new("not-found");
    let f = w.add(FIXTURE_CWD, "v3-conversation.jsonl", "a.jsonl");
    let file = f.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["show", "deadbeef"],
        &["tree", "./nope.jsonl"],
        &["stats", "deadbeef"],
        &["export", "deadbeef", "--format", "md"],
        &["rm", "deadbeef", "--yes"],
        &["repair", "/no/such/file.jsonl"],
        &[
            "merge",
            file,
            "deadbeef",
            "--out",
            "/tmp/never-written.jsonl",
        ],
        &["prune", file, "zzzzzzzz"],
        &["show", file, "--branch", "zzzzzzzz"],
        &["verify", "/no/such/dir"],
        &["search", "words no session has"],
        &["move", "/tmp/pi-no-such-project-dir", "/tmp/pi-other-dir"],
    ];
    for args in cases {
        let o = w.run(args);
        assert_eq!(o.code, 3, "{args:?}: {}{}", o.out, o.err);
        assert!(!o.err.contains("Try 'pi-sessions"), "{args:?}: {}", o.err);
    }
    assert!(f.exists(), "nothing was removed");
}

#[test]
fn help_names_every_exit_code() {
    let top = World::new("exit-help").run(&["--help"]);
    assert!(
        top.out
            .contains("Exit codes: 0 ok, 1 problems found, 2 usage error, 3 not found"),
        "{}",
        top.out
    );
}

#[test]
fn option_help_texts_start_in_one_column_color_included() {
    let w = World::new("help-align");
    for c in COMMANDS {
        let o = w.run(&[c, "--help"]);
        let options = o.out.split("Options:\n").nth(1).unwrap();
        let rows: Vec<&str> = options
            .lines()
            .take_while(|l| l.starts_with("  "))
            .collect();
        assert!(rows.iter().any(|r| r.contains("--color WHEN")), "{c}");
        // Where a row's help text starts: after the option and the run of spaces that follows.
        let column = |r: &str| {
            let lead = r.len() - r.trim_start().len();
            let gap = r[lead..].find("  ")? + lead;
            Some(gap + r[gap..].len() - r[gap..].trim_start().len())
        };
        let columns: Vec<_> = rows.iter().map(|r| column(r)).collect();
        assert!(
            columns.windows(2).all(|p| p[0] == p[1]),
            "{c}: {columns:?}\n{}",
            rows.join("\n")
        );
    }
}
