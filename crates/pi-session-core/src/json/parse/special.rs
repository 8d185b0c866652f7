//! The hot loop of every parse mode: the offset of the next byte that ends a run of string
//! content (a quote, a backslash or a control character), a word at a time, then 64 bytes at a
//! time with SSE2.

/// Offset of the first `"`, `\` or control character at or after `i` (or `b.len()`).
///
/// This is the hot loop of every mode. Escapes in session text (`\n`, `\"`) are typically a few
/// dozen bytes apart, so short gaps are checked a word at a time (SWAR); longer runs (tool output,
/// base64 images) go through SSE2 compares, 64 bytes per step. (A `memchr2` for the quote and
/// backslash plus a separate control-character pass measured 2-3x slower here, mostly from
/// per-call overhead at short gaps.)
#[inline]
pub(crate) fn find_string_special(b: &[u8], mut i: usize) -> usize {
    for _ in 0..2 {
        let Some(w) = word_at(b, i) else { break };
        let m = special_mask(w);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i = find_special_long(b, i);
    while i < b.len() && !is_special(b[i]) {
        i += 1;
    }
    i
}

/// The long-run part of [`find_string_special`]: SSE2 (baseline on x86_64) 64 bytes per step.
/// Returns the offset of the first special byte, or where fewer than 16 bytes remain.
#[cfg(target_arch = "x86_64")]
#[inline]
fn find_special_long(b: &[u8], mut i: usize) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of the x86_64 baseline; every load reads 16 bytes that the bounds
    // checks before it keep inside `b`.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let ctl = _mm_set1_epi8(0x1f);
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
            let (m0, m1, m2, m3) = (special(v0), special(v1), special(v2), special(v3));
            let any = _mm_or_si128(_mm_or_si128(m0, m1), _mm_or_si128(m2, m3));
            if _mm_movemask_epi8(any) != 0 {
                let mask = (_mm_movemask_epi8(m0) as u32 as u64)
                    | ((_mm_movemask_epi8(m1) as u32 as u64) << 16)
                    | ((_mm_movemask_epi8(m2) as u32 as u64) << 32)
                    | ((_mm_movemask_epi8(m3) as u32 as u64) << 48);
                return i + mask.trailing_zeros() as usize;
            }
            i += 64;
        }
        while i + 16 <= b.len() {
            let v = load(i);
            let m = _mm_movemask_epi8(special(v));
            if m != 0 {
                return i + m.trailing_zeros() as usize;
            }
            i += 16;
        }
        i
    }
}

/// Portable long-run scan: 32-byte blocks whose branch-free test LLVM vectorizes.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn find_special_long(b: &[u8], mut i: usize) -> usize {
    while let Some(block) = b.get(i..i + 32) {
        let hit = block.iter().fold(false, |acc, &c| {
            acc | (c == b'"') | (c == b'\\') | (c < 0x20)
        });
        if hit {
            for k in (0..32).step_by(8) {
                let m = word_at(b, i + k).map_or(0, special_mask);
                if m != 0 {
                    return i + k + (m.trailing_zeros() / 8) as usize;
                }
            }
        }
        i += 32;
    }
    i
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
