//! Record lines on their way to JS objects: one JSON text for `JSON.parse`, with long string
//! values cut out and handed over as JS code units, to be put back by path.
//!
//! A multi-megabyte image or tool output would otherwise cross as part of a JSON text that V8
//! decodes from UTF-8, scans, and copies into the parsed object, leaving the text as garbage of
//! the same size until the next collection: opening a big session and building its context held
//! every long string twice. Cut out, it is decoded once (off V8's parser) and copied once.

use crate::error::{Error, ErrorCode, Result};
use crate::json::{self, JsText, Step};
use crate::session::Session;

/// String values at least this long (in bytes, as written) are cut out. Shorter ones cost more
/// to hand over one by one than to parse.
pub const MIN_CUT_BYTES: usize = 16 << 10;

/// Where a cut string goes: member names and array indexes from the line's top-level value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    Key(String),
    Index(u32),
}

/// A string cut out of line `item` of a [`Lines`] text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub item: u32,
    pub path: Vec<PathStep>,
    pub text: JsText,
}

/// JSON text of one or more lines, each long string replaced by `0`, and the strings.
#[derive(Debug, Default)]
pub struct Lines {
    pub text: String,
    pub cuts: Vec<Cut>,
    /// How many of the asked positions the text covers.
    pub count: usize,
}

impl Session {
    /// `[line, line, …]` for `positions`, stopping after the line that brings the text and cut
    /// strings to `budget` bytes (JS strings have a size limit), so it may cover only a prefix.
    pub fn lines_for_js(&self, positions: &[u32], budget: usize) -> Result<Lines> {
        let mut out = Vec::with_capacity(2 + positions.len() * 64);
        let mut cuts = Vec::new();
        let mut cut_bytes = 0;
        let mut count = 0;
        out.push(b'[');
        for &p in positions {
            if count > 0 {
                if out.len() + cut_bytes >= budget {
                    break;
                }
                out.push(b',');
            }
            let line = self.line(self.checked(p)?)?;
            cut_bytes += push_line(&line, count as u32, &mut out, &mut cuts);
            count += 1;
        }
        out.push(b']');
        Ok(Lines {
            text: into_string(out),
            cuts,
            count,
        })
    }

    /// One record's line as [`Lines`] (no brackets; cuts are of item 0).
    pub fn line_for_js(&self, pos: u32) -> Result<Lines> {
        let line = self.line(self.checked(pos)?)?;
        let mut out = Vec::with_capacity(line.len().min(MIN_CUT_BYTES));
        let mut cuts = Vec::new();
        push_line(&line, 0, &mut out, &mut cuts);
        Ok(Lines {
            text: into_string(out),
            cuts,
            count: 1,
        })
    }

    fn checked(&self, pos: u32) -> Result<u32> {
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

/// Appends `line` to `out` with its long strings cut into `cuts`; returns the cut bytes.
fn push_line(line: &[u8], item: u32, out: &mut Vec<u8>, cuts: &mut Vec<Cut>) -> usize {
    // Lines that are not UTF-8 stay whole: the text's lossy decoding decides what JS sees.
    if line.len() < MIN_CUT_BYTES + 2 || std::str::from_utf8(line).is_err() {
        out.extend_from_slice(line);
        return 0;
    }
    let mut cut_bytes = 0;
    let mut prev = 0;
    for s in json::long_strings(line, MIN_CUT_BYTES) {
        // Replace the string, quotes included.
        out.extend_from_slice(&line[prev..s.range.start - 1]);
        out.push(b'0');
        prev = s.range.end + 1;
        cut_bytes += s.range.len();
        let path = s
            .path
            .iter()
            .map(|step| match *step {
                // Names are plain ASCII (long_strings gives no others).
                Step::Key(k) => PathStep::Key(String::from_utf8_lossy(k).into_owned()),
                Step::Index(i) => PathStep::Index(i),
            })
            .collect();
        cuts.push(Cut {
            item,
            path,
            text: json::decode_escaped_bytes(&line[s.range]),
        });
    }
    out.extend_from_slice(&line[prev..]);
    cut_bytes
}

fn into_string(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(t: &JsText) -> String {
        match t {
            JsText::Latin1(b) => b.iter().map(|&c| char::from(c)).collect(),
            JsText::Utf16(u) => String::from_utf16_lossy(u),
        }
    }

    fn cut_one(line: &str) -> (String, Vec<Cut>) {
        let mut out = Vec::new();
        let mut cuts = Vec::new();
        push_line(line.as_bytes(), 3, &mut out, &mut cuts);
        (String::from_utf8(out).unwrap(), cuts)
    }

    #[test]
    fn long_strings_become_zero_and_decoded_cuts() {
        let big = "x".repeat(MIN_CUT_BYTES);
        let esc = format!("{}\\n\\u00e9\\ud83d\\ude00", "y".repeat(MIN_CUT_BYTES));
        let line = format!(
            r#"{{"type":"message","message":{{"content":[{{"type":"image","data":"{big}"}},{{"type":"text","text":"{esc}"}}]}},"short":"s"}}"#
        );
        let (text, cuts) = cut_one(&line);
        assert_eq!(
            text,
            r#"{"type":"message","message":{"content":[{"type":"image","data":0},{"type":"text","text":0}]},"short":"s"}"#
        );
        assert_eq!(cuts.len(), 2);
        assert_eq!(cuts[0].item, 3);
        assert_eq!(
            cuts[0].path,
            [
                PathStep::Key("message".into()),
                PathStep::Key("content".into()),
                PathStep::Index(0),
                PathStep::Key("data".into())
            ]
        );
        assert!(matches!(cuts[0].text, JsText::Latin1(_)));
        assert_eq!(units(&cuts[0].text), big);
        assert!(matches!(cuts[1].text, JsText::Utf16(_)));
        assert_eq!(
            units(&cuts[1].text),
            format!("{}\n\u{e9}\u{1f600}", "y".repeat(MIN_CUT_BYTES))
        );
    }

    #[test]
    fn short_or_foreign_lines_stay_whole() {
        let (text, cuts) = cut_one(r#"{"a":"short"}"#);
        assert_eq!((text.as_str(), cuts.len()), (r#"{"a":"short"}"#, 0));
        // Not UTF-8: kept whole, so the lossy decoding of the text applies.
        let mut line = format!(r#"{{"a":"{}"}}"#, "z".repeat(MIN_CUT_BYTES)).into_bytes();
        line[3] = 0xff;
        let mut out = Vec::new();
        let mut cuts = Vec::new();
        assert_eq!(push_line(&line, 0, &mut out, &mut cuts), 0);
        assert_eq!(out, line);
        assert!(cuts.is_empty());
    }
}
