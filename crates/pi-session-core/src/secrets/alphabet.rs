//! What the bytes of a secret look like: the alphabets of the shapes' bodies, the run of one
//! alphabet from a place, and whether a body is plausibly random rather than a placeholder. Both
//! the simple shapes (`shapes`) and the structured forms (`forms`) check with these.

pub(super) fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
pub(super) fn b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}
pub(super) fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
pub(super) fn lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}
pub(super) fn alnum_under(b: u8) -> bool {
    alnum(b) || b == b'_'
}
pub(super) fn alnum_dash(b: u8) -> bool {
    alnum(b) || b == b'-'
}
pub(super) fn b64(b: u8) -> bool {
    alnum(b) || b == b'+' || b == b'/'
}

/// The end of the run of `pred` bytes from `at`.
pub(super) fn run(t: &[u8], at: usize, pred: impl Fn(u8) -> bool) -> usize {
    at + t
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| pred(b))
        .count()
}

/// Whether a body looks like a real random secret rather than a placeholder: not one character
/// repeated (`xxxx`), no documented example (`EXAMPLE`), no long ascending run (`abcdef`,
/// `123456`), and enough distinct characters for its length.
pub(super) fn plausible(body: &[u8]) -> bool {
    if body.len() < 8 {
        return !body.is_empty();
    }
    if memchr::memmem::find(body, b"EXAMPLE").is_some()
        || memchr::memmem::find(body, b"example").is_some()
    {
        return false;
    }
    let mut seen = [false; 256];
    let mut distinct = 0;
    let mut ascending = 1;
    let mut longest_ascending = 1;
    let mut same = 1;
    let mut longest_same = 1;
    for (i, &b) in body.iter().enumerate() {
        if !seen[usize::from(b)] {
            seen[usize::from(b)] = true;
            distinct += 1;
        }
        if i > 0 {
            let prev = body[i - 1];
            ascending = if b == prev.wrapping_add(1) {
                ascending + 1
            } else {
                1
            };
            same = if b == prev { same + 1 } else { 1 };
            longest_ascending = longest_ascending.max(ascending);
            longest_same = longest_same.max(same);
        }
    }
    distinct >= (body.len() / 4).clamp(4, 12) && longest_ascending < 6 && longest_same < 6
}
