//! Reads: opening shared, whole files, positioned reads.

use super::*;

/// Open a file for reading with [`shared_options`].
pub fn open_read(path: &Path) -> io::Result<File> {
    shared_options().read(true).open(path)
}

/// Read a whole file; `Ok(None)` when it does not exist.
pub fn read_all(path: &Path) -> Result<Option<Vec<u8>>> {
    match open_read(path) {
        Ok(mut f) => {
            let mut buf = Vec::with_capacity(f.metadata().map(|m| m.len() as usize).unwrap_or(0));
            f.read_to_end(&mut buf)
                .map_err(|e| Error::io(&e, "read", path))?;
            Ok(Some(buf))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&e, "open", path)),
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
