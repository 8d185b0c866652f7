//! Fake credentials of every kind the scanner knows, assembled at run time from a seeded
//! generator (no credential-shaped literal stands in the repository: prefixes are split), and
//! sessions that hold a text in each place an entry can hold one. Shared by the core's and the
//! CLI's secret tests.

#![allow(dead_code)] // each including test file uses a part

/// xorshift64*: the same fakes on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// `n` characters drawn from `alphabet`.
    pub fn chars(&mut self, alphabet: &str, n: usize) -> String {
        let a = alphabet.as_bytes();
        (0..n)
            .map(|_| char::from(a[(self.next() % a.len() as u64) as usize]))
            .collect()
    }
}

pub const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const HEX: &str = "0123456789abcdef";

fn upper_digit(r: &mut Rng, n: usize) -> String {
    r.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", n)
}

/// base64url without padding.
pub fn b64url(bytes: &[u8]) -> String {
    let a = B64URL.as_bytes();
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..=c.len() {
            out.push(char::from(a[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// One fake of a kind: the text to put into a session, and the secrets in it with their kind
/// names (an AWS pair is two).
pub struct Fake {
    pub kind: &'static str,
    pub text: String,
    pub secrets: Vec<(&'static str, String)>,
}

fn one(kind: &'static str, secret: String) -> Fake {
    Fake {
        kind,
        text: secret.clone(),
        secrets: vec![(kind, secret)],
    }
}

/// A fake of every kind, drawn from `r`.
pub fn all_kinds(r: &mut Rng) -> Vec<Fake> {
    let pem_body: Vec<String> = (0..8).map(|_| r.chars(ALNUM, 64)).collect();
    let pem = format!(
        "-----BEGIN {0}-----\n{1}\n-----END {0}-----",
        ["RSA", "PRIVATE KEY"].join(" "),
        pem_body.join("\n")
    );
    let aws_id = format!("{}{}", "AK", "IA") + &upper_digit(r, 16);
    let aws_secret = r.chars(ALNUM, 38) + "/" + &r.chars(ALNUM, 1);
    let password = r.chars(ALNUM, 18);
    let jwt = format!(
        "{}.{}.{}",
        b64url(br#"{"alg":"HS256","typ":"JWT"}"#),
        b64url(br#"{"sub":"4242","name":"ana","iat":1700000000}"#),
        r.chars(B64URL, 43)
    );
    let webhook = format!(
        "https://hooks.{}.com/services/T{}/B{}/{}",
        "slack",
        upper_digit(r, 10),
        upper_digit(r, 10),
        r.chars(ALNUM, 24)
    );
    vec![
        one(
            "anthropic-api-key",
            format!("sk-{}-api03-{}AA", "ant", r.chars(B64URL, 93)),
        ),
        one(
            "openai-api-key",
            format!("sk-{}-{}", "proj", r.chars(B64URL, 156)),
        ),
        one(
            "openai-api-key",
            format!(
                "sk-{}{}{}{}",
                r.chars(ALNUM, 20),
                "T3Blbk",
                "FJ",
                r.chars(ALNUM, 20)
            ),
        ),
        one(
            "openrouter-api-key",
            format!("sk-{}-v1-{}", "or", r.chars(HEX, 64)),
        ),
        one(
            "groq-api-key",
            format!("{}{}", "gs", "k_") + &r.chars(ALNUM, 52),
        ),
        one(
            "xai-api-key",
            format!("{}{}", "xa", "i-") + &r.chars(ALNUM, 80),
        ),
        one(
            "google-api-key",
            format!("{}{}", "AI", "za") + &r.chars(B64URL, 35),
        ),
        Fake {
            kind: "aws-secret-access-key",
            text: format!(
                "[default]\naws_access_key_id = {aws_id}\naws_secret_access_key = {aws_secret}\n"
            ),
            secrets: vec![
                ("aws-access-key-id", aws_id),
                ("aws-secret-access-key", aws_secret),
            ],
        },
        one(
            "github-token",
            format!("{}{}", "gh", "p_") + &r.chars(ALNUM, 36),
        ),
        one(
            "github-token",
            format!("{}{}", "github", "_pat_") + &r.chars(ALNUM, 22) + "_" + &r.chars(ALNUM, 59),
        ),
        one(
            "gitlab-token",
            format!("{}{}", "gl", "pat-") + &r.chars(B64URL, 20),
        ),
        one(
            "slack-token",
            format!(
                "{}{}{}-{}-{}",
                "xo",
                "xb-",
                r.chars("0123456789", 12),
                r.chars("0123456789", 13),
                r.chars(ALNUM, 24)
            ),
        ),
        Fake {
            kind: "slack-webhook",
            text: webhook.clone(),
            secrets: vec![("slack-webhook", webhook["https://".len()..].to_owned())],
        },
        one(
            "stripe-live-key",
            format!("{}{}", "sk", "_live_") + &r.chars(ALNUM, 99),
        ),
        one(
            "npm-token",
            format!("{}{}", "np", "m_") + &r.chars(ALNUM, 36),
        ),
        one("private-key", pem),
        Fake {
            kind: "url-password",
            text: format!("postgres://app_user:{password}@db.internal:5432/app"),
            secrets: vec![("url-password", password)],
        },
        one("jwt", jwt),
    ]
}

/// JSON string literal of `s`.
pub fn js(s: &str) -> String {
    pi_session_core::json::string_to_json(s)
}

/// The places an entry holds text: (place name, a line holding `text` there, entry id).
pub fn placements(text: &str) -> Vec<(&'static str, String, &'static str)> {
    let t = js(text);
    let msg = |id: &str, body: String| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{body}}}"#
        )
    };
    vec![
        (
            "user",
            msg(
                "e-user",
                format!(r#"{{"role":"user","content":{t},"timestamp":1}}"#),
            ),
            "e-user",
        ),
        (
            "user",
            msg(
                "e-ublk",
                format!(
                    r#"{{"role":"user","content":[{{"type":"text","text":{t}}}],"timestamp":1}}"#
                ),
            ),
            "e-ublk",
        ),
        (
            "assistant",
            msg(
                "e-asst",
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"text","text":{t}}}],"provider":"p","model":"m","timestamp":1}}"#
                ),
            ),
            "e-asst",
        ),
        (
            "thinking",
            msg(
                "e-think",
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":{t},"thinkingSignature":"c2lnbmF0dXJl"}}],"timestamp":1}}"#
                ),
            ),
            "e-think",
        ),
        (
            "tool-args",
            msg(
                "e-call",
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"call_1","name":"bash","arguments":{{"command":{t}}}}}],"timestamp":1}}"#
                ),
            ),
            "e-call",
        ),
        (
            "tool-output",
            msg(
                "e-res",
                format!(
                    r#"{{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{{"type":"text","text":{t}}}],"isError":false,"timestamp":1}}"#
                ),
            ),
            "e-res",
        ),
        (
            "tool-output",
            msg(
                "e-det",
                format!(
                    r#"{{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[],"details":{{"stdout":{t}}},"isError":false,"timestamp":1}}"#
                ),
            ),
            "e-det",
        ),
        (
            "tool-output",
            msg(
                "e-bash",
                format!(
                    r#"{{"role":"bashExecution","command":"env","output":{t},"exitCode":0,"timestamp":1}}"#
                ),
            ),
            "e-bash",
        ),
        (
            "custom",
            format!(
                r#"{{"type":"custom","customType":"ext","data":{{"token":{t}}},"id":"e-cust","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}}"#
            ),
            "e-cust",
        ),
        (
            "custom",
            format!(
                r#"{{"type":"custom_message","customType":"ext","content":{t},"display":true,"id":"e-cmsg","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}}"#
            ),
            "e-cmsg",
        ),
        (
            "summary",
            format!(
                r#"{{"type":"compaction","id":"e-comp","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","summary":{t},"firstKeptEntryId":"e-user","tokensBefore":10}}"#
            ),
            "e-comp",
        ),
        (
            "summary",
            format!(
                r#"{{"type":"branch_summary","id":"e-bsum","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","fromId":"e-user","summary":{t}}}"#
            ),
            "e-bsum",
        ),
        (
            "other",
            format!(
                r#"{{"type":"session_info","id":"e-name","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","name":{t}}}"#
            ),
            "e-name",
        ),
    ]
}

/// A session header line.
pub fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}"#
    )
}

/// A session file of a header and `lines`.
pub fn session(id: &str, lines: &[String]) -> String {
    let mut s = header(id);
    for l in lines {
        s.push('\n');
        s.push_str(l);
    }
    s.push('\n');
    s
}
