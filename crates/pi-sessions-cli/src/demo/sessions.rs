//! The demo's fixture sessions: a weather conversation with tools, branches and a compaction,
//! and short ones, written record by record.

use super::*;

pub(super) struct Writer {
    s: Session,
    /// Clock of the next entry, ms.
    t: f64,
}

pub(super) fn usage(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Value {
    // Prices of a mid-size model per million tokens: $3 in, $15 out, $0.30 cache read, $3.75 write.
    let c = |n: f64, per_m: f64| (n * per_m / 1e6 * 1e6).round() / 1e6;
    let (ci, co, cr, cw) = (
        c(input, 3.0),
        c(output, 15.0),
        c(cache_read, 0.3),
        c(cache_write, 3.75),
    );
    obj(vec![
        ("input", num(input)),
        ("output", num(output)),
        ("cacheRead", num(cache_read)),
        ("cacheWrite", num(cache_write)),
        (
            "totalTokens",
            num(input + output + cache_read + cache_write),
        ),
        (
            "cost",
            obj(vec![
                ("input", num(ci)),
                ("output", num(co)),
                ("cacheRead", num(cr)),
                ("cacheWrite", num(cw)),
                ("total", num(((ci + co + cr + cw) * 1e6).round() / 1e6)),
            ]),
        ),
    ])
}

pub(super) fn text(t: &str) -> Value {
    obj(vec![("type", s("text")), ("text", s(t))])
}

pub(super) fn tool_call(id: &str, name: &str, args: Value) -> Value {
    obj(vec![
        ("type", s("toolCall")),
        ("id", s(id)),
        ("name", s(name)),
        ("arguments", args),
    ])
}

impl Writer {
    /// A new session file in `dir`, started `age_ms` before `now_ms`; entry times start at its
    /// header time and move forward, so a sample made now lies wholly in the past (its entries
    /// span a few minutes at most). The session id is a UUIDv7 of that start: sessions made in
    /// one go would otherwise share a long id prefix, which real sessions (started minutes or
    /// days apart) do not.
    pub(super) fn new(dir: &Path, cwd: &str, now_ms: f64, age_ms: f64) -> Result<Writer, CliError> {
        let failed = |e: pi_session_core::Error| CliError::failed(e.message);
        let start = (now_ms - age_ms).max(0.0);
        let id = ids::session_uuid_v7(start as u64);
        let timestamp = timefmt::iso_from_ms(start as u64);
        let mut s = Session::blank(cwd.to_owned(), dir.to_string_lossy().into_owned(), true)
            .map_err(failed)?;
        // The header `newSession` writes, dated at the start: the store itself would stamp a new
        // session with the clock, and every entry after it would then lie in the future.
        let file = dir.join(format!(
            "{}_{id}.jsonl",
            timefmt::file_timestamp(&timestamp)
        ));
        let header = format!("{}\n", header_line(&id, &timestamp, cwd, None));
        fsio::create_new_atomic(&file, header.as_bytes()).map_err(failed)?;
        s.set_session_file(file).map_err(failed)?;
        Ok(Writer { s, t: start })
    }

    pub(super) fn leaf(&self) -> Value {
        match self.s.leaf_key() {
            Some(k) => json::parse(k.as_bytes()).unwrap_or(Value::Null),
            None => Value::Null,
        }
    }

    pub(super) fn stamp(&mut self, step_s: f64) -> (String, f64) {
        self.t += step_s * 1000.0;
        let iso = timefmt::iso_from_ms(self.t as u64);
        (iso, self.t)
    }

    /// Append `head` (type, maybe payload-first keys), then id/parentId/timestamp, then `tail`.
    pub(super) fn append(
        &mut self,
        head: Vec<(&str, Value)>,
        tail: Vec<(&str, Value)>,
        payload_first: bool,
        step_s: f64,
    ) -> Result<String, CliError> {
        let id = self.s.next_entry_id();
        let (iso, _) = self.stamp(step_s);
        let mut pairs = head;
        let base = vec![
            ("id", s(&id)),
            ("parentId", self.leaf()),
            ("timestamp", s(&iso)),
        ];
        if payload_first {
            pairs.extend(tail);
            pairs.extend(base);
        } else {
            pairs.extend(base);
            pairs.extend(tail);
        }
        let line = json::to_json(&obj(pairs));
        self.s
            .append(line.as_bytes())
            .map_err(|e| CliError::failed(e.message))?;
        Ok(id)
    }

    pub(super) fn message(
        &mut self,
        m: Vec<(&str, Value)>,
        step_s: f64,
    ) -> Result<String, CliError> {
        let mut m = m;
        m.push(("timestamp", num(self.t + step_s * 1000.0)));
        self.append(
            vec![("type", s("message"))],
            vec![("message", obj(m))],
            false,
            step_s,
        )
    }

    pub(super) fn user(&mut self, t: &str) -> Result<String, CliError> {
        self.message(vec![("role", s("user")), ("content", s(t))], 6.0)
    }

    pub(super) fn assistant(
        &mut self,
        content: Vec<Value>,
        model: (&str, &str),
        u: Value,
        stop: &str,
    ) -> Result<String, CliError> {
        self.message(
            vec![
                ("role", s("assistant")),
                ("content", arr(content)),
                ("api", s("messages")),
                ("provider", s(model.0)),
                ("model", s(model.1)),
                ("usage", u),
                ("stopReason", s(stop)),
            ],
            4.0,
        )
    }

    pub(super) fn tool_result(
        &mut self,
        call: &str,
        tool: &str,
        out: &str,
        error: bool,
    ) -> Result<String, CliError> {
        self.message(
            vec![
                ("role", s("toolResult")),
                ("toolCallId", s(call)),
                ("toolName", s(tool)),
                ("content", arr(vec![text(out)])),
                ("isError", Value::Bool(error)),
            ],
            1.0,
        )
    }

    pub(super) fn simple(
        &mut self,
        ty: &str,
        tail: Vec<(&str, Value)>,
    ) -> Result<String, CliError> {
        self.append(vec![("type", s(ty))], tail, false, 0.5)
    }

    pub(super) fn file(&self) -> PathBuf {
        self.s
            .session_file()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }
}

pub(super) const CLAUDE: (&str, &str) = ("anthropic", "claude-sonnet-4-5");
pub(super) const GPT: (&str, &str) = ("openai", "gpt-5");

/// The main sample: a feature built over a branch, a compaction and a model change.
pub(super) fn weather_session(dir: &Path, cwd: &str, now_ms: f64) -> Result<Writer, CliError> {
    // long: fixture data, one sample session written turn by turn; it reads as the script it is.
    let mut w = Writer::new(dir, cwd, now_ms, 25.0 * 60_000.0)?;
    w.simple(
        "model_change",
        vec![("provider", s(CLAUDE.0)), ("modelId", s(CLAUDE.1))],
    )?;
    w.simple(
        "thinking_level_change",
        vec![("thinkingLevel", s("medium"))],
    )?;
    let ask = w.user("The weather API is slow. Add a small in-memory cache to `fetchForecast` in src/weather.ts, with a 10 minute TTL.")?;
    w.assistant(
        vec![
            obj(vec![
                ("type", s("thinking")),
                ("thinking", s("I should read the current implementation before changing it.\nThen wrap the fetch with a Map keyed by city.")),
            ]),
            tool_call("call_1", "read", obj(vec![("path", s("src/weather.ts"))])),
        ],
        CLAUDE,
        usage(1820.0, 96.0, 0.0, 1700.0),
        "toolUse",
    )?;
    w.tool_result(
        "call_1",
        "read",
        "const API = \"https://api.example.com/v1\";\n\nexport async function fetchForecast(city: string) {\n  const res = await fetch(`${API}/forecast?city=${encodeURIComponent(city)}`);\n  if (!res.ok) throw new Error(`forecast failed: ${res.status}`);\n  return res.json();\n}\n",
        false,
    )?;
    w.assistant(
        vec![
            text("I'll keep the fetch as is and put a `Map<string, {at, value}>` in front of it."),
            tool_call(
                "call_2",
                "edit",
                obj(vec![
                    ("path", s("src/weather.ts")),
                    ("oldText", s("export async function fetchForecast(city: string) {")),
                    ("newText", s("const cache = new Map<string, { at: number; value: unknown }>();\nconst TTL_MS = 10 * 60 * 1000;\n\nexport async function fetchForecast(city: string) {\n  const hit = cache.get(city);\n  if (hit && Date.now() - hit.at < TTL_MS) return hit.value;")),
                ]),
            ),
        ],
        CLAUDE,
        usage(2410.0, 310.0, 1700.0, 620.0),
        "toolUse",
    )?;
    w.tool_result("call_2", "edit", "Applied 1 edit to src/weather.ts", false)?;
    w.assistant(
        vec![tool_call(
            "call_3",
            "bash",
            obj(vec![("command", s("npm test -- weather"))]),
        )],
        CLAUDE,
        usage(2790.0, 44.0, 2320.0, 0.0),
        "toolUse",
    )?;
    w.tool_result(
        "call_3",
        "bash",
        "> weather-app@1.0.0 test\n> vitest run weather\n\n ✓ test/weather.test.ts (3 tests) 12ms\n   ✓ returns the forecast\n   ✓ caches a city for 10 minutes\n   ✓ refetches after the TTL\n\n Test Files  1 passed (1)\n      Tests  3 passed (3)",
        false,
    )?;
    let done = w.assistant(
        vec![text("Done: `fetchForecast` now caches each city for 10 minutes, and the weather tests pass.")],
        CLAUDE,
        usage(3120.0, 58.0, 2320.0, 0.0),
        "stop",
    )?;
    w.simple("label", vec![("targetId", s(&ask)), ("label", s("start"))])?;
    w.simple(
        "label",
        vec![("targetId", s(&done)), ("label", s("cache-works"))],
    )?;
    // A detour that fails, then the branch is left with a summary.
    w.user("Could we switch to the lru-cache package so memory stays bounded?")?;
    w.assistant(
        vec![
            text("Sure, I'll add the dependency first."),
            tool_call(
                "call_4",
                "bash",
                obj(vec![("command", s("npm install lru-cache"))]),
            ),
        ],
        CLAUDE,
        usage(3300.0, 61.0, 3100.0, 0.0),
        "toolUse",
    )?;
    let failed = w.tool_result(
        "call_4",
        "bash",
        "npm ERR! code ENOTFOUND\nnpm ERR! network request to https://registry.npmjs.org/lru-cache failed",
        true,
    )?;
    w.s.set_leaf_key(Some(&pi_session_core::record::string_key(&done)));
    w.append(
        vec![("type", s("branch_summary"))],
        vec![
            ("fromId", s(&failed)),
            ("summary", s("Tried to replace the Map with the lru-cache package; npm could not reach the registry, so the branch was abandoned. No files changed.")),
            ("usage", usage(900.0, 48.0, 0.0, 0.0)),
        ],
        false,
        5.0,
    )?;
    let keep = w.user("Keep the Map, but cap it at 100 entries and evict the oldest one.")?;
    w.assistant(
        vec![tool_call(
            "call_5",
            "edit",
            obj(vec![
                ("path", s("src/weather.ts")),
                ("oldText", s("  cache.set(city, { at: Date.now(), value });")),
                ("newText", s("  if (cache.size >= 100) cache.delete(cache.keys().next().value!);\n  cache.set(city, { at: Date.now(), value });")),
            ]),
        )],
        CLAUDE,
        usage(3650.0, 120.0, 3100.0, 400.0),
        "toolUse",
    )?;
    w.tool_result("call_5", "edit", "Applied 1 edit to src/weather.ts", false)?;
    w.assistant(
        vec![text(
            "Capped at 100 entries; a Map keeps insertion order, so the first key is the oldest.",
        )],
        CLAUDE,
        usage(3890.0, 40.0, 3500.0, 0.0),
        "stop",
    )?;
    w.append(
        vec![("type", s("compaction"))],
        vec![
            ("summary", s("Goal: cache weather forecasts.\nDone: src/weather.ts caches fetchForecast results per city in a Map (10 minute TTL, at most 100 entries, oldest evicted). Tests pass. The lru-cache package was tried and dropped (offline).")),
            ("firstKeptEntryId", s(&keep)),
            ("tokensBefore", num(48213.0)),
            ("details", obj(vec![
                ("readFiles", arr(vec![s("src/weather.ts")])),
                ("modifiedFiles", arr(vec![s("src/weather.ts")])),
            ])),
            ("usage", usage(12400.0, 380.0, 0.0, 0.0)),
        ],
        false,
        3.0,
    )?;
    w.append(
        vec![
            ("type", s("custom")),
            ("customType", s("todo")),
            (
                "data",
                obj(vec![(
                    "items",
                    arr(vec![obj(vec![
                        ("text", s("log cache hit rate")),
                        ("done", Value::Bool(false)),
                    ])]),
                )]),
            ),
        ],
        vec![],
        true,
        0.5,
    )?;
    w.append(
        vec![
            ("type", s("custom_message")),
            ("customType", s("reminder")),
            ("content", s("CI runs on Node 20: keep to APIs it has.")),
            ("display", Value::Bool(true)),
        ],
        vec![],
        true,
        0.5,
    )?;
    w.simple("session_info", vec![("name", s("Weather forecast cache"))])?;
    w.simple(
        "model_change",
        vec![("provider", s(GPT.0)), ("modelId", s(GPT.1))],
    )?;
    w.user("Add a hit/miss counter we can log.")?;
    w.assistant(
        vec![
            obj(vec![("type", s("thinking")), ("thinking", s("Two counters next to the Map, and a getter."))]),
            text("Added `cacheStats()` in src/weather.ts: it returns `{ hits, misses }`, counted in `fetchForecast`."),
        ],
        GPT,
        usage(4100.0, 210.0, 0.0, 0.0),
        "stop",
    )?;
    w.append(
        vec![("type", s("usage"))],
        vec![
            ("kind", s("cache_warm")),
            ("provider", s(CLAUDE.0)),
            ("model", s(CLAUDE.1)),
            ("usage", usage(0.0, 1.0, 0.0, 3500.0)),
            ("note", s("prompt cache kept warm")),
        ],
        false,
        2.0,
    )?;
    Ok(w)
}

pub(super) fn short_session(
    dir: &Path,
    cwd: &str,
    (now_ms, age_ms): (f64, f64),
    q: &str,
    a: &str,
) -> Result<Writer, CliError> {
    let mut w = Writer::new(dir, cwd, now_ms, age_ms)?;
    w.user(q)?;
    w.assistant(vec![text(a)], CLAUDE, usage(820.0, 64.0, 0.0, 0.0), "stop")?;
    Ok(w)
}
