//! Reading a file line by line as Node's `readline` does, out of one reused buffer.

use std::io::Read;

/// Lines as Node's `readline` yields them: split on `\n`, `\r\n` and a lone `\r`. Lines are
/// handed out of one read buffer (only a line cut by the buffer's end is moved), which grows only
/// to hold the longest line.
pub(super) fn for_each_line(
    reader: &mut impl Read,
    mut f: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    const CHUNK: usize = 1 << 20;
    thread_local! {
        // Reused across the files one worker summarizes (zeroing 1 MiB per small file cost more
        // than reading it).
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut buf = BUF.with(|b| std::mem::take(&mut *b.borrow_mut()));
    if buf.len() < CHUNK {
        buf.resize(CHUNK, 0);
    }
    let result = lines_from(reader, &mut buf, CHUNK, &mut f);
    if buf.len() <= 8 * CHUNK {
        // Keep it for the next file unless one huge line grew it.
        BUF.with(|b| *b.borrow_mut() = buf);
    }
    result
}

fn lines_from(
    reader: &mut impl Read,
    buf: &mut Vec<u8>,
    chunk: usize,
    f: &mut impl FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    // buf[start..end] is read but not yet handed out; buf[start..scanned] has no newline.
    let (mut start, mut end, mut scanned) = (0usize, 0usize, 0usize);
    let mut eof = false;
    let mut emit = |line: &[u8]| -> bool {
        let mut rest = line;
        loop {
            match memchr::memchr(b'\r', rest) {
                Some(i) => {
                    if !f(&rest[..i]) {
                        return false;
                    }
                    rest = &rest[i + 1..];
                    if rest.is_empty() {
                        return true;
                    }
                }
                None => return f(rest),
            }
        }
    };
    loop {
        while let Some(k) = memchr::memchr(b'\n', &buf[scanned..end]) {
            let nl = scanned + k;
            if !emit(&buf[start..nl]) {
                return Ok(());
            }
            start = nl + 1;
            scanned = start;
        }
        scanned = end;
        if eof {
            if start < end {
                emit(&buf[start..end]);
            }
            return Ok(());
        }
        // Make room: move the partial line to the front, grow when it fills the buffer.
        if start > 0 {
            buf.copy_within(start..end, 0);
            end -= start;
            scanned -= start;
            start = 0;
        }
        if buf.len() - end < chunk / 4 {
            buf.resize(buf.len() * 2, 0);
        }
        let n = loop {
            match reader.read(&mut buf[end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            eof = true;
        }
        end += n;
    }
}
