//! A branch of entries turned into conversation items (who said what, tool calls, summaries, notes),
//! independent of how they are drawn: `show` paints them for a terminal, `export` writes Markdown
//! or HTML from the same items.

use pi_session_core::json::{self, Value};
use pi_session_core::record::Kind;

use crate::fmt;
use crate::jsonout::{num_of, str_of};
use crate::loaded::Loaded;

/// Who an item comes from; decides its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Tool,
    System,
    /// Compaction and branch summaries.
    Summary,
    /// Extension messages that reach the model.
    Custom,
    /// One-line notes: model and thinking changes, labels, names, extension state, usage.
    Meta,
}

impl Role {
    pub fn css(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
            Role::Summary => "summary",
            Role::Custom => "custom",
            Role::Meta => "meta",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Block {
    Text(String),
    Thinking(String),
    ToolCall {
        name: String,
        args: Value,
    },
    /// Tool or command output.
    Output {
        text: String,
        error: bool,
    },
    Image(String),
}

#[derive(Debug, Clone)]
pub struct Item {
    pub id: String,
    pub role: Role,
    /// `user`, `assistant`, `tool result`, `compaction`, or the whole note for `Meta`.
    pub title: String,
    /// Model, tool name, token count, …
    pub detail: Option<String>,
    /// Entry time in ms.
    pub time: Option<f64>,
    pub label: Option<String>,
    pub blocks: Vec<Block>,
}

/// The items of a root-first path.
pub fn items(l: &Loaded, path: &[u32]) -> Vec<Item> {
    path.iter().map(|&p| item(l, p)).collect()
}

fn item(l: &Loaded, pos: u32) -> Item {
    let v = l.value(pos);
    let mut it = entry_item(&v, l.session.meta(pos).kind, l.id_text(pos));
    it.label = l.label(pos);
    it
}

/// The item of one entry value (no label: labels live in other entries).
pub fn entry_item(v: &Value, kind: Kind, id: String) -> Item {
    let mut it = Item {
        id,
        role: Role::Meta,
        title: String::new(),
        detail: None,
        time: str_of(v.get("timestamp")).and_then(|t| fmt::parse_time(&t)),
        label: None,
        blocks: Vec::new(),
    };
    let s = |k: &str| str_of(v.get(k)).unwrap_or_default();
    match kind {
        Kind::Message => match v.get("message") {
            Some(m @ Value::Object(_)) => message(m, &mut it),
            _ => it.title = "message without a message object".into(),
        },
        Kind::Compaction => compaction(v, &mut it),
        Kind::BranchSummary => {
            it.role = Role::Summary;
            it.title = "branch summary".into();
            let from = v.get("fromId").map(json_text).unwrap_or_default();
            it.detail = Some(format!("of the branch left at {from}"));
            it.blocks.push(Block::Text(s("summary")));
        }
        Kind::CustomMessage => {
            it.role = Role::Custom;
            it.title = format!("{} (extension message)", s("customType"));
            if matches!(v.get("display"), Some(Value::Bool(false))) {
                it.detail = Some("hidden in the TUI".into());
            }
            content(v.get("content"), &mut it.blocks);
        }
        Kind::Custom => {
            it.title = format!(
                "extension state {}: {}",
                s("customType"),
                v.get("data").map(json_text).unwrap_or_else(|| "-".into())
            );
        }
        Kind::ModelChange => it.title = format!("model → {}/{}", s("provider"), s("modelId")),
        Kind::ThinkingLevelChange => it.title = format!("thinking level → {}", s("thinkingLevel")),
        Kind::Label => {
            let target = v.get("targetId").map(json_text).unwrap_or_default();
            it.title = match str_of(v.get("label")) {
                Some(lbl) if !lbl.is_empty() => format!("label “{lbl}” on {target}"),
                _ => format!("label cleared on {target}"),
            };
        }
        Kind::SessionInfo => it.title = format!("session named “{}”", s("name").trim()),
        Kind::Usage => it.title = usage_title(v),
        Kind::ContextEdit => {
            let target = v.get("targetId").map(json_text).unwrap_or_default();
            it.title = match v.get("replacement") {
                Some(Value::Null) => format!("context edit: {target} removed from context"),
                _ => format!("context edit: {target} replaced in context"),
            };
        }
        Kind::Header => it.title = "session header".into(),
        Kind::Leading => {
            it.title = format!(
                "{} record before the header",
                str_of(v.get("type")).unwrap_or_else(|| "untyped".into())
            )
        }
        Kind::Other => {
            it.title = format!(
                "{} entry",
                str_of(v.get("type")).unwrap_or_else(|| "untyped".into())
            )
        }
        Kind::NonObject => it.title = format!("non-object record {}", json_text(v)),
    }
    it
}

fn compaction(v: &Value, it: &mut Item) {
    it.role = Role::Summary;
    it.title = "compaction".into();
    let mut d = Vec::new();
    if let Some(n) = num_of(v.get("tokensBefore")) {
        d.push(format!("{} tokens before", fmt::thousands(n)));
    }
    if let Some(Value::Array(t)) = v.get("retainedTail") {
        d.push(format!("{} retained messages", t.len()));
    }
    it.detail = (!d.is_empty()).then(|| d.join(" · "));
    it.blocks
        .push(Block::Text(str_of(v.get("summary")).unwrap_or_default()));
}

fn usage_title(v: &Value) -> String {
    let s = |k: &str| str_of(v.get(k)).unwrap_or_default();
    let mut t = format!("usage {} · {}/{}", s("kind"), s("provider"), s("model"));
    if let Some(u) = v.get("usage") {
        t.push_str(&format!(" · {}", usage_text(u)));
    }
    if let Some(n) = str_of(v.get("note")) {
        t.push_str(&format!(" · {n}"));
    }
    t
}

fn message(m: &Value, it: &mut Item) {
    let role = str_of(m.get("role")).unwrap_or_default();
    match role.as_str() {
        "user" => {
            it.role = Role::User;
            it.title = "user".into();
            content(m.get("content"), &mut it.blocks);
        }
        "assistant" => assistant(m, it),
        "toolResult" => tool_result(m, it),
        "bashExecution" => bash_execution(m, it),
        "system" => {
            it.role = Role::System;
            it.title = "system".into();
            content(m.get("content"), &mut it.blocks);
        }
        "custom" | "hookMessage" => {
            it.role = Role::Custom;
            it.title = format!(
                "{} (extension message)",
                str_of(m.get("customType")).unwrap_or_default()
            );
            content(m.get("content"), &mut it.blocks);
        }
        "compactionSummary" | "branchSummary" => {
            it.role = Role::Summary;
            it.title = if role == "branchSummary" {
                "branch summary".into()
            } else {
                "compaction summary".into()
            };
            it.blocks
                .push(Block::Text(str_of(m.get("summary")).unwrap_or_default()));
        }
        other => {
            it.role = Role::Custom;
            it.title = if other.is_empty() {
                "message without a role".into()
            } else {
                format!("{other} message")
            };
            content(m.get("content"), &mut it.blocks);
        }
    }
}

fn assistant(m: &Value, it: &mut Item) {
    it.role = Role::Assistant;
    it.title = "assistant".into();
    let model = match (str_of(m.get("provider")), str_of(m.get("model"))) {
        (Some(p), Some(mo)) => Some(format!("{p}/{mo}")),
        (None, Some(mo)) => Some(mo),
        _ => None,
    };
    let mut d: Vec<String> = model.into_iter().collect();
    match str_of(m.get("stopReason")).as_deref() {
        Some("error") => d.push("error".into()),
        Some("aborted") => d.push("aborted".into()),
        Some("length") => d.push("cut at max tokens".into()),
        _ => {}
    }
    it.detail = (!d.is_empty()).then(|| d.join(" · "));
    content(m.get("content"), &mut it.blocks);
    if let Some(e) = str_of(m.get("errorMessage")) {
        it.blocks.push(Block::Output {
            text: e,
            error: true,
        });
    }
}

fn tool_result(m: &Value, it: &mut Item) {
    it.role = Role::Tool;
    it.title = "tool result".into();
    let error = matches!(m.get("isError"), Some(Value::Bool(true)));
    let name = str_of(m.get("toolName")).unwrap_or_else(|| "tool".into());
    it.detail = Some(if error {
        format!("{name} · failed")
    } else {
        name
    });
    let mut blocks = Vec::new();
    content(m.get("content"), &mut blocks);
    let mut text = Vec::new();
    for b in blocks {
        match b {
            Block::Text(t) => text.push(t),
            other => it.blocks.push(other),
        }
    }
    it.blocks.insert(
        0,
        Block::Output {
            text: text.join("\n"),
            error,
        },
    );
}

fn bash_execution(m: &Value, it: &mut Item) {
    it.role = Role::Tool;
    it.title = "shell".into();
    let code = num_of(m.get("exitCode"));
    it.detail = Some(match code {
        Some(c) => format!("exit {c}"),
        None if matches!(m.get("cancelled"), Some(Value::Bool(true))) => "cancelled".into(),
        None => "no exit code".into(),
    });
    it.blocks.push(Block::ToolCall {
        name: "$".into(),
        args: m.get("command").cloned().unwrap_or(Value::Null),
    });
    it.blocks.push(Block::Output {
        text: str_of(m.get("output")).unwrap_or_default(),
        error: code.is_some_and(|c| c != 0.0),
    });
}

/// Content as blocks: a string, or an array of text / thinking / toolCall / image blocks.
fn content(c: Option<&Value>, out: &mut Vec<Block>) {
    match c {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => out.push(Block::Text(s.to_string_lossy())),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                let ty = str_of(b.get("type")).unwrap_or_default();
                match ty.as_str() {
                    "text" => out.push(Block::Text(str_of(b.get("text")).unwrap_or_default())),
                    "thinking" => {
                        let t = str_of(b.get("thinking")).unwrap_or_default();
                        if matches!(b.get("redacted"), Some(Value::Bool(true))) && t.is_empty() {
                            out.push(Block::Thinking("(redacted)".into()));
                        } else {
                            out.push(Block::Thinking(t));
                        }
                    }
                    "toolCall" => out.push(Block::ToolCall {
                        name: str_of(b.get("name")).unwrap_or_else(|| "?".into()),
                        args: b.get("arguments").cloned().unwrap_or(Value::Null),
                    }),
                    "image" => out.push(Block::Image(
                        str_of(b.get("mimeType")).unwrap_or_else(|| "image".into()),
                    )),
                    _ => out.push(Block::Text(format!("[{} block]", json_text(b)))),
                }
            }
        }
        Some(other) => out.push(Block::Text(json_text(other))),
    }
}

