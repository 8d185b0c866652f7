//! Reads: opening shared, whole files, positioned reads.

use std::mem::MaybeUninit;

use super::*;

/// Open a file for reading with [`shared_options`].
pub fn open_read(path: &Path) -> io::Result<File> {
    shared_options().read(true).open(path)
}

/// Read a whole file; `Ok(None)` when it does not exist.
pub fn read_all(path: &Path) -> Result<Option<Vec<u8>>> {
    match open_read(path) {
        Ok(mut f) => {
            let len = f.metadata().map(|m| m.len() as usize).unwrap_or(0);
            let mut buf = read_in_parts(&f, len).unwrap_or_else(|| Vec::with_capacity(len));
            // What is left (all of it, for a small file), and what was appended meanwhile.
            f.seek(io::SeekFrom::Start(buf.len() as u64))
                .and_then(|_| f.read_to_end(&mut buf))
                .map_err(|e| Error::io(&e, "read", path))?;
            Ok(Some(buf))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&e, "open", path)),
    }
}

/// A file of at least this many bytes is read by several threads at once (see [`read_in_parts`]).
const PARALLEL_READ_BYTES: usize = 4 << 20;
/// At most this many threads read one file.
const MAX_READ_THREADS: usize = 4;

/// The first `len` bytes of a big file, read by one thread per core into its own part of a fresh
/// buffer: most of such a read is the kernel faulting that fresh memory in, page by page, which the
/// cores then do side by side. The calling thread reads the first part itself, after it has
/// started the helpers: making a thread maps its stack, which on Linux waits while another
/// thread is faulting memory in, so a helper started after the first read began would start only
/// when that read is done. `None` (the caller reads it in one go) for a small file, or when a
/// part could not be read whole (the file shrank meanwhile).
fn read_in_parts(f: &File, len: usize) -> Option<Vec<u8>> {
    let threads = (len / PARALLEL_READ_BYTES)
        .min(crate::cores::available().unwrap_or(1))
        .min(MAX_READ_THREADS);
    if threads < 2 {
        return None;
    }
    let part = len.div_ceil(threads);
    let mut buf: Vec<u8> = Vec::with_capacity(len);
    let all_read = std::thread::scope(|scope| {
        let mut chunks = buf.spare_capacity_mut()[..len].chunks_mut(part);
        let first = chunks.next();
        let reads: Vec<_> = chunks
            .enumerate()
            .map(|(i, chunk)| {
                let offset = ((i + 1) * part) as u64;
                scope.spawn(move || read_exact_into(f, chunk, offset))
            })
            .collect();
        let first_read = first.is_none_or(|chunk| read_exact_into(f, chunk, 0).is_ok());
        // Every helper is joined (one that panicked would make the scope panic if left).
        let mut helpers_read = true;
        for r in reads {
            helpers_read &= r.join().is_ok_and(|r| r.is_ok());
        }
        first_read && helpers_read
    });
    if !all_read {
        return None;
    }
    // SAFETY: every byte of `buf[..len]` was written: each part was read whole (`all_read`).
    unsafe { buf.set_len(len) };
    Some(buf)
}

/// Read exactly `chunk.len()` bytes at `offset` into memory not initialized yet. Not zeroing a
/// fresh buffer first matters when the allocator hands out reused memory (a program that opens
/// one session after another), which it must then clear page by page.
fn read_exact_into(file: &File, chunk: &mut [MaybeUninit<u8>], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let mut done = 0;
        while done < chunk.len() {
            let rest = &mut chunk[done..];
            // SAFETY: the pointer and length describe `rest`, memory this call may write; pread
            // writes at most that many bytes and nothing reads them before it returns.
            let n = unsafe {
                libc::pread(
                    file.as_raw_fd(),
                    rest.as_mut_ptr().cast(),
                    rest.len(),
                    (offset + done as u64) as libc::off_t,
                )
            };
            match n {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n if n > 0 => done += n as usize,
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        // Initialized first where there is no read into uninitialized memory.
        let chunk: &mut [u8] = {
            for b in chunk.iter_mut() {
                b.write(0);
            }
            // SAFETY: every element was just written.
            unsafe { &mut *(chunk as *mut [MaybeUninit<u8>] as *mut [u8]) }
        };
        read_exact_at(file, chunk, offset)
    }
}

/// Read up to `buf.len()` bytes at `offset` (without moving a position others rely on, on Unix);
/// how many were read (0 at the end).
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    loop {
        #[cfg(unix)]
        let r = {
            use std::os::unix::fs::FileExt;
            file.read_at(buf, offset)
        };
        #[cfg(windows)]
        let r = {
            use std::os::windows::fs::FileExt;
            file.seek_read(buf, offset)
        };
        match r {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// Read exactly `buf.len()` bytes at `offset`.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match read_at(file, &mut buf[done..], offset + done as u64)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => done += n,
        }
    }
    Ok(())
}

