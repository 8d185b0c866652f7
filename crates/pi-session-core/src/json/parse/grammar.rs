//! The grammar driver: one iterative pass over a document that reports events to a `Handler`
//! (nesting on a heap stack), with the number and string-literal scanners it uses.

use std::ops::Range;

use super::special::find_string_special;
use super::{Handler, ParseError, StrSink};
use crate::json::string::parse_hex4;

pub(super) fn parse_document<H: Handler>(b: &[u8], h: &mut H) -> Result<(), ParseError> {
    let i = parse_value(b, 0, h)?;
    if H::CAN_STOP && h.stopped() {
        return Ok(());
    }
    expect_end(b, i)
}

pub(super) fn expect_end(b: &[u8], i: usize) -> Result<(), ParseError> {
    let i = skip_ws(b, i);
    if i == b.len() {
        Ok(())
    } else {
        Err(ParseError {
            offset: i,
            message: "Unexpected non-whitespace character after JSON".to_owned(),
        })
    }
}

#[inline]
pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

pub(super) fn expect(b: &[u8], i: usize, c: u8) -> Result<(), ParseError> {
    if b.get(i) == Some(&c) {
        Ok(())
    } else {
        Err(unexpected(b, i))
    }
}

pub(super) fn unexpected(b: &[u8], i: usize) -> ParseError {
    let message = match b.get(i) {
        None => "Unexpected end of JSON input".to_owned(),
        Some(&c) if c.is_ascii_graphic() => format!("Unexpected token '{}'", c as char),
        Some(&c) => format!("Unexpected byte 0x{c:02x}"),
    };
    ParseError { offset: i, message }
}

/// Parses one value starting at `i` (leading whitespace allowed) and returns the offset just past
/// it. Nesting is tracked on a heap stack, so depth costs one byte of memory per level.
pub(super) fn parse_value<H: Handler>(
    b: &[u8],
    mut i: usize,
    h: &mut H,
) -> Result<usize, ParseError> {
    // true = inside an object.
    let mut stack: Vec<bool> = Vec::new();
    'value: loop {
        if H::CAN_STOP && h.stopped() {
            return Ok(i);
        }
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b'"') => i = scan_string(b, i + 1, &mut HandlerStr::begin(h, false))?,
            Some(b'{') => {
                h.begin_object();
                i = skip_ws(b, i + 1);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                    h.end_object();
                } else {
                    stack.push(true);
                    i = parse_key(b, i, h)?;
                    continue 'value;
                }
            }
            Some(b'[') => {
                h.begin_array();
                i = skip_ws(b, i + 1);
                if b.get(i) == Some(&b']') {
                    i += 1;
                    h.end_array();
                } else {
                    stack.push(false);
                    continue 'value;
                }
            }
            Some(b't') => {
                i = literal(b, i, b"true")?;
                h.boolean(true);
            }
            Some(b'f') => {
                i = literal(b, i, b"false")?;
                h.boolean(false);
            }
            Some(b'n') => {
                i = literal(b, i, b"null")?;
                h.null();
            }
            Some(b'-' | b'0'..=b'9') => {
                let end = scan_number(b, i)?;
                h.number(&b[i..end]);
                i = end;
            }
            _ => return Err(unexpected(b, i)),
        }
        // A value just ended: continue the enclosing containers.
        loop {
            let Some(&in_object) = stack.last() else {
                return Ok(i);
            };
            i = skip_ws(b, i);
            match b.get(i) {
                Some(b',') if in_object => {
                    i = parse_key(b, skip_ws(b, i + 1), h)?;
                    continue 'value;
                }
                Some(b',') => {
                    i += 1;
                    continue 'value;
                }
                Some(b'}') if in_object => h.end_object(),
                Some(b']') if !in_object => h.end_array(),
                _ => return Err(unexpected(b, i)),
            }
            i += 1;
            stack.pop();
        }
    }
}

/// `"key"` and the colon after it; `i` is at the opening quote.
fn parse_key<H: Handler>(b: &[u8], i: usize, h: &mut H) -> Result<usize, ParseError> {
    expect(b, i, b'"')?;
    let i = skip_ws(b, scan_string(b, i + 1, &mut HandlerStr::begin(h, true))?);
    expect(b, i, b':')?;
    Ok(i + 1)
}

