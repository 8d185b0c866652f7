//! Shared helpers: a fresh agent directory per test, fixtures copied into project directories, and
//! a runner that captures stdout, stderr and the exit code.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use pi_session_core::paths;
use pi_sessions_cli::{run, CliEnv};

/// The project every fixture header names as its cwd.
pub const FIXTURE_CWD: &str = "/tmp/pi-fixture-project";

pub struct Output {
    pub code: i32,
    pub out: String,
    pub err: String,
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

/// A new empty directory under the system temp dir.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "pi-sessions-test-{name}-{}-{}",
        std::process::id(),
        pi_session_core::ids::entry_id(|_| false)
    ));
    fs::create_dir_all(&d).unwrap();
    d
}

/// A test world: an agent directory and the cwd the tool runs in.
pub struct World {
    pub root: PathBuf,
    pub agent: PathBuf,
    pub cwd: String,
}

impl World {
    pub fn new(name: &str) -> World {
        let root = temp_dir(name);
        let agent = root.join("agent");
        fs::create_dir_all(agent.join("sessions")).unwrap();
        World {
            root,
            agent,
            cwd: FIXTURE_CWD.to_owned(),
        }
    }

    /// The session directory of a project.
    pub fn project_dir(&self, cwd: &str) -> PathBuf {
        PathBuf::from(paths::join(
            &paths::join(&self.agent.to_string_lossy(), "sessions"),
            &paths::encode_cwd(cwd),
        ))
    }

    /// Copy a fixture into a project's session directory under `file_name`.
    pub fn add(&self, cwd: &str, fixture_name: &str, file_name: &str) -> PathBuf {
        let dir = self.project_dir(cwd);
        fs::create_dir_all(&dir).unwrap();
        let to = dir.join(file_name);
        fs::copy(fixture(fixture_name), &to).unwrap();
        to
    }

    /// Write a file into a project's session directory.
    pub fn write(&self, cwd: &str, file_name: &str, text: &str) -> PathBuf {
        let dir = self.project_dir(cwd);
        fs::create_dir_all(&dir).unwrap();
        let to = dir.join(file_name);
        fs::write(&to, text).unwrap();
        to
    }

    pub fn env(&self) -> CliEnv {
        let mut env = CliEnv::plain(self.agent.to_string_lossy());
        env.cwd = Some(self.cwd.clone());
        env.now_ms = Some(1_736_935_200_000 + 3_600_000);
        env
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.run_with(&self.env(), args)
    }

    pub fn run_with(&self, env: &CliEnv, args: &[&str]) -> Output {
        run_env(env, args)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

pub fn run_env(env: &CliEnv, args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run(&args, env, &mut out, &mut err);
    Output {
        code,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
    }
}

/// Parse JSON output with the core's parser.
pub fn json(text: &str) -> pi_session_core::json::Value {
    pi_session_core::json::parse(text.trim_end().as_bytes())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

pub fn s(v: Option<&pi_session_core::json::Value>) -> Option<String> {
    match v {
        Some(pi_session_core::json::Value::String(x)) => Some(x.to_string_lossy()),
        _ => None,
    }
}

pub fn n(v: Option<&pi_session_core::json::Value>) -> Option<f64> {
    match v {
        Some(pi_session_core::json::Value::Number(x)) => Some(*x),
        _ => None,
    }
}

pub fn arr(v: &pi_session_core::json::Value) -> &Vec<pi_session_core::json::Value> {
    v.as_array().expect("an array")
}

/// The fixture's expectation document.
pub fn expect(name: &str) -> pi_session_core::json::Value {
    let p = fixture(&name.replace(".jsonl", ".expect.json"));
    pi_session_core::json::parse(&fs::read(p).unwrap()).unwrap()
}

/// A session whose third line is the torn start of a tool result (cut inside a character, so
/// its bytes are not even UTF-8) with a whole assistant entry `b` glued after it, and `c` after
/// that; and the entry line `b` alone.
#[allow(dead_code)] // not every test file reads torn records
pub fn glued_session() -> (Vec<u8>, String) {
    let msg = |id: &str, parent: &str, role: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-15T10:00:01.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}]}}}}"#
        )
    };
    let b = msg("b", "\"a\"", "assistant", "glued reply");
    let mut out = Vec::new();
    out.extend_from_slice(
        br#"{"type":"session","version":3,"id":"sess-glued","timestamp":"2025-01-15T10:00:00.000Z","cwd":"/tmp/pi-fixture-project"}"#,
    );
    out.push(b'\n');
    out.extend_from_slice(msg("a", "null", "user", "question").as_bytes());
    out.push(b'\n');
    out.extend_from_slice(
        msg("t", "\"a\"", "toolResult", "caf\u{e9}")
            .split('\u{e9}')
            .next()
            .unwrap()
            .as_bytes(),
    );
    out.push(0xc3);
    out.extend_from_slice(b.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(msg("c", "\"b\"", "user", "thanks").as_bytes());
    out.push(b'\n');
    (out, b)
}
