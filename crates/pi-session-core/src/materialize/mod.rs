//! Record lines on their way to JS objects: one JSON text for `JSON.parse`, with long string
//! values, and strings with characters above U+00FF, cut out and handed over as JS code units,
//! to be put back by path.
//!
//! A multi-megabyte image or tool output would otherwise cross as part of a JSON text that V8
//! decodes from UTF-8, scans, and copies into the parsed object, leaving the text as garbage of
//! the same size until the next collection: opening a big session and building its context held
//! every long string twice. Cut out, it is decoded once (off V8's parser) and copied once.
//!
//! A string with a character above U+00FF is two bytes per unit in JS, and V8's parser makes one
//! slowly: from a `\u` escape in a one-byte text, or from a two-byte text, which is slower to
//! read as a whole. Parsing every line of an 11 MB session of prose with a few such characters
//! per message (`—`, `→`, `日本`) took 64 ms with them escaped and 55 ms as UTF-16 text, against
//! 19 ms with those strings cut out and put back (the binding gives them all as one string per
//! batch, which JS slices).

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};
use crate::json;
use crate::session::Session;

mod batches;
mod columns;
mod strings;

pub(crate) use batches::{in_order, BatchBuilder};
pub use batches::{
    CutRef, CutValue, Form, OwnedStep, PreparedBatch, PreparedCut, FROM_VALUES, FROM_WIDE,
    STEP_INDEX, STEP_NAME,
};
pub use strings::{strings_where, FoundStrings, Step, WalkScratch};

/// String values at least this long (in bytes, as written) are cut out. Shorter ones cost more
/// to hand over one by one than to parse.
pub const MIN_CUT_BYTES: usize = 16 << 10;

/// String values with a character above U+00FF (see [`json::has_wide_chars`]) are cut out from
/// this long (in bytes, as written): shorter ones cost about as much to put back by path as to
/// parse from their escapes.
pub const MIN_WIDE_CUT_BYTES: usize = 64;