fn literal(b: &[u8], i: usize, word: &[u8]) -> Result<usize, ParseError> {
    for (k, &c) in word.iter().enumerate() {
        if b.get(i + k) != Some(&c) {
            return Err(unexpected(b, i + k));
        }
    }
    Ok(i + word.len())
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`; returns the end offset.
fn scan_number(b: &[u8], mut i: usize) -> Result<usize, ParseError> {
    let digits = |b: &[u8], i: usize| -> Result<usize, ParseError> {
        let n = b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if n == 0 {
            Err(unexpected(b, i))
        } else {
            Ok(i + n)
        }
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    i = if b.get(i) == Some(&b'0') {
        i + 1
    } else {
        digits(b, i)?
    };
    if b.get(i) == Some(&b'.') {
        i = digits(b, i + 1)?;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(b, i)?;
    }
    Ok(i)
}

/// The f64 JS gets for a valid JSON number literal.
pub(super) fn number_value(raw: &[u8]) -> f64 {
    // Up to 15 digits an integer is exact in f64, so skip the general algorithm.
    if let Some(n) = short_integer(raw) {
        return n;
    }
    // The JSON number grammar is a subset of what Rust's correctly rounding parser accepts.
    std::str::from_utf8(raw)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(f64::NAN)
}

/// `-?[0-9]{1,15}` as f64, or None for anything longer or with a fraction/exponent.
pub(super) fn short_integer(raw: &[u8]) -> Option<f64> {
    let (neg, digits) = match raw {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(d - b'0');
    }
    let n = n as f64;
    Some(if neg { -n } else { n })
}

/// Routes one string literal's pieces to a handler.
struct HandlerStr<'h, H> {
    h: &'h mut H,
    key: bool,
}

impl<'h, H: Handler> HandlerStr<'h, H> {
    #[inline]
    fn begin(h: &'h mut H, key: bool) -> Self {
        h.str_begin(key);
        HandlerStr { h, key }
    }
}

impl<H: Handler> StrSink for HandlerStr<'_, H> {
    #[inline]
    fn raw(&mut self, run: Range<usize>) {
        self.h.str_raw(run);
    }
    #[inline]
    fn escape(&mut self, c: u8) {
        self.h.str_escape(c);
    }
    #[inline]
    fn unicode(&mut self, unit: u16) {
        self.h.str_unicode(unit);
    }
    #[inline]
    fn end(&mut self) {
        self.h.str_end(self.key);
    }
}

/// Scans a string literal whose opening quote is at `i - 1`; returns the offset past the closing
/// quote. `str_begin` is the caller's business (it knows key vs value); the sink sees the rest.
pub(super) fn scan_string<S: StrSink>(
    b: &[u8],
    mut i: usize,
    sink: &mut S,
) -> Result<usize, ParseError> {
    loop {
        let stop = find_string_special(b, i);
        if stop > i {
            sink.raw(i..stop);
        }
        i = stop;
        match b.get(i) {
            Some(b'"') => {
                sink.end();
                return Ok(i + 1);
            }
            Some(b'\\') => match b.get(i + 1) {
                Some(&c @ (b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')) => {
                    sink.escape(c);
                    i += 2;
                }
                Some(b'u') => {
                    let Some(unit) = b.get(i + 2..i + 6).and_then(parse_hex4) else {
                        let bad = (i + 2..i + 6)
                            .find(|&k| !b.get(k).is_some_and(u8::is_ascii_hexdigit))
                            .unwrap_or(i + 2);
                        return Err(ParseError {
                            offset: bad,
                            message: "Bad Unicode escape in JSON".to_owned(),
                        });
                    };
                    sink.unicode(unit);
                    i += 6;
                }
                None => return Err(unexpected(b, i + 1)),
                Some(_) => {
                    return Err(ParseError {
                        offset: i + 1,
                        message: "Bad escaped character in JSON".to_owned(),
                    })
                }
            },
            None => {
                return Err(ParseError {
                    offset: i,
                    message: "Unterminated string in JSON".to_owned(),
                })
            }
            Some(_) => {
                return Err(ParseError {
                    offset: i,
                    message: "Bad control character in string literal in JSON".to_owned(),
                })
            }
        }
    }
}
