//! The credential shapes: each starts at a literal anchor (`sk-ant-`, `AKIA`, `://`, …), which
//! the prefilter finds; a shape then checks what follows exactly (alphabet, length, boundaries)
//! and rejects what documentation and examples put there (`xxxx…`, `EXAMPLE`, `<password>`).
//! Shapes run on decoded text: the string as JavaScript sees it, escapes resolved.

use std::ops::Range;

use super::alphabet::{
    alnum, alnum_dash, alnum_under, b64url, lower_hex, plausible, run, upper_digit,
};
use super::forms::{authority, jwt, pem, slack_webhook, url_password};
use super::kind::Kind;

/// How the text after an anchor is checked.
#[derive(Debug, Clone, Copy)]
pub(super) enum Shape {
    /// A prefix and a body of one alphabet, with a length range.
    Token {
        kind: Kind,
        body: fn(u8) -> bool,
        min: usize,
        max: usize,
    },
    /// `sk-` + 20 + `T3BlbkFJ` + 20: the anchor is the middle marker.
    OpenAiLegacy,
    /// `-----BEGIN … PRIVATE KEY-----` and a base64 body.
    Pem,
    /// `://` with `user:password@` after it.
    Url,
    /// `eyJ…` (base64url of `{"`) and two more parts.
    Jwt,
    /// `hooks.slack.com/services/T…/B…/…`.
    SlackWebhook,
    /// An escape that may spell an anchor in raw JSON (`\/`, `\u0041`): the prefilter's only
    /// (see `scan::COMMON`).
    Hazard,
}

impl Shape {
    /// The secret that starts at (or, for the legacy OpenAI marker, around) the anchor at
    /// `at..at + anchor_len` of decoded text `t`.
    pub(super) fn verify(
        self,
        t: &[u8],
        at: usize,
        anchor_len: usize,
    ) -> Option<(Range<usize>, Kind)> {
        match self {
            Shape::Token {
                kind,
                body,
                min,
                max,
            } => token(t, at, anchor_len, kind, body, min, max),
            Shape::OpenAiLegacy => openai_legacy(t, at),
            Shape::Pem => pem(t, at),
            Shape::Url => url_password(t, at),
            Shape::Jwt => jwt(t, at),
            Shape::SlackWebhook => slack_webhook(t, at, anchor_len),
            Shape::Hazard => None,
        }
    }

    /// A cheap check on raw JSON bytes after an anchor: false only when no string holding this
    /// anchor here can verify (the prefilter then skips the line). Escapes can only make raw
    /// text longer, and the bytes of a token's alphabet are never escaped by a JSON writer
    /// except through the hazards the prefilter watches for separately.
    pub(super) fn may_match(self, raw: &[u8], at: usize, anchor_len: usize) -> bool {
        let after = at + anchor_len;
        match self {
            Shape::Token { body, min, .. } => run(raw, after, body) - after >= min,
            Shape::Pem => raw
                .get(after..(after + 64).min(raw.len()))
                .is_some_and(|w| memchr::memmem::find(w, b"PRIVATE KEY").is_some()),
            Shape::Url => authority(raw, after).is_some(),
            Shape::Jwt => {
                let end = run(raw, after, b64url);
                end - after >= 7 && raw.get(end) == Some(&b'.')
            }
            Shape::OpenAiLegacy | Shape::SlackWebhook | Shape::Hazard => true,
        }
    }
}

fn token(
    t: &[u8],
    at: usize,
    anchor_len: usize,
    kind: Kind,
    body: fn(u8) -> bool,
    min: usize,
    max: usize,
) -> Option<(Range<usize>, Kind)> {
    // A longer word that merely contains the anchor is not the token (`risk-ant-…`).
    if at > 0 && (b64url(t[at - 1]) || t[at - 1] == b'.') {
        return None;
    }
    let start = at + anchor_len;
    let mut end = run(t, start, body);
    if kind == Kind::GitLab {
        // Newer GitLab tokens carry dot-separated parts.
        while t.get(end) == Some(&b'.') && t.get(end + 1).is_some_and(|&b| alnum(b)) {
            end = run(t, end + 1, body);
        }
    }
    let len = end - start;
    if len < min || len > max || !plausible(&t[start..end]) {
        return None;
    }
    if kind == Kind::Slack && t[start..end].iter().filter(|b| b.is_ascii_digit()).count() < 8 {
        return None;
    }
    if kind == Kind::AwsKeyId && t.get(end).is_some_and(|&b| alnum(b)) {
        return None;
    }
    Some((at..end, kind))
}

/// Legacy OpenAI keys: `sk-`, 20 letters and digits, the marker `T3BlbkFJ`, 20 more.
fn openai_legacy(t: &[u8], at: usize) -> Option<(Range<usize>, Kind)> {
    let start = at.checked_sub(23)?;
    if &t[start..start + 3] != b"sk-" || !t[start + 3..at].iter().all(|&b| alnum(b)) {
        return None;
    }
    if start > 0 && b64url(t[start - 1]) {
        return None;
    }
    let end = run(t, at + 8, alnum);
    (end - (at + 8) == 20 && plausible(&t[start + 3..end])).then_some((start..end, Kind::OpenAi))
}

/// The anchors, each with the shape it starts. Order matters only for the prefilter's
/// leftmost-first matching: a longer anchor that shares a start comes first.
pub(super) fn anchors() -> Vec<(&'static str, Shape)> {
    let tok = |kind, body: fn(u8) -> bool, min, max| Shape::Token {
        kind,
        body,
        min,
        max,
    };
    let mut a = vec![
        ("sk-ant-", tok(Kind::Anthropic, b64url, 80, 300)),
        ("sk-proj-", tok(Kind::OpenAi, b64url, 40, 300)),
        ("sk-svcacct-", tok(Kind::OpenAi, b64url, 40, 300)),
        ("sk-admin-", tok(Kind::OpenAi, b64url, 40, 300)),
        ("T3BlbkFJ", Shape::OpenAiLegacy),
        ("sk-or-v1-", tok(Kind::OpenRouter, lower_hex, 64, 64)),
        ("gsk_", tok(Kind::Groq, alnum, 52, 52)),
        ("xai-", tok(Kind::Xai, alnum, 70, 90)),
        ("AIza", tok(Kind::Google, b64url, 35, 35)),
        ("AKIA", tok(Kind::AwsKeyId, upper_digit, 16, 16)),
        ("ASIA", tok(Kind::AwsKeyId, upper_digit, 16, 16)),
        ("github_pat_", tok(Kind::GitHub, alnum_under, 70, 255)),
        ("glpat-", tok(Kind::GitLab, b64url, 20, 255)),
        ("sk_live_", tok(Kind::Stripe, alnum, 24, 247)),
        ("rk_live_", tok(Kind::Stripe, alnum, 24, 247)),
        ("npm_", tok(Kind::Npm, alnum, 36, 36)),
        ("hooks.slack.com/services/", Shape::SlackWebhook),
        ("-----BEGIN ", Shape::Pem),
        ("://", Shape::Url),
        ("eyJ", Shape::Jwt),
    ];
    for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        a.push((p, tok(Kind::GitHub, alnum, 36, 251)));
    }
    for p in ["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"] {
        a.push((p, tok(Kind::Slack, alnum_dash, 20, 255)));
    }
    a
}