/// The session files of `dir` (`*.jsonl`, regular files, no hidden names), sorted by name, each
/// with its metadata; none when `dir` does not exist. What killed writers left there is put
/// right first ([`recover`]: a session left under a hidden name is one of them again).
pub fn session_files(dir: &Path) -> Result<Vec<(PathBuf, fs::Metadata)>> {
    scan_recovered(dir, session_files_once)
}

/// [`session_files`] as the directory is, and whether it holds leftovers to recover.
fn session_files_once(dir: &Path) -> Result<(Vec<(PathBuf, fs::Metadata)>, bool)> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
        Err(e) => return Err(Error::io(&e, "scandir", dir)),
    };
    let mut out = Vec::new();
    let mut leftovers = false;
    for ent in rd {
        let ent = ent.map_err(|e| Error::io(&e, "scandir", dir))?;
        let name = ent.file_name();
        let name = name.to_string_lossy();
        if !name.ends_with(".jsonl") || name.starts_with('.') {
            leftovers |= is_leftover(&name);
            continue;
        }
        match ent.metadata() {
            Ok(meta) if meta.is_file() => out.push((ent.path(), meta)),
            _ => {}
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((out, leftovers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_file_read_in_parts_is_the_file_and_a_small_one_is_read_whole() {
        let dir = crate::testing::temp_dir("read-in-parts");
        // Not a multiple of the part size, with every byte value, so a misplaced part shows.
        let big: Vec<u8> = (0..3 * PARALLEL_READ_BYTES + 12_345)
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        let f = dir.join("big");
        std::fs::write(&f, &big).unwrap();
        assert!(
            read_in_parts(&open_read(&f).unwrap(), big.len()).is_some()
                || crate::cores::available() == Some(1)
        );
        assert_eq!(read_all(&f).unwrap().unwrap(), big);
        let small = dir.join("small");
        std::fs::write(&small, b"{\"type\":\"session\"}\n").unwrap();
        assert!(read_in_parts(&open_read(&small).unwrap(), 19).is_none());
        assert_eq!(
            read_all(&small).unwrap().unwrap(),
            b"{\"type\":\"session\"}\n"
        );
        assert!(read_all(&dir.join("missing")).unwrap().is_none());
    }

    #[test]
    fn a_file_that_grew_after_its_size_was_taken_is_read_to_its_end_and_one_that_shrank_whole() {
        let dir = crate::testing::temp_dir("read-in-parts-grow");
        let f = dir.join("f");
        let text = vec![b'a'; 2 * PARALLEL_READ_BYTES];
        std::fs::write(&f, &text).unwrap();
        let file = open_read(&f).unwrap();
        // The parts read as much as the size said; the caller's read takes what came after.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&f)
            .unwrap()
            .write_all(b"tail")
            .unwrap();
        let mut buf = read_in_parts(&file, text.len()).unwrap_or_default();
        let mut file = file;
        file.seek(io::SeekFrom::Start(buf.len() as u64)).unwrap();
        file.read_to_end(&mut buf).unwrap();
        assert_eq!(buf.len(), text.len() + 4);
        assert!(buf.ends_with(b"atail"));
        // Asked for more than there is: no parts (the caller reads it whole instead).
        assert!(read_in_parts(&open_read(&f).unwrap(), 3 * PARALLEL_READ_BYTES).is_none());
    }
}
