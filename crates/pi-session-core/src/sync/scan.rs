//! Finding the sessions of each side: the `*.jsonl` files of the agent's session dirs (one level
//! below `sessions/`) or of the shared copy's `sessions/`, grouped by header id with the
//! file-sync conflict copies that belong to them. A file whose size and mtime are what the state
//! recorded is not opened: the state says which session it is.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::state::Stamp;
use super::{header, names, Problem};
use crate::error::{Error, ErrorCode, Result};
use crate::fsio;

/// One file of a side.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub name: String,
    pub stamp: Stamp,
}

/// A session's file on one side, with the conflict copies made of it.
#[derive(Debug, Clone)]
pub struct Group {
    pub main: Found,
    pub copies: Vec<Found>,
}

/// The sessions of one side, by header id.
#[derive(Debug, Default)]
pub struct Side {
    pub by_id: HashMap<String, Group>,
    /// Which session each main file name holds (to refuse a name two sessions want).
    pub id_of_name: HashMap<PathBuf, String>,
}

/// The `*.jsonl` files of `dir` (no hidden ones), sorted by name; none if `dir` does not exist.
fn jsonl_files(dir: &Path) -> Result<Vec<Found>> {
    Ok(fsio::session_files(dir)?
        .into_iter()
        .map(|(path, meta)| Found {
            name: path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            stamp: Stamp::of(&meta),
            path,
        })
        .collect())
}

/// The header id of a file, read from its first line only.
pub fn head_id(path: &Path) -> Option<String> {
    let mut f = fsio::open_read(path).ok()?;
    let mut buf = vec![0u8; 16 * 1024];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(len * 2, 0);
        }
        let n = f.read(&mut buf[len..]).ok()?;
        len += n;
        if n == 0 || memchr::memchr(b'\n', &buf[..len]).is_some() {
            break;
        }
    }
    header::read(&buf[..len]).map(|h| h.id)
}

/// Group the files of one directory into `side`; `known` gives the id of a file the state
/// already knows unchanged.
fn group_dir(
    files: Vec<Found>,
    side: &mut Side,
    problems: &mut Vec<Problem>,
    known: &dyn Fn(&Found) -> Option<String>,
) {
    let names: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let base_of =
        |f: &Found| names::conflict_base(&f.name).and_then(|b| names.get(b.as_str()).copied());
    let mut ids: Vec<Option<String>> = vec![None; files.len()];
    for (i, f) in files.iter().enumerate() {
        if base_of(f).is_none() {
            ids[i] = known(f).or_else(|| head_id(&f.path));
            if let Some(id) = &ids[i] {
                if let Some(other) = side.by_id.get(id) {
                    problems.push(Problem::new(
                        "SYNC_DUPLICATE_SESSION",
                        Some(id),
                        &f.path,
                        format!("the same session is also {}; this copy is left alone (join them with `pi-sessions merge`)", other.main.path.display()),
                    ));
                    ids[i] = None;
                    continue;
                }
                side.id_of_name.insert(f.path.clone(), id.clone());
                side.by_id.insert(
                    id.clone(),
                    Group {
                        main: f.clone(),
                        copies: Vec::new(),
                    },
                );
            }
        }
    }
    for f in &files {
        let Some(b) = base_of(f) else { continue };
        let (Some(base_id), copy_id) = (ids[b].clone(), head_id(&f.path)) else {
            continue;
        };
        if copy_id.as_deref() != Some(base_id.as_str()) {
            problems.push(Problem::new(
                ErrorCode::SessionMismatch.as_str(),
                copy_id.as_deref(),
                &f.path,
                format!(
                    "looks like a conflict copy of {} but is another session ({}); both are left alone",
                    files[b].name,
                    copy_id.as_deref().unwrap_or("no session header")
                ),
            ));
            continue;
        }
        if let Some(g) = side.by_id.get_mut(&base_id) {
            g.copies.push(f.clone());
        }
    }
}

/// The local side: every session dir under `<agentDir>/sessions`.
pub fn local(
    sessions_root: &Path,
    problems: &mut Vec<Problem>,
    known: &dyn Fn(&Found) -> Option<String>,
) -> Result<Side> {
    let mut side = Side::default();
    let rd = match fs::read_dir(sessions_root) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(side),
        Err(e) => return Err(Error::io(&e, "scandir", sessions_root)),
    };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        group_dir(jsonl_files(&d)?, &mut side, problems, known);
    }
    Ok(side)
}

/// The shared side: the files of its `sessions/`.
pub fn remote(
    dir: &Path,
    problems: &mut Vec<Problem>,
    known: &dyn Fn(&Found) -> Option<String>,
) -> Result<Side> {
    let mut side = Side::default();
    group_dir(jsonl_files(dir)?, &mut side, problems, known);
    Ok(side)
}
