//! `stats`: messages, tokens and cost, per model and in total, for one session or many. Counted like
//! pi's own session stats: every entry of the file (all branches); usage of assistant messages, of
//! tool results, of `usage` entries, and the `usage` of compactions and branch summaries.

use std::collections::HashMap;
use std::path::PathBuf;

use pi_session_core::json::Value;
use pi_session_core::record::Kind;

use crate::args::{Command, Opt, Parsed};
use crate::catalog::{self, Scope};
use crate::error::{CliResult, EXIT_OK};
use crate::jsonout::{self, arr, num, num_of, obj, opt, str_of};
use crate::loaded::{self, Loaded};
use crate::progress::Progress;
use crate::{fmt, resolve, show, text, Ctx};

pub const CMD: Command = Command {
    name: "stats",
    summary: "messages, tokens and cost per model and in total",
    usage: "[<id|path>] [--all] [--cwd DIR] [--json]",
    description: "Totals for one session, or for every session of this project (no argument), or of \
all projects (--all). Tokens are input + output + cache read + cache write, cost is usage.cost.total, \
summed over every entry of each file (all branches): assistant messages, tool results that carry \
usage, `usage` entries, and the usage of compactions and branch summaries. Usage without a model of \
its own (summaries, tool results) counts for the model in effect at that entry.",
    opts: &[
        Opt {
            long: "all",
            short: Some('a'),
            value: None,
            help: "sessions of every project",
        },
        Opt {
            long: "cwd",
            short: None,
            value: Some("DIR"),
            help: "sessions of the project in DIR",
        },
        Opt {
            long: "json",
            short: None,
            value: None,
            help: "print {sessions,messages,toolCalls,models,total} as JSON",
        },
    ],
    min_pos: 0,
    max_pos: Some(1),
    examples: &["pi-sessions stats", "pi-sessions stats 0193f0a0 --json"],
};

#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub cost: f64,
    /// How many usage records were added.
    pub records: f64,
}

impl Usage {
    fn add_value(&mut self, u: &Value) {
        let n = |k: &str| num_of(u.get(k)).unwrap_or(0.0);
        self.input += n("input");
        self.output += n("output");
        self.cache_read += n("cacheRead");
        self.cache_write += n("cacheWrite");
        self.cost += u
            .get("cost")
            .and_then(|c| num_of(c.get("total")))
            .unwrap_or(0.0);
        self.records += 1.0;
    }
    fn add(&mut self, o: &Usage) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.cost += o.cost;
        self.records += o.records;
    }
    pub fn tokens(&self) -> f64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub sessions: usize,
    pub messages: f64,
    pub user: f64,
    pub assistant: f64,
    pub tool_results: f64,
    pub tool_calls: f64,
    /// `(provider, model)` → usage; empty strings when unknown.
    pub models: HashMap<(String, String), Usage>,
}

impl Stats {
    fn merge(&mut self, o: Stats) {
        self.sessions += o.sessions;
        self.messages += o.messages;
        self.user += o.user;
        self.assistant += o.assistant;
        self.tool_results += o.tool_results;
        self.tool_calls += o.tool_calls;
        for (k, u) in o.models {
            self.models.entry(k).or_default().add(&u);
        }
    }

    pub fn total(&self) -> Usage {
        let mut t = Usage::default();
        for u in self.models.values() {
            t.add(u);
        }
        t
    }

    /// Models by cost, then tokens, then name.
    pub fn rows(&self) -> Vec<(&(String, String), &Usage)> {
        let mut rows: Vec<_> = self.models.iter().collect();
        rows.sort_by(|a, b| {
            b.1.cost
                .total_cmp(&a.1.cost)
                .then(b.1.tokens().total_cmp(&a.1.tokens()))
                .then(a.0.cmp(b.0))
        });
        rows
    }
}

/// Stats of one loaded session.
pub fn of_session(l: &Loaded) -> Stats {
    let s = &l.session;
    let mut st = Stats {
        sessions: 1,
        ..Stats::default()
    };
    let mut models = Models::default();
    for pos in s.entry_positions() {
        let kind = s.meta(pos).kind;
        if !matches!(
            kind,
            Kind::Message | Kind::Usage | Kind::Compaction | Kind::BranchSummary
        ) {
            continue;
        }
        let v = l.value(pos);
        match kind {
            Kind::Usage => {
                if let Some(u) = v.get("usage") {
                    let key = (
                        str_of(v.get("provider")).unwrap_or_default(),
                        str_of(v.get("model")).unwrap_or_default(),
                    );
                    st.models.entry(key).or_default().add_value(u);
                }
            }
            Kind::Compaction | Kind::BranchSummary => {
                if let Some(u) = v.get("usage").filter(|u| u.is_truthy()) {
                    let key = models.inherited(l, pos);
                    st.models.entry(key).or_default().add_value(u);
                }
            }
            _ => add_message(&mut st, &mut models, l, pos, &v),
        }
    }
    st
}

