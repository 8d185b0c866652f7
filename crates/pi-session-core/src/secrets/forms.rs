//! The shapes with a structure beyond a prefix and a body: PEM private keys, URL passwords,
//! JWTs, Slack webhooks, and the AWS secret key found only next to a key id.

use std::ops::Range;

use super::alphabet::{alnum, b64, b64url, plausible, run, upper_digit};
use super::kind::Kind;

/// A PEM private key: the BEGIN line, a body of at least 64 base64 characters (whitespace and
/// literal `\n` between them, as a key inside JSON text shows), up to the matching END line, or
/// the body's end when the text was cut before it.
pub(super) fn pem(t: &[u8], at: usize) -> Option<(Range<usize>, Kind)> {
    let label_start = at + b"-----BEGIN ".len();
    if t.get(at..label_start) != Some(b"-----BEGIN ") {
        return None;
    }
    let label_end = run(t, label_start, |b| upper_digit(b) || b == b' ');
    let label = &t[label_start..label_end];
    if !(label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK"))
        || t.get(label_end..label_end + 5) != Some(b"-----")
    {
        return None;
    }
    let body_start = label_end + 5;
    let limit = (body_start + 64 * 1024).min(t.len());
    let mut end_marker = b"-----END ".to_vec();
    end_marker.extend_from_slice(label);
    end_marker.extend_from_slice(b"-----");
    let window = &t[body_start..limit];
    let (body_end, end) = match memchr::memmem::find(window, &end_marker) {
        Some(i) => (body_start + i, body_start + i + end_marker.len()),
        None => {
            let e = run(t, body_start, |b| {
                b64(b) || b == b'=' || b.is_ascii_whitespace() || b == b'\\'
            });
            (e, e)
        }
    };
    let base64_chars = t[body_start..body_end]
        .iter()
        .filter(|&&b| b64(b) && b != b'n' && b != b'r')
        .count();
    (base64_chars >= 64).then_some((at..end, Kind::PrivateKey))
}

/// The authority of a URL whose `://` ends at `after`: `(userinfo end, host end)` when it
/// holds `user:password@host`; bounded, and ended by what cannot be in it unescaped.
pub(super) fn authority(t: &[u8], after: usize) -> Option<(usize, usize)> {
    let end = run(t, after, |b| {
        !b.is_ascii_whitespace()
            && !b.is_ascii_control()
            && !matches!(
                b,
                b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'`' | b'\\'
            )
    });
    if end - after > 512 {
        return None;
    }
    let a = &t[after..end];
    let at_sign = memchr::memrchr(b'@', a)?;
    memchr::memchr(b':', &a[..at_sign])?;
    Some((after + at_sign, end))
}

/// Passwords that documentation and templates put into URLs.
fn placeholder_password(pass: &[u8], user: &[u8]) -> bool {
    if pass == user
        || matches!(
            pass.first(),
            Some(b'$' | b'{' | b'<' | b'%' | b'[' | b'*' | b'.')
        )
    {
        return true;
    }
    if pass.iter().all(|&b| b == pass[0]) {
        return true;
    }
    let lower = pass.to_ascii_lowercase();
    const WORDS: [&[u8]; 12] = [
        b"password",
        b"passwd",
        b"secret",
        b"changeme",
        b"example",
        b"placeholder",
        b"your",
        b"redacted",
        b"dummy",
        b"xxx",
        b"<",
        b"...",
    ];
    WORDS
        .iter()
        .any(|w| memchr::memmem::find(&lower, w).is_some())
        || matches!(
            &lower[..],
            b"pass" | b"pwd" | b"pw" | b"token" | b"pat" | b"key"
        )
}

/// The password of `scheme://user:password@host`; `at` is where `://` starts.
pub(super) fn url_password(t: &[u8], at: usize) -> Option<(Range<usize>, Kind)> {
    let scheme_start = (0..at)
        .rev()
        .take_while(|&i| t[i].is_ascii_alphanumeric() || matches!(t[i], b'+' | b'.' | b'-'))
        .last()?;
    if !t[scheme_start].is_ascii_alphabetic() || at - scheme_start < 2 {
        return None;
    }
    let after = at + 3;
    let (at_sign, end) = authority(t, after)?;
    let colon = after + memchr::memchr(b':', &t[after..at_sign])?;
    let (user, pass) = (&t[after..colon], &t[colon + 1..at_sign]);
    let host = &t[at_sign + 1..end];
    let host_ok = host.first().is_some_and(|&b| alnum(b) || b == b'[')
        && host
            .iter()
            .all(|&b| alnum(b) || matches!(b, b'.' | b'-' | b':' | b'[' | b']' | b'%' | b'_'));
    if pass.is_empty() || !host_ok || placeholder_password(pass, user) {
        return None;
    }
    Some((colon + 1..at_sign, Kind::UrlPassword))
}

/// Decode base64url (padding optional); `None` on a character outside it.
fn base64url_decode(s: &[u8]) -> Option<Vec<u8>> {
    let value = |b: u8| -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        } as u32)
    };
    let s = s.strip_suffix(b"==").or(s.strip_suffix(b"=")).unwrap_or(s);
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut acc = 0u32;
        for (i, &b) in chunk.iter().enumerate() {
            acc |= value(b)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len().max(1)]);
    }
    Some(out)
}

