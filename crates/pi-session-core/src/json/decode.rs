//! JS strings as code units: decoding canonical escaped text (the inside of a `JSON.stringify`ed
//! string) into the Latin-1 or UTF-16 units that Node-API copies (or keeps, as external strings)
//! without transcoding.

use super::string::{parse_hex4, JsStr};

/// A JS string's code units ready for `napi_create_string_latin1` (every unit below 0x100) or
/// `napi_create_string_utf16`: both are plain copies on the JS side, unlike UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsText {
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

impl JsText {
    /// As a Rust string (a lone surrogate becomes U+FFFD).
    pub fn to_string_lossy(&self) -> String {
        match self {
            JsText::Latin1(b) => b.iter().map(|&c| char::from(c)).collect(),
            JsText::Utf16(u) => String::from_utf16_lossy(u),
        }
    }
}

impl JsStr {
    /// The code units this string has in JavaScript (escapes decoded, lone surrogates kept).
    pub fn to_js_text(&self) -> JsText {
        decode_escaped(self.as_escaped())
    }
}

/// Decode canonical escaped text (the inside of a `JSON.stringify`ed string) into JS code units:
/// Latin-1 while every unit fits a byte (the common case, copied run by run), UTF-16 otherwise.
pub fn decode_escaped(escaped: &str) -> JsText {
    decode_escaped_bytes(escaped.as_bytes())
}

/// [`decode_escaped`] on bytes that should be UTF-8 (a cache file's record): UTF-8 is checked
/// only where a non-ASCII byte is met, and an invalid sequence reads as U+FFFD.
pub fn decode_escaped_bytes(escaped: &[u8]) -> JsText {
    match decode_latin1(escaped) {
        Some(bytes) => JsText::Latin1(bytes),
        None => JsText::Utf16(decode_utf16(escaped)),
    }
}

/// A JSON text in the form a JS string of it is cheapest to make and parse: no copy, no UTF-8
/// decoding, one byte per unit where that is possible (V8's parser reads one-byte text faster,
/// and the binding hands the buffer over as an external string). `JSON.parse` reads the same
/// values from it as from `text`:
/// - ASCII text is its own Latin-1 code units;
/// - text with few characters above U+00FF (at most one in [`ESCAPE_WIDE_AT_MOST`] bytes) is
///   Latin-1: characters up to U+00FF are their own byte, the others are written as `\u`
///   escapes (a surrogate pair above U+FFFF). In a JSON text such characters stand only inside
///   strings, where the escape is the same character; anywhere else both forms are a syntax
///   error;
/// - other text becomes UTF-16.
///
/// `text` should be UTF-8 (the lines as written); bytes that are not read as U+FFFD, as
/// `String::from_utf8_lossy` reads them. ASCII text is valid as it is: only text with non-ASCII
/// bytes is checked.
pub fn json_text_units(text: impl Into<Vec<u8>>) -> JsText {
    let bytes = text.into();
    if count_non_ascii(&bytes) == 0 {
        return JsText::Latin1(bytes);
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    let bytes = text.as_bytes();
    let wide = count_wide(bytes);
    if wide > bytes.len() / ESCAPE_WIDE_AT_MOST {
        return JsText::Utf16(text.encode_utf16().collect());
    }
    // A wide character of 2 to 4 bytes becomes 6 or 12: at most 8 more bytes each.
    let mut out = Vec::with_capacity(bytes.len() + 8 * wide);
    let mut i = 0;
    while i < bytes.len() {
        let stop = find_high(bytes, i);
        out.extend_from_slice(&bytes[i..stop]);
        if stop == bytes.len() {
            break;
        }
        let (ch, len) = char_at(bytes, stop);
        match u8::try_from(u32::from(ch)) {
            Ok(latin1) => out.push(latin1),
            Err(_) => {
                let mut units = [0u16; 2];
                for &unit in ch.encode_utf16(&mut units).iter() {
                    out.extend_from_slice(b"\\u");
                    for shift in [12, 8, 4, 0] {
                        out.push(b"0123456789abcdef"[usize::from((unit >> shift) & 0xf)]);
                    }
                }
            }
        }
        i = stop + len;
    }
    JsText::Latin1(out)
}

/// [`json_text_units`] keeps a text Latin-1 (escaping its characters above U+00FF) when at most
/// one character in this many bytes is above U+00FF, and makes UTF-16 of it otherwise: for
/// text in a script of 3-byte characters that is one byte in 8, beyond which the escaped text
/// outgrows the UTF-16 one and the parser's escape decoding costs more than it saves.
pub const ESCAPE_WIDE_AT_MOST: usize = 24;

/// True when UTF-8 `s` holds a character above U+00FF written as itself (not escaped): a string
/// value with one is two bytes per unit in JS.
pub fn has_wide_chars(s: &[u8]) -> bool {
    // Such a character, and only such, starts with a byte of at least 0xC4; a maximum over a
    // chunk is cheap to compute for many bytes at once.
    s.chunks(64)
        .any(|c| c.iter().fold(0u8, |m, &b| m.max(b)) >= WIDE_LEAD)
}

/// The smallest first byte of a character above U+00FF in UTF-8 (U+0100 is C4 80).
const WIDE_LEAD: u8 = 0xc4;

/// How many characters above U+00FF UTF-8 `s` holds (each has exactly one byte of at least
/// [`WIDE_LEAD`], its first).
fn count_wide(s: &[u8]) -> usize {
    s.iter().filter(|&&b| b >= WIDE_LEAD).count()
}

/// How many bytes of `s` are not ASCII.
fn count_non_ascii(s: &[u8]) -> usize {
    let mut chunks = s.chunks_exact(8);
    let mut n = 0;
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        n += (word & 0x8080_8080_8080_8080).count_ones() as usize;
    }
    n + chunks.remainder().iter().filter(|&&b| b >= 0x80).count()
}