/// A message entry's counts, and its usage under its model.
fn add_message(st: &mut Stats, models: &mut Models, l: &Loaded, pos: u32, v: &Value) {
    st.messages += 1.0;
    let Some(m) = v.get("message") else { return };
    match str_of(m.get("role")).as_deref() {
        Some("user") => st.user += 1.0,
        Some("toolResult") => {
            st.tool_results += 1.0;
            if let Some(u) = m.get("usage").filter(|u| u.is_truthy()) {
                let key = models.inherited(l, pos);
                st.models.entry(key).or_default().add_value(u);
            }
        }
        Some("assistant") => {
            st.assistant += 1.0;
            if let Some(Value::Array(c)) = m.get("content") {
                st.tool_calls += c
                    .iter()
                    .filter(|b| str_of(b.get("type")).as_deref() == Some("toolCall"))
                    .count() as f64;
            }
            let key = own_model(v, Kind::Message).unwrap_or_default();
            models.at.insert(pos, key.clone());
            if let Some(u) = m.get("usage").filter(|u| u.is_truthy()) {
                st.models.entry(key).or_default().add_value(u);
            }
        }
        _ => {}
    }
}

/// The model a record names itself: a model change's, or an assistant message's.
fn own_model(v: &Value, kind: Kind) -> Option<(String, String)> {
    match kind {
        Kind::ModelChange => Some((
            str_of(v.get("provider")).unwrap_or_default(),
            str_of(v.get("modelId")).unwrap_or_default(),
        )),
        Kind::Message => {
            let m = v.get("message")?;
            if !matches!(m.get("role"), Some(Value::String(r)) if r.eq_str("assistant")) {
                return None;
            }
            Some((
                str_of(m.get("provider")).unwrap_or_default(),
                str_of(m.get("model")).unwrap_or_default(),
            ))
        }
        _ => None,
    }
}

/// The model in effect at each record: its own, else its parent's (memoized, cycle-safe).
#[derive(Default)]
struct Models {
    at: HashMap<u32, (String, String)>,
}

impl Models {
    /// The model in effect above `pos`: the nearest ancestor's own (empty when none has one).
    fn inherited(&mut self, l: &Loaded, pos: u32) -> (String, String) {
        let s = &l.session;
        let mut walk = Vec::new();
        let mut cur = s.parent_of(pos);
        let mut found = (String::new(), String::new());
        while let Some(p) = cur {
            if let Some(m) = self.at.get(&p) {
                found = m.clone();
                break;
            }
            if walk.contains(&p) || walk.len() > 1_000_000 {
                break;
            }
            if let Some(m) = own_model(&l.value(p), s.meta(p).kind) {
                found = m;
                self.at.insert(p, found.clone());
                break;
            }
            walk.push(p);
            cur = s.parent_of(p);
        }
        for p in walk {
            self.at.insert(p, found.clone());
        }
        found
    }
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let (stats, skipped, scope_text) = if let Some(arg) = p.pos.first() {
        let path = resolve::session(ctx.env, arg)?;
        let l = loaded::open(&path)?;
        let title = show::title(&l);
        (of_session(&l), 0, format!("{title}\n{}", path.display()))
    } else {
        let scope = Scope::from_flags(ctx.env, p.flag("all"), p.value("cwd"));
        let files: Vec<PathBuf> = catalog::files(ctx.env, &scope)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        let (stats, skipped) = of_files(ctx, &files);
        (stats, skipped, scope.describe(ctx.env))
    };
    if p.flag("json") {
        jsonout::emit(ctx.out, &to_json(&stats))?;
        return Ok(EXIT_OK);
    }
    let mut out = String::new();
    render(ctx, &stats, skipped, &scope_text, &mut out);
    ctx.out.write_all(out.as_bytes())?;
    Ok(EXIT_OK)
}

/// Stats over many files (in parallel); files that are not sessions are counted as skipped.
pub fn of_files(ctx: &mut Ctx, files: &[PathBuf]) -> (Stats, usize) {
    let mut bar = Progress::new(ctx.err, ctx.env.is_tty_err, "reading sessions", files.len());
    let results = pi_session_core::pool::map(
        files,
        |f| loaded::open(f).ok().map(|l| of_session(&l)),
        |n| bar.update(n),
    );
    bar.finish();
    let mut total = Stats::default();
    let mut skipped = 0;
    for r in results {
        match r {
            Some(s) => total.merge(s),
            None => skipped += 1,
        }
    }
    (total, skipped)
}

