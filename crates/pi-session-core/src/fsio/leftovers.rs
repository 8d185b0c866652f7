//! What a writer killed in the middle of a whole-file write leaves next to the file, and putting
//! it right.
//!
//! Every whole-file write goes through a hidden sibling, `.<name>.<pid>.<random>.tmp`
//! ([`TempFile`]), and where the OS will not rename over a held file (FAT, many network shares,
//! Wine) the file being replaced steps aside first as `.<name>.<pid>.<random>.old` (see
//! `rename_replace`). A kill between the two renames of that dance leaves the session under its
//! hidden `.old` name: gone from every listing, stock pi's included, though not a byte of it is
//! lost. A kill at any other moment leaves at most a `.tmp`: a complete or partial copy nobody
//! reads, as big as the session, forever.
//!
//! [`recover`] puts such a dir right: a `.old` whose file name is free again gets it back, and
//! temp files and asides nobody has touched for [`STALE_AFTER`] go. A live write is never
//! disturbed: its temp file is written and renamed within moments, and its aside, once the name
//! is free, is renamed back by the writer itself or, if it dies, left for us once its temp file
//! has aged (the writer renames the temp file in right after the aside out).

use std::time::{Duration, SystemTime};

use super::*;

/// Leftovers untouched for this long belong to no live write.
pub const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// What [`recover`] did in one directory.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Files that were back under their own names (the path they have now).
    pub restored: Vec<PathBuf>,
    /// Stale leftovers removed, with their sizes.
    pub removed: Vec<(PathBuf, u64)>,
}

/// A leftover's parts: the name of the file it was for, and whether it is an aside (`.old`) or
/// a temp file (`.tmp`).
#[derive(Debug, PartialEq, Eq)]
struct Leftover<'a> {
    target: &'a str,
    aside: bool,
}

/// `.<target>.<pid>.<8 hex>.<tmp|old>` as [`hidden_sibling`] names them; None for any other name.
fn leftover(name: &str) -> Option<Leftover<'_>> {
    let rest = name.strip_prefix('.')?;
    let (rest, aside) = match (rest.strip_suffix(".old"), rest.strip_suffix(".tmp")) {
        (Some(r), _) => (r, true),
        (None, Some(r)) => (r, false),
        _ => return None,
    };
    let (rest, random) = rest.rsplit_once('.')?;
    let (target, pid) = rest.rsplit_once('.')?;
    let hex = random.len() == 8 && random.bytes().all(|b| b.is_ascii_hexdigit());
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    if !hex || !digits || target.is_empty() {
        return None;
    }
    Some(Leftover { target, aside })
}

/// Whether a name is one of the leftovers [`recover`] looks at (cheap: for a directory scan to
/// decide whether to call it).
pub fn is_leftover(name: &str) -> bool {
    leftover(name).is_some()
}

/// A directory scan that puts leftovers right first: `scan(dir)` gives what it found and whether
/// it met a leftover ([`is_leftover`]); when it did and [`recover`] gave a file its name back, the
/// directory is scanned again (what else `recover` does removes only hidden names).
pub fn scan_recovered<T, E>(
    dir: &Path,
    scan: impl Fn(&Path) -> std::result::Result<(T, bool), E>,
) -> std::result::Result<T, E> {
    let (found, leftovers) = scan(dir)?;
    if leftovers && !recover(dir).restored.is_empty() {
        return Ok(scan(dir)?.0);
    }
    Ok(found)
}

/// Put the leftovers of killed writers in `dir` right (see the module): asides whose name is free
/// get it back, stale temp files and stale asides whose file exists again go. A directory that
/// cannot be read has nothing to recover; a leftover that cannot be renamed or removed stays.
pub fn recover(dir: &Path) -> Recovered {
    recover_at(dir, SystemTime::now())
}