/// Offset of the first non-ASCII byte at or after `i` (or `s.len()`).
fn find_high(s: &[u8], i: usize) -> usize {
    let mut j = i;
    while j + 8 <= s.len() {
        let word = u64::from_le_bytes(s[j..j + 8].try_into().unwrap_or([0; 8]));
        let high = word & 0x8080_8080_8080_8080;
        if high != 0 {
            return j + (high.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    s[j..]
        .iter()
        .position(|&b| b >= 0x80)
        .map_or(s.len(), |k| j + k)
}

/// True when escaped string contents are their own code units: ASCII without a backslash (the
/// usual image data), so they can be handed to JS as Latin-1 without decoding.
pub fn is_plain_ascii(escaped: &[u8]) -> bool {
    find_backslash_or_high(escaped, 0) == escaped.len()
}

/// The character starting at `s[i]` (a non-ASCII byte) and its length in bytes.
fn char_at(s: &[u8], i: usize) -> (char, usize) {
    let len = match s[i] {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    match s.get(i..i + len).map(std::str::from_utf8) {
        Some(Ok(t)) => (t.chars().next().unwrap_or('\u{fffd}'), len),
        _ => ('\u{fffd}', 1),
    }
}

/// Offset of the first backslash or non-ASCII byte at or after `i` (or `s.len()`).
fn find_backslash_or_high(s: &[u8], i: usize) -> usize {
    // Sixteen bytes at a time where SSE2 is sure to be there; the rest (and other CPUs) bytewise.
    #[cfg(target_arch = "x86_64")]
    let i = {
        let mut i = i;
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of the x86_64 baseline; each load reads 16 bytes inside `s`.
        unsafe {
            let backslash = _mm_set1_epi8(b'\\' as i8);
            while i + 16 <= s.len() {
                let v = _mm_loadu_si128(s.as_ptr().add(i).cast::<__m128i>());
                // The sign bit of each byte is set exactly for non-ASCII bytes.
                let m = _mm_movemask_epi8(v) | _mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash));
                if m != 0 {
                    return i + m.trailing_zeros() as usize;
                }
                i += 16;
            }
        }
        i
    };
    s[i..]
        .iter()
        .position(|&c| c == b'\\' || c >= 0x80)
        .map_or(s.len(), |k| i + k)
}

/// One escape at `s[i]` (a backslash): the unit and the escape's length.
fn escape_at(s: &[u8], i: usize) -> (u16, usize) {
    let esc = s.get(i + 1).copied().unwrap_or(b'\\');
    if esc == b'u' {
        if let Some(unit) = s.get(i + 2..i + 6).and_then(parse_hex4) {
            return (unit, 6);
        }
    }
    let unit = u16::from(match esc {
        b'b' => 8,
        b'f' => 12,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'"' => b'"',
        b'/' => b'/',
        _ => b'\\',
    });
    // As in `to_string_lossy`: unknown escapes cannot occur in canonical text.
    let len = if matches!(esc, b'b' | b'f' | b'n' | b'r' | b't' | b'"' | b'/' | b'\\') {
        2
    } else {
        1
    };
    (unit, len)
}

fn decode_latin1(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let stop = find_backslash_or_high(s, i);
        out.extend_from_slice(&s[i..stop]);
        i = stop;
        match s.get(i) {
            None => break,
            Some(b'\\') => {
                let (unit, len) = escape_at(s, i);
                out.push(u8::try_from(unit).ok()?);
                i += len;
            }
            Some(_) => {
                let (ch, len) = char_at(s, i);
                out.push(u8::try_from(u32::from(ch)).ok()?);
                i += len;
            }
        }
    }
    Some(out)
}

fn decode_utf16(s: &[u8]) -> Vec<u16> {
    let mut out: Vec<u16> = Vec::with_capacity(s.len());
    decode_utf16_into(s, &mut out);
    out
}

/// [`decode_escaped_bytes`] as UTF-16, appended to `out`.
pub fn decode_utf16_into(s: &[u8], out: &mut Vec<u16>) {
    out.reserve(s.len());
    let mut i = 0;
    while i < s.len() {
        let stop = find_backslash_or_high(s, i);
        out.extend(s[i..stop].iter().map(|&c| u16::from(c)));
        i = stop;
        match s.get(i) {
            None => break,
            Some(b'\\') => {
                let (unit, len) = escape_at(s, i);
                out.push(unit);
                i += len;
            }
            Some(_) => {
                let (ch, len) = char_at(s, i);
                let mut buf = [0u16; 2];
                out.extend_from_slice(ch.encode_utf16(&mut buf));
                i += len;
            }
        }
    }
}

#[cfg(test)]
mod js_text_tests {
    use super::*;

    fn units(t: &JsText) -> Vec<u16> {
        match t {
            JsText::Latin1(b) => b.iter().map(|&c| u16::from(c)).collect(),
            JsText::Utf16(u) => u.clone(),
        }
    }

    #[test]
    fn decodes_like_javascript() {
        let cases: [(&str, &str, bool); 7] = [
            ("plain ascii", "plain ascii", true),
            (
                "tab\\tquote\\\"slash\\\\nl\\n",
                "tab\tquote\"slash\\nl\n",
                true,
            ),
            ("caf\u{e9} \\u00ff", "caf\u{e9} \u{ff}", true),
            ("emoji \u{1f600}!", "emoji \u{1f600}!", false),
            ("\\u0100 wide", "\u{100} wide", false),
            ("\\b\\f\\r\\/", "\u{8}\u{c}\r/", true),
            ("", "", true),
        ];
        for (escaped, expect, latin1) in cases {
            let t = decode_escaped(escaped);
            assert_eq!(matches!(t, JsText::Latin1(_)), latin1, "{escaped}");
            assert_eq!(
                units(&t),
                expect.encode_utf16().collect::<Vec<_>>(),
                "{escaped}"
            );
        }
        // Invalid UTF-8 from a damaged file reads as U+FFFD, one per bad byte.
        let t = decode_escaped_bytes(b"a\xffb\xe2\x82");
        assert_eq!(units(&t), vec![0x61, 0xfffd, 0x62, 0xfffd, 0xfffd]);
        // Lone surrogates stay single units.
        let t = decode_escaped("a\\ud800b\\udc00");
        assert_eq!(units(&t), vec![0x61, 0xd800, 0x62, 0xdc00]);
    }

    /// The JS string `JSON.parse` would read `json` as: the code units of its one string value.
    fn parsed_units(t: &JsText) -> Vec<u16> {
        let text = t.to_string_lossy();
        let inner = text
            .trim()
            .strip_prefix("[\"")
            .and_then(|r| r.strip_suffix("\"]"));
        decode_escaped(inner.expect("a one-string array")).into_units()
    }

    impl JsText {
        fn into_units(self) -> Vec<u16> {
            units(&self)
        }
    }

    #[test]
    fn json_texts_keep_their_values_in_the_cheapest_form() {
        // ASCII: the same bytes.
        let t = json_text_units(r#"["plain \"q\""]"#.to_owned());
        assert_eq!(t, JsText::Latin1(br#"["plain \"q\""]"#.to_vec()));
        // Few wide characters: Latin-1, the characters up to U+00FF as their own byte and the
        // others escaped (BMP and beyond), same string value.
        let value = format!("{}caf\u{e9} \u{4e2d} \u{1f600}", "a".repeat(64));
        let t = json_text_units(format!("[\"{value}\"]"));
        let JsText::Latin1(bytes) = &t else {
            panic!("escaped text stays Latin-1: {t:?}")
        };
        assert_eq!(
            bytes.iter().filter(|&&b| b >= 0x80).collect::<Vec<_>>(),
            [&0xe9]
        );
        let tail = b"caf\xe9 \\u4e2d \\ud83d\\ude00";
        assert!(bytes.windows(tail.len()).any(|w| w == tail), "{t:?}");
        assert_eq!(parsed_units(&t), value.encode_utf16().collect::<Vec<_>>());
        // Latin-1 text, however much of it: one byte per character.
        let value = "\u{e9}\u{fc}\u{df}".repeat(20);
        let t = json_text_units(format!("[\"{value}\"]"));
        assert_eq!(
            t,
            JsText::Latin1(
                format!("[\"{}\"]", "\u{e9}\u{fc}\u{df}".repeat(20))
                    .chars()
                    .map(|c| c as u8)
                    .collect()
            )
        );
        // Mostly wide characters: UTF-16 of the text itself.
        let value = "\u{4e2d}\u{6587}".repeat(20);
        let t = json_text_units(format!("[\"{value}\"]"));
        assert!(matches!(t, JsText::Utf16(_)));
        assert_eq!(parsed_units(&t), value.encode_utf16().collect::<Vec<_>>());
        // The boundary: one wide character in ESCAPE_WIDE_AT_MOST bytes is escaped, in one
        // byte fewer it is not.
        let at = |n: usize| json_text_units(format!("[\"\u{4e2d}{}\"]", "a".repeat(n - 7)));
        assert!(matches!(at(ESCAPE_WIDE_AT_MOST), JsText::Latin1(_)));
        assert!(matches!(at(ESCAPE_WIDE_AT_MOST - 1), JsText::Utf16(_)));
        // Bytes that are not UTF-8 read as U+FFFD, a wide character.
        let t = json_text_units(b"[\"a\xffb\"]".to_vec());
        assert_eq!(parsed_units(&t), [0x61, 0xfffd, 0x62]);
    }

    #[test]
    fn wide_characters_are_told_from_latin1_ones() {
        for at in 0..130 {
            let mut s = vec![b'a'; 130];
            s[at] = 0xc3; // U+00C0..U+00FF start with C2 or C3
            assert!(!has_wide_chars(&s));
            s[at] = 0xc4;
            assert!(has_wide_chars(&s), "{at}");
            assert_eq!(count_wide(&s), 1);
        }
        assert!(has_wide_chars("\u{1f600}".as_bytes()));
        assert_eq!(count_wide("\u{e9}\u{100}\u{4e2d}\u{1f600}".as_bytes()), 3);
    }

    #[test]
    fn non_ascii_is_counted_and_found_across_word_boundaries() {
        for at in 0..20 {
            let mut s = vec![b'a'; 20];
            s[at] = 0xc3;
            assert_eq!(count_non_ascii(&s), 1);
            assert_eq!(find_high(&s, 0), at);
            assert_eq!(find_high(&s, at + 1), 20);
        }
    }
}
