//! The hot loop of every parse mode: the offset of the next byte that ends a run of string
//! content (a quote, a backslash or a control character), a word at a time, then 64 bytes at a
//! time with SSE2.

use super::StrSink;

/// Offset of the first `"`, `\` or control character at or after `i` (or `b.len()`).
///
/// This is the hot loop of every mode. Escapes in session text (`\n`, `\"`) are typically a few
/// dozen bytes apart, so short gaps are checked a word at a time (SWAR); longer runs (tool output,
/// base64 images) go through SSE2 compares, 64 bytes per step. (A `memchr2` for the quote and
/// backslash plus a separate control-character pass measured 2-3x slower here, mostly from
/// per-call overhead at short gaps.)
///
/// The second result is true when the run before that offset may hold a byte >= 0x80 (never false
/// when it does); it is only computed for sinks that check UTF-8 (`S::CHECK_UTF8`), by OR-ing the
/// data already loaded, so ASCII runs need no second pass.
#[inline]
pub(super) fn find_string_special<S: StrSink>(b: &[u8], i: usize) -> (usize, bool) {
    if S::CHECK_UTF8 {
        find_special::<true>(b, i)
    } else {
        find_special::<false>(b, i)
    }
}

/// [`find_string_special`] without the UTF-8 hint (for scanners of already validated text).
#[inline]
pub(crate) fn find_string_special_plain(b: &[u8], i: usize) -> usize {
    find_special::<false>(b, i).0
}

#[inline]
fn find_special<const HIGH_BITS: bool>(b: &[u8], mut i: usize) -> (usize, bool) {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut high = 0u64;
    for _ in 0..2 {
        let Some(w) = word_at(b, i) else { break };
        if HIGH_BITS {
            high |= w;
        }
        let m = special_mask(w);
        if m != 0 {
            let stop = i + (m.trailing_zeros() / 8) as usize;
            // Bytes of the word at and after the stop may be counted: "may hold" stays true.
            return (stop, high & HIGH != 0);
        }
        i += 8;
    }
    let (mut i, long_high) = find_special_long::<HIGH_BITS>(b, i);
    while i < b.len() && !is_special(b[i]) {
        if HIGH_BITS {
            high |= u64::from(b[i]);
        }
        i += 1;
    }
    (i, long_high || high & HIGH != 0)
}

/// The long-run part of [`find_special`]: SSE2 (baseline on x86_64) 64 bytes per step. Returns
/// the offset of the first special byte, or where fewer than 16 bytes remain, and whether any byte
/// looked at may be >= 0x80 (when `HIGH_BITS`).
#[cfg(target_arch = "x86_64")]
#[inline]
fn find_special_long<const HIGH_BITS: bool>(b: &[u8], mut i: usize) -> (usize, bool) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128,
    };
    // SAFETY: SSE2 is part of the x86_64 baseline; every load reads 16 bytes that the bounds
    // checks before it keep inside `b`.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let ctl = _mm_set1_epi8(0x1f);
        let mut seen = _mm_setzero_si128();
        let special = |v: __m128i| {
            // max(v, 0x1f) == 0x1f exactly for the bytes below 0x20.
            let c = _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl);
            _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                c,
            )
        };
        let load = |k: usize| _mm_loadu_si128(b.as_ptr().add(k).cast::<__m128i>());
        while i + 64 <= b.len() {
            let (v0, v1, v2, v3) = (load(i), load(i + 16), load(i + 32), load(i + 48));
            if HIGH_BITS {
                seen = _mm_or_si128(
                    seen,
                    _mm_or_si128(_mm_or_si128(v0, v1), _mm_or_si128(v2, v3)),
                );
            }
            let (m0, m1, m2, m3) = (special(v0), special(v1), special(v2), special(v3));
            let any = _mm_or_si128(_mm_or_si128(m0, m1), _mm_or_si128(m2, m3));
            if _mm_movemask_epi8(any) != 0 {
                let mask = (_mm_movemask_epi8(m0) as u32 as u64)
                    | ((_mm_movemask_epi8(m1) as u32 as u64) << 16)
                    | ((_mm_movemask_epi8(m2) as u32 as u64) << 32)
                    | ((_mm_movemask_epi8(m3) as u32 as u64) << 48);
                return (
                    i + mask.trailing_zeros() as usize,
                    _mm_movemask_epi8(seen) != 0,
                );
            }
            i += 64;
        }
        while i + 16 <= b.len() {
            let v = load(i);
            if HIGH_BITS {
                seen = _mm_or_si128(seen, v);
            }
            let m = _mm_movemask_epi8(special(v));
            if m != 0 {
                return (
                    i + m.trailing_zeros() as usize,
                    _mm_movemask_epi8(seen) != 0,
                );
            }
            i += 16;
        }
        (i, _mm_movemask_epi8(seen) != 0)
    }
}

/// Portable long-run scan: 32-byte blocks whose branch-free test LLVM vectorizes.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn find_special_long<const HIGH_BITS: bool>(b: &[u8], mut i: usize) -> (usize, bool) {
    let mut high = false;
    while let Some(block) = b.get(i..i + 32) {
        let hit = block.iter().fold(false, |acc, &c| {
            acc | (c == b'"') | (c == b'\\') | (c < 0x20)
        });
        if HIGH_BITS {
            high |= block.iter().fold(0u8, |acc, &c| acc | c) >= 0x80;
        }
        if hit {
            for k in (0..32).step_by(8) {
                let m = word_at(b, i + k).map_or(0, special_mask);
                if m != 0 {
                    return (i + k + (m.trailing_zeros() / 8) as usize, high);
                }
            }
        }
        i += 32;
    }
    (i, high)
}

#[inline]
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

#[inline]
fn word_at(b: &[u8], i: usize) -> Option<u64> {
    let bytes: [u8; 8] = b.get(i..i + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// The high bit of each byte of `w` that is `"`, `\` or below 0x20 is set, possibly along with
/// some bytes above (more significant than) the first such byte; so the lowest set bit is exact.
#[inline]
fn special_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The classic "has a zero byte" test, applied to w ^ pattern; `below(w, n)` flags bytes < n.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    (below(quote, 1) | below(backslash, 1) | below(w, 0x20)) & HIGH
}