/// Receives each cut string while its line is in memory: the item (line) it belongs to in the
/// text, the path to it, and its contents as written (between the quotes, still escaped, UTF-8;
/// see [`json::decode_escaped_bytes`]). `plain` means ASCII without a backslash: the bytes are
/// the string's code units as they are.
pub trait CutSink {
    fn cut(&mut self, item: u32, path: &[Step<'_>], escaped: &[u8], plain: bool);

    /// The same for a line read from the file into a buffer of its own: the string is
    /// `line[range]`, and a sink may keep `line` (shared) instead of copying the string out of
    /// it. Image data read from a big session's file is then handed to JS without a copy: an
    /// external string pointing into the buffer the file was read into.
    fn cut_shared(
        &mut self,
        item: u32,
        path: &[Step<'_>],
        line: &Arc<Vec<u8>>,
        range: Range<usize>,
        plain: bool,
    ) {
        self.cut(item, path, &line[range], plain)
    }
}

impl<F: FnMut(u32, &[Step<'_>], &[u8], bool)> CutSink for F {
    fn cut(&mut self, item: u32, path: &[Step<'_>], escaped: &[u8], plain: bool) {
        self(item, path, escaped, plain)
    }
}

impl Session {
    /// One record's line for `JSON.parse`, its long strings given to `sink` (cuts are of item 0;
    /// [`Session::prepare_batches`] gives many lines at once).
    pub fn line_for_js(&self, pos: u32, sink: &mut impl CutSink) -> Result<String> {
        let line = self.full_line(self.checked(pos)?)?;
        let mut out = Vec::with_capacity(line.len().min(MIN_CUT_BYTES));
        push_any_line(line, 0, &mut out, sink, &mut WalkScratch::default());
        Ok(into_string(out))
    }

    pub(crate) fn checked(&self, pos: u32) -> Result<u32> {
        if (pos as usize) < self.record_count() {
            Ok(pos)
        } else {
            Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("record {pos} out of range"),
            ))
        }
    }
}

/// [`push_line`] for a line held in memory (borrowed) or read for this call (owned: its buffer
/// is shared with the sink, which may keep it for the strings cut from it).
pub(crate) fn push_any_line(
    line: Cow<'_, [u8]>,
    item: u32,
    out: &mut Vec<u8>,
    sink: &mut impl CutSink,
    scratch: &mut WalkScratch,
) -> (usize, usize) {
    match line {
        Cow::Owned(bytes) if bytes.len() >= MIN_CUT_BYTES + 2 => {
            let shared = Arc::new(bytes);
            push_line(&shared, Some(&shared), item, out, sink, scratch)
        }
        line => push_line(&line, None, item, out, sink, scratch),
    }
}

/// Appends `line` to `out` with its long strings given to `sink` (with `shared`, the same bytes
/// in a buffer the sink may keep, when there is one); returns how many were cut and their bytes.
/// `scratch` lends the walk its vectors.
fn push_line(
    line: &[u8],
    shared: Option<&Arc<Vec<u8>>>,
    item: u32,
    out: &mut Vec<u8>,
    sink: &mut impl CutSink,
    scratch: &mut WalkScratch,
) -> (usize, usize) {
    let wide = line.len() >= MIN_WIDE_CUT_BYTES + 2 && json::has_wide_chars(line);
    if line.len() < MIN_CUT_BYTES + 2 && !wide {
        out.extend_from_slice(line);
        return (0, 0);
    }
    let strings = if wide {
        strings_where(
            line,
            MIN_WIDE_CUT_BYTES,
            |s| s.len() >= MIN_CUT_BYTES || json::has_wide_chars(s),
            scratch,
        )
    } else {
        strings_where(line, MIN_CUT_BYTES, |_| true, scratch)
    };
    let mut cuts = 0;
    let mut cut_bytes = 0;
    let mut prev = 0;
    for (path, range) in strings.iter() {
        let escaped = &line[range.clone()];
        let plain = json::is_plain_ascii(escaped);
        // Contents that are not UTF-8 stay in the text, whose lossy decoding decides what JS sees.
        if !plain && std::str::from_utf8(escaped).is_err() {
            continue;
        }
        // Replace the string, quotes included.
        out.extend_from_slice(&line[prev..range.start - 1]);
        out.push(b'0');
        prev = range.end + 1;
        cuts += 1;
        cut_bytes += escaped.len();
        match shared {
            Some(buffer) => sink.cut_shared(item, path, buffer, range.clone(), plain),
            None => sink.cut(item, path, escaped, plain),
        }
    }
    out.extend_from_slice(&line[prev..]);
    scratch.keep(strings);
    (cuts, cut_bytes)
}

pub(crate) fn into_string(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsText;

    #[derive(Debug, PartialEq)]
    struct Cut {
        item: u32,
        path: Vec<String>,
        text: String,
        latin1: bool,
    }

    fn units(t: &JsText) -> (String, bool) {
        match t {
            JsText::Latin1(b) => (b.iter().map(|&c| char::from(c)).collect(), true),
            JsText::Utf16(u) => (String::from_utf16_lossy(u), false),
        }
    }

    fn cut_one(line: &[u8]) -> (Vec<u8>, Vec<Cut>) {
        let mut out = Vec::new();
        let mut cuts = Vec::new();
        let mut sink = |item: u32, path: &[Step<'_>], escaped: &[u8], _plain: bool| {
            let (text, latin1) = units(&json::decode_escaped_bytes(escaped));
            let path = path
                .iter()
                .map(|s| match s {
                    Step::Key(k) => String::from_utf8_lossy(k).into_owned(),
                    Step::Index(i) => i.to_string(),
                })
                .collect();
            cuts.push(Cut {
                item,
                path,
                text,
                latin1,
            });
        };
        let (n, _) = push_line(
            line,
            None,
            3,
            &mut out,
            &mut sink,
            &mut WalkScratch::default(),
        );
        assert_eq!(n, cuts.len());
        (out, cuts)
    }

    #[test]
    fn long_strings_become_zero_and_cuts() {
        let big = "x".repeat(MIN_CUT_BYTES);
        let esc = format!("{}\\n\\u00e9\\ud83d\\ude00", "y".repeat(MIN_CUT_BYTES));
        let line = format!(
            r#"{{"type":"message","message":{{"content":[{{"type":"image","data":"{big}"}},{{"type":"text","text":"{esc}"}}]}},"short":"s"}}"#
        );
        let (text, cuts) = cut_one(line.as_bytes());
        assert_eq!(
            String::from_utf8(text).unwrap(),
            r#"{"type":"message","message":{"content":[{"type":"image","data":0},{"type":"text","text":0}]},"short":"s"}"#
        );
        let path = |last: &str, i: &str| -> Vec<String> {
            ["message", "content", i, last].map(String::from).to_vec()
        };
        assert_eq!(
            cuts,
            [
                Cut {
                    item: 3,
                    path: path("data", "0"),
                    text: big.clone(),
                    latin1: true
                },
                Cut {
                    item: 3,
                    path: path("text", "1"),
                    text: format!("{}\n\u{e9}\u{1f600}", "y".repeat(MIN_CUT_BYTES)),
                    latin1: false
                },
            ]
        );
        assert!(json::is_plain_ascii(big.as_bytes()));
        assert!(!json::is_plain_ascii(esc.as_bytes()));
    }

    #[test]
    fn strings_with_characters_above_latin1_are_cut_from_their_minimum_length() {
        let wide = format!(
            "{} \u{2014} \u{65e5}\u{672c}",
            "w".repeat(MIN_WIDE_CUT_BYTES)
        );
        let short_wide = "\u{2192} arrow";
        let latin1 = format!("caf\u{e9} {}", "l".repeat(MIN_WIDE_CUT_BYTES));
        let ascii = "a".repeat(2 * MIN_WIDE_CUT_BYTES);
        let line = format!(
            r#"{{"type":"message","w":"{wide}","s":"{short_wide}","l":"{latin1}","a":"{ascii}","arr":["{wide}"],"dup":{{"x":"{wide}","x":1}}}}"#
        );
        let (text, cuts) = cut_one(line.as_bytes());
        // Only the long-enough strings with a wide character, and none in the object whose
        // member name repeats (JSON.parse keeps the last one there).
        assert_eq!(
            String::from_utf8(text).unwrap(),
            format!(
                r#"{{"type":"message","w":0,"s":"{short_wide}","l":"{latin1}","a":"{ascii}","arr":[0],"dup":{{"x":"{wide}","x":1}}}}"#
            )
        );
        let paths: Vec<_> = cuts.iter().map(|c| c.path.join(".")).collect();
        assert_eq!(paths, ["w", "arr.0"]);
        assert!(cuts.iter().all(|c| c.text == wide && !c.latin1));
        // A line without such characters is walked only when it has a long string.
        let (text, cuts) = cut_one(format!(r#"{{"l":"{latin1}"}}"#).as_bytes());
        assert_eq!(
            (text, cuts.len()),
            (format!(r#"{{"l":"{latin1}"}}"#).into_bytes(), 0)
        );
        // A wide string that is not valid UTF-8 stays in the text (its lossy reading decides).
        let mut bad = format!(r#"{{"w":"{wide}"}}"#).into_bytes();
        let at = bad.len() - 4;
        bad[at] = 0xff;
        let (text, cuts) = cut_one(&bad);
        assert_eq!((text, cuts.len()), (bad, 0));
    }

    #[test]
    fn lines_read_for_the_call_share_their_buffer_with_the_sink() {
        struct Shared(Vec<(Range<usize>, bool, usize)>, usize);
        impl CutSink for Shared {
            fn cut(&mut self, _: u32, _: &[Step<'_>], _: &[u8], _: bool) {
                self.1 += 1;
            }
            fn cut_shared(
                &mut self,
                _: u32,
                _: &[Step<'_>],
                line: &Arc<Vec<u8>>,
                range: Range<usize>,
                plain: bool,
            ) {
                self.0.push((range, plain, Arc::strong_count(line)));
            }
        }
        let big = "x".repeat(MIN_CUT_BYTES);
        let line = format!(r#"{{"a":"{big}","b":"{big}\n"}}"#).into_bytes();
        // Owned (read from the file for this call): shared, by range into the line itself.
        let mut sink = Shared(Vec::new(), 0);
        let mut out = Vec::new();
        push_any_line(
            Cow::Owned(line.clone()),
            0,
            &mut out,
            &mut sink,
            &mut Default::default(),
        );
        assert_eq!(out, br#"{"a":0,"b":0}"#);
        assert_eq!(sink.1, 0);
        let [(a, true, 1), (b, false, 1)] = &sink.0[..] else {
            panic!("two shared cuts, the first plain: {:?}", sink.0)
        };
        assert_eq!(&line[a.clone()], big.as_bytes());
        assert_eq!(&line[b.clone()], format!("{big}\\n").as_bytes());
        // Borrowed (held in memory): the string itself, as before.
        let mut sink = Shared(Vec::new(), 0);
        push_any_line(
            Cow::Borrowed(&line),
            0,
            &mut Vec::new(),
            &mut sink,
            &mut Default::default(),
        );
        assert_eq!((sink.0.len(), sink.1), (0, 2));
    }

    #[test]
    fn short_or_foreign_lines_stay_whole() {
        let (text, cuts) = cut_one(br#"{"a":"short"}"#);
        assert_eq!((text.as_slice(), cuts.len()), (&br#"{"a":"short"}"#[..], 0));
        // Not UTF-8: kept whole, so the lossy decoding of the text applies.
        let mut line = format!(r#"{{"a":"{}"}}"#, "z".repeat(MIN_CUT_BYTES)).into_bytes();
        line[3] = 0xff;
        let (text, cuts) = cut_one(&line);
        assert_eq!(text, line);
        assert!(cuts.is_empty());
    }

    #[test]
    fn strings_that_are_not_utf8_stay_in_the_text() {
        // A truncated sequence reads as one U+FFFD in the text's lossy decoding (two if decoded
        // byte by byte), so that string is not cut; its long sibling still is.
        let bad = format!("{}\u{e2}\u{82}!", "w".repeat(MIN_CUT_BYTES));
        let good = "g".repeat(MIN_CUT_BYTES);
        let mut line = format!(r#"{{"a":"{bad}","b":"{good}"}}"#).into_bytes();
        // The two chars above are U+00E2 U+0082 (4 bytes); make them the raw bytes E2 82.
        let at = line
            .windows(4)
            .position(|w| w == [0xc3, 0xa2, 0xc2, 0x82])
            .unwrap();
        line.splice(at..at + 4, [0xe2, 0x82]);
        let (text, cuts) = cut_one(&line);
        assert_eq!(cuts.len(), 1);
        assert_eq!(cuts[0].path, ["b"]);
        assert_eq!(text[..text.len() - 7], line[..text.len() - 7]);
        assert!(text.ends_with(br#""b":0}"#));
    }
}