/// A JWT: `header.payload.signature`, each base64url; the header is a JSON object with `alg`,
/// the payload a JSON object.
pub(super) fn jwt(t: &[u8], at: usize) -> Option<(Range<usize>, Kind)> {
    if at > 0 && (b64url(t[at - 1]) || t[at - 1] == b'.') {
        return None;
    }
    let h_end = run(t, at, b64url);
    let p_start = h_end + 1;
    let p_end = run(t, p_start, b64url);
    let s_start = p_end + 1;
    let s_end = run(t, s_start, b64url);
    if t.get(h_end) != Some(&b'.') || t.get(p_end) != Some(&b'.') {
        return None;
    }
    if h_end - at < 10 || p_end - p_start < 10 || s_end - s_start < 16 {
        return None;
    }
    let header = base64url_decode(&t[at..h_end])?;
    let payload = base64url_decode(&t[p_start..p_end])?;
    let has_alg = crate::json::parse(&header)
        .ok()
        .is_some_and(|v| v.as_object().is_some_and(|o| o.contains_key("alg")));
    if !has_alg || payload.trim_ascii_start().first() != Some(&b'{') {
        return None;
    }
    Some((at..s_end, Kind::Jwt))
}

pub(super) fn slack_webhook(
    t: &[u8],
    at: usize,
    anchor_len: usize,
) -> Option<(Range<usize>, Kind)> {
    let mut i = at + anchor_len;
    for lead in [b'T', b'B'] {
        if t.get(i) != Some(&lead) {
            return None;
        }
        let e = run(t, i + 1, upper_digit);
        if e - (i + 1) < 8 || t.get(e) != Some(&b'/') {
            return None;
        }
        i = e + 1;
    }
    let end = run(t, i, alnum);
    (end - i >= 20 && plausible(&t[i..end])).then_some((at..end, Kind::SlackWebhook))
}

/// An AWS secret access key: exactly 40 base64 characters, with upper and lower case letters and
/// a digit, between characters that cannot continue it. Looked for only near a key id.
pub(super) fn aws_secrets(t: &[u8], window: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = window.start;
    while i < window.end.min(t.len()) {
        if !b64(t[i]) {
            i += 1;
            continue;
        }
        let end = run(t, i, b64);
        let s = &t[i..end];
        let fenced = (i == 0 || !matches!(t[i - 1], b'=' | b'-' | b'_'))
            && !matches!(t.get(end), Some(b'=' | b'-' | b'_'));
        if end - i == 40
            && fenced
            && s.iter().any(u8::is_ascii_lowercase)
            && s.iter().any(u8::is_ascii_uppercase)
            && s.iter().any(u8::is_ascii_digit)
            && plausible(s)
        {
            out.push(i..end);
        }
        i = end;
    }
    out
}