/// A value as short text: strings bare, everything else as JSON, cut at 200 characters.
pub fn json_text(v: &Value) -> String {
    let t = match v {
        Value::String(s) => s.to_string_lossy(),
        _ => json::to_json(v),
    };
    crate::text::truncate(&t, 200)
}

/// `1,234 tokens · $0.0030` from a usage object.
pub fn usage_text(u: &Value) -> String {
    let n = |k: &str| num_of(u.get(k)).unwrap_or(0.0);
    let tokens = n("input") + n("output") + n("cacheRead") + n("cacheWrite");
    let cost = u.get("cost").and_then(|c| num_of(c.get("total")));
    match cost {
        Some(c) => format!("{} tokens · {}", fmt::thousands(tokens), fmt::cost(c)),
        None => format!("{} tokens", fmt::thousands(tokens)),
    }
}

/// A tool call's arguments on one line: `command: "ls src", timeout: 30`.
pub fn args_line(args: &Value, max: usize) -> String {
    let text = match args {
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| {
                let val = match v {
                    Value::String(s) => {
                        format!("\"{}\"", crate::text::one_line(&s.to_string_lossy()))
                    }
                    other => json::to_json(other),
                };
                format!("{}: {}", k.to_string_lossy(), val)
            })
            .collect::<Vec<_>>()
            .join(", "),
        Value::String(s) => s.to_string_lossy(),
        Value::Null => String::new(),
        other => json::to_json(other),
    };
    crate::text::preview(&text, max)
}

/// Indented JSON for exports (two spaces; deep values fall back to one line).
pub fn pretty(v: &Value) -> String {
    let mut out = String::new();
    pretty_into(v, 0, &mut out);
    out
}

fn pretty_into(v: &Value, depth: usize, out: &mut String) {
    let ind = |n: usize| "  ".repeat(n);
    match v {
        Value::Object(o) if !o.is_empty() && depth < 24 => {
            out.push_str("{\n");
            for (i, (k, val)) in o.iter().enumerate() {
                out.push_str(&ind(depth + 1));
                json::write_js_string(k, out);
                out.push_str(": ");
                pretty_into(val, depth + 1, out);
                if i + 1 < o.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&ind(depth));
            out.push('}');
        }
        Value::Array(a) if !a.is_empty() && depth < 24 => {
            out.push_str("[\n");
            for (i, val) in a.iter().enumerate() {
                out.push_str(&ind(depth + 1));
                pretty_into(val, depth + 1, out);
                if i + 1 < a.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&ind(depth));
            out.push(']');
        }
        other => json::write_json(other, out),
    }
}