fn recover_at(dir: &Path, now: SystemTime) -> Recovered {
    let mut out = Recovered::default();
    let Ok(rd) = fs::read_dir(dir) else {
        return out;
    };
    let names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_leftover(n))
        .collect();
    let age = |name: &str| -> Option<(Duration, u64)> {
        let m = fs::symlink_metadata(dir.join(name))
            .ok()
            .filter(|m| m.is_file())?;
        let age = now
            .duration_since(m.modified().ok()?)
            .unwrap_or(Duration::ZERO);
        Some((age, m.len()))
    };
    // Files a writer may be replacing right now: a fresh temp file is there for them.
    let busy: std::collections::HashSet<&str> = names
        .iter()
        .filter_map(|n| leftover(n).filter(|l| !l.aside).map(|l| (n, l.target)))
        .filter(|(n, _)| age(n).is_none_or(|(t, _)| t < STALE_AFTER))
        .map(|(_, target)| target)
        .collect();
    for name in &names {
        let Some(l) = leftover(name) else { continue };
        let Some((aged, len)) = age(name) else {
            continue;
        };
        let path = dir.join(name);
        let target = dir.join(l.target);
        let target_free = fs::symlink_metadata(&target).is_err();
        if l.aside {
            let writer_done = !busy.contains(l.target);
            if target_free && writer_done {
                if fs::rename(&path, &target).is_ok() {
                    sync_dir(&target);
                    out.restored.push(target);
                }
                continue;
            }
            if target_free || !writer_done || aged < STALE_AFTER {
                continue;
            }
        } else if aged < STALE_AFTER {
            continue;
        }
        if fs::remove_file(&path).is_ok() {
            out.removed.push((path, len));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_as_hidden_sibling_makes_them_and_nothing_else() {
        let made = hidden_sibling(Path::new("/d/2025_x.jsonl"), "old");
        let name = made.file_name().unwrap().to_str().unwrap();
        let l = leftover(name).unwrap();
        assert_eq!(l.target, "2025_x.jsonl");
        assert!(l.aside);
        let tmp = hidden_sibling(Path::new("/d/a.b.jsonl"), "tmp");
        let l = leftover(tmp.file_name().unwrap().to_str().unwrap()).unwrap();
        assert_eq!((l.target, l.aside), ("a.b.jsonl", false));
        for other in [
            "x.jsonl",
            ".x.jsonl",
            ".x.jsonl.12.abcdef01.bak",
            ".x.jsonl.12.abcdef0.tmp",
            ".x.jsonl.1a.abcdef01.tmp",
            "..12.abcdef01.tmp",
            ".x.jsonl.abcdef01.tmp",
            "x.jsonl.12.abcdef01.tmp",
        ] {
            assert!(!is_leftover(other), "{other}");
        }
    }

    fn aged(path: &Path, by: Duration) {
        let f = fs::OpenOptions::new().write(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - by).unwrap();
    }

    const OLD: Duration = Duration::from_secs(3600);

    #[test]
    fn a_file_left_aside_gets_its_name_back_once_its_writer_is_gone() {
        let dir = crate::testing::temp_dir("leftovers-aside");
        let target = dir.join("s.jsonl");
        // Killed between the two renames: the file aside, the new content in its temp file.
        fs::write(dir.join(".s.jsonl.41.99999999.old"), b"old bytes\n").unwrap();
        fs::write(dir.join(".s.jsonl.41.0a1b2c3d.tmp"), b"new bytes\n").unwrap();
        // While the writer's temp file is fresh, it may be renaming it in right now.
        assert_eq!(recover(&dir), Recovered::default());
        assert!(!target.exists());
        aged(&dir.join(".s.jsonl.41.0a1b2c3d.tmp"), OLD);
        let r = recover(&dir);
        assert_eq!(r.restored, vec![target.clone()]);
        assert_eq!(fs::read(&target).unwrap(), b"old bytes\n");
        let removed: Vec<_> = r.removed.iter().map(|(p, n)| (p.clone(), *n)).collect();
        assert_eq!(removed, vec![(dir.join(".s.jsonl.41.0a1b2c3d.tmp"), 10)]);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        // An aside with no temp file for its name: no writer is between its two renames, so it
        // is restored at once.
        fs::write(dir.join(".t.jsonl.7.ffffffff.old"), b"t\n").unwrap();
        assert_eq!(recover(&dir).restored, vec![dir.join("t.jsonl")]);
    }

    #[test]
    fn an_aside_whose_name_is_taken_again_goes_only_when_stale_and_never_over_the_file() {
        let dir = crate::testing::temp_dir("leftovers-taken");
        fs::write(dir.join("s.jsonl"), b"current\n").unwrap();
        let aside = dir.join(".s.jsonl.9.12345678.old");
        fs::write(&aside, b"replaced\n").unwrap();
        // Fresh (its mtime is the replaced file's, so this is a file written a moment ago).
        assert_eq!(recover(&dir), Recovered::default());
        aged(&aside, OLD);
        let r = recover(&dir);
        assert_eq!(r.removed, vec![(aside.clone(), 9)]);
        assert!(r.restored.is_empty());
        assert_eq!(fs::read(dir.join("s.jsonl")).unwrap(), b"current\n");
    }

    #[test]
    fn temp_files_go_when_stale_and_stay_while_a_writer_may_still_write_them() {
        let dir = crate::testing::temp_dir("leftovers-tmp");
        let fresh = TempFile::create(&dir.join("s.jsonl")).unwrap();
        let stale = dir.join(".s.jsonl.3.deadbeef.tmp");
        fs::write(&stale, vec![b'x'; 100]).unwrap();
        aged(&stale, OLD);
        fs::write(dir.join(".other"), b"not ours").unwrap();
        fs::write(dir.join("notes.tmp"), b"not ours").unwrap();
        let r = recover(&dir);
        assert_eq!(r.removed, vec![(stale, 100)]);
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            3,
            "the live temp file and the others stay"
        );
        drop(fresh);
        assert_eq!(recover(&dir.join("missing")), Recovered::default());
    }
}
