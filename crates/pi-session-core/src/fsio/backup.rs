//! Backups of a file's original bytes before it is rewritten.

use super::*;

/// Keep the original bytes next to the file as `<file>.bak` before we rewrite it (`<file>.bak.1`,
/// `.bak.2`, ... when that name is taken: an older backup is never overwritten). Private (0600 on
/// Unix): it is ours, not the reference's, and may hold what a redaction took out.
pub fn backup(path: &Path, original: &[u8]) -> Result<PathBuf> {
    for n in 0u32.. {
        let mut name = path.as_os_str().to_owned();
        name.push(".bak");
        if n > 0 {
            name.push(format!(".{n}"));
        }
        let bak = PathBuf::from(name);
        match create_new_private(&bak, original) {
            Err(e) if e.errno_name == Some("EEXIST") => continue,
            other => return other.map(|_| bak),
        }
    }
    unreachable!("u32 range exhausted")
}
