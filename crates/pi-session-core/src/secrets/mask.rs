//! How a finding is shown without showing it: a masked preview, and a fingerprint (the start of
//! the secret's SHA-256) that names it for an acknowledgement.

use super::kind::Kind;
use super::sha256;

/// Hex digits of a fingerprint (64 bits of the SHA-256).
pub const FINGERPRINT_LEN: usize = 16;

/// The fingerprint of a secret's bytes: 16 lower-case hex digits.
pub fn fingerprint(secret: &[u8]) -> String {
    sha256::hex(&sha256::digest(secret)[..FINGERPRINT_LEN / 2])
}

/// Whether `s` has a fingerprint's form.
pub fn is_fingerprint(s: &str) -> bool {
    s.len() == FINGERPRINT_LEN
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A preview that never holds the secret whole: a key's first six characters (mostly its
/// fixed prefix) and last two, with its length; less of a shorter one, nothing of a short one
/// (a URL's password). A private key shows its BEGIN line, which is no secret.
pub fn preview(kind: Kind, secret: &[u8]) -> String {
    let n = secret.len();
    let text = |r: &[u8]| String::from_utf8_lossy(r).into_owned();
    if kind == Kind::PrivateKey {
        let head = secret
            .iter()
            .position(|&b| b == b'\n' || b == b'\\')
            .map_or(secret, |i| &secret[..i]);
        return format!("{}… ({n} chars)", text(head));
    }
    match n {
        24.. => format!(
            "{}…{} ({n} chars)",
            text(&secret[..6]),
            text(&secret[n - 2..])
        ),
        12..24 => format!("{}… ({n} chars)", text(&secret[..3])),
        _ => format!("… ({n} chars)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_shows_little_of_a_secret_and_less_of_a_short_one() {
        // Assembled here, as every test secret is: no key-shaped literal in the repository.
        let long = format!("sk-{}-api03-{}IJ", "ant", "q7".repeat(20));
        let long = long.as_bytes();
        let p = preview(Kind::Anthropic, long);
        assert_eq!(p, format!("sk-ant…IJ ({} chars)", long.len()));
        assert_eq!(
            preview(Kind::UrlPassword, b"hunter2hunter2"),
            "hun… (14 chars)"
        );
        assert_eq!(preview(Kind::UrlPassword, b"hunter2"), "… (7 chars)");
        let pem = b"-----BEGIN RSA PRIVATE KEY-----\nMIIE";
        assert_eq!(
            preview(Kind::PrivateKey, pem),
            format!("-----BEGIN RSA PRIVATE KEY-----… ({} chars)", pem.len())
        );
    }

    #[test]
    fn fingerprints_are_16_hex_digits_and_tell_secrets_apart() {
        let a = fingerprint(b"one secret");
        assert!(is_fingerprint(&a), "{a}");
        assert_ne!(a, fingerprint(b"another secret"));
        assert_eq!(a, fingerprint(b"one secret"));
        assert!(!is_fingerprint("xyz") && !is_fingerprint(&a.to_uppercase()));
    }
}