fn usage_json(u: &Usage) -> Vec<(&'static str, Value)> {
    vec![
        ("input", num(u.input)),
        ("output", num(u.output)),
        ("cacheRead", num(u.cache_read)),
        ("cacheWrite", num(u.cache_write)),
        ("tokens", num(u.tokens())),
        ("cost", num(u.cost)),
    ]
}

pub fn to_json(st: &Stats) -> Value {
    let models = st
        .rows()
        .into_iter()
        .map(|((prov, model), u)| {
            let mut pairs = vec![
                ("provider", opt((!prov.is_empty()).then_some(prov.as_str()))),
                ("model", opt((!model.is_empty()).then_some(model.as_str()))),
            ];
            pairs.extend(usage_json(u));
            obj(pairs)
        })
        .collect();
    obj(vec![
        ("sessions", num(st.sessions as f64)),
        (
            "messages",
            obj(vec![
                ("total", num(st.messages)),
                ("user", num(st.user)),
                ("assistant", num(st.assistant)),
                ("toolResult", num(st.tool_results)),
                (
                    "other",
                    num(st.messages - st.user - st.assistant - st.tool_results),
                ),
            ]),
        ),
        ("toolCalls", num(st.tool_calls)),
        ("models", arr(models)),
        ("total", obj(usage_json(&st.total()))),
    ])
}

fn render(ctx: &Ctx, st: &Stats, skipped: usize, scope: &str, out: &mut String) {
    let sty = ctx.style;
    let mut lines = scope.lines();
    if let Some(first) = lines.next() {
        out.push_str(&sty.bold(&text::sanitize(first)));
        out.push('\n');
    }
    for l in lines {
        out.push_str(&sty.dim(l));
        out.push('\n');
    }
    if st.sessions != 1 || skipped > 0 {
        out.push_str(&sty.dim(&format!(
            "{} session{}{}\n",
            st.sessions,
            if st.sessions == 1 { "" } else { "s" },
            if skipped > 0 {
                format!(", {skipped} file(s) skipped (not valid sessions)")
            } else {
                String::new()
            }
        )));
    }
    let other = st.messages - st.user - st.assistant - st.tool_results;
    out.push_str(&format!(
        "\n{}: {} user, {} assistant, {}, {} other · {}\n\n",
        plural(st.messages, "message"),
        fmt::thousands(st.user),
        fmt::thousands(st.assistant),
        plural(st.tool_results, "tool result"),
        fmt::thousands(other),
        plural(st.tool_calls, "tool call"),
    ));
    write_table(ctx, &model_table(st), out);
}

/// One row per model, a header above and the total below.
fn model_table(st: &Stats) -> Vec<[String; 7]> {
    let rows = st.rows();
    let mut table: Vec<[String; 7]> = vec![[
        "MODEL".into(),
        "INPUT".into(),
        "OUTPUT".into(),
        "CACHE READ".into(),
        "CACHE WRITE".into(),
        "TOKENS".into(),
        "COST".into(),
    ]];
    let row = |name: String, u: &Usage| -> [String; 7] {
        [
            name,
            fmt::thousands(u.input),
            fmt::thousands(u.output),
            fmt::thousands(u.cache_read),
            fmt::thousands(u.cache_write),
            fmt::thousands(u.tokens()),
            fmt::cost(u.cost),
        ]
    };
    for ((prov, model), u) in &rows {
        let name = match (prov.is_empty(), model.is_empty()) {
            (true, true) => "(unknown model)".to_owned(),
            (true, false) => model.clone(),
            _ => format!("{prov}/{model}"),
        };
        table.push(row(text::sanitize(&name), u));
    }
    table.push(row("total".into(), &st.total()));
    table
}

/// The table in columns (the model column cut to the terminal), its header dim, its total bold.
fn write_table(ctx: &Ctx, table: &[[String; 7]], out: &mut String) {
    let sty = ctx.style;
    let mut w = [0usize; 7];
    for r in table {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(text::width(c));
        }
    }
    w[0] = w[0].min(ctx.env.width().saturating_sub(70).max(16));
    let last = table.len() - 1;
    for (k, r) in table.iter().enumerate() {
        let mut line = text::pad(&text::truncate(&r[0], w[0]), w[0]);
        for (cell, cw) in r.iter().zip(w).skip(1) {
            line.push_str("  ");
            line.push_str(&text::pad_left(cell, cw));
        }
        let line = if k == 0 {
            sty.dim(&line)
        } else if k == last {
            sty.bold(&line)
        } else {
            line
        };
        out.push_str(&line);
        out.push('\n');
    }
}

/// `1 tool call`, `3 tool calls`.
fn plural(n: f64, what: &str) -> String {
    format!(
        "{} {what}{}",
        fmt::thousands(n),
        if n == 1.0 { "" } else { "s" }
    )
}
