//! One session file opened read-only through the core's `Session`: the file is never written (no
//! newline repair, no migration rewrite; old versions are migrated in memory only).

use std::path::{Path, PathBuf};

use pi_session_core::file::LoadedFile;
use pi_session_core::json::{self, Value};
use pi_session_core::record::{self, Kind};
use pi_session_core::{inspect, Session};

use crate::error::CliError;
use crate::jsonout::str_of;

pub struct Loaded {
    pub path: PathBuf,
    pub session: Session,
}

/// Open a session file without changing it. A file readers reject is an error naming its first
/// problem and line.
pub fn open(path: &Path) -> Result<Loaded, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::failed(format!("{}: cannot read: {e}", path.display())))?;
    open_bytes(path, bytes)
}

/// [`open`] on bytes already read from `path` (or made from them, as a redacted copy).
pub fn open_bytes(path: &Path, bytes: Vec<u8>) -> Result<Loaded, CliError> {
    let file = LoadedFile::parse(bytes);
    if !file.has_valid_header() {
        let why = inspect::inspect(&file.text)
            .findings
            .into_iter()
            .find(|f| f.severity == inspect::Severity::Error)
            .map(|f| match f.line {
                Some(l) => format!("{}:{l}: {}", path.display(), f.message),
                None => format!("{}: {}", path.display(), f.message),
            })
            .unwrap_or_else(|| format!("{}: not a pi session", path.display()));
        return Err(CliError::failed(format!(
            "not a valid pi session: {why}\n(run `pi-sessions verify {}` for every problem)",
            path.display()
        )));
    }
    let mut session = Session::blank(String::new(), String::new(), false)
        .map_err(|e| CliError::failed(format!("{}: {}", path.display(), e.message)))?;
    session
        .set_session_file_with(path.to_path_buf(), Some(file))
        .map_err(|e| CliError::failed(format!("{}: {}", path.display(), e.message)))?;
    Ok(Loaded {
        path: path.to_path_buf(),
        session,
    })
}

impl Loaded {
    /// A record as a JSON value (`Null` if its line does not parse, which cannot happen for records).
    pub fn value(&self, pos: u32) -> Value {
        match self.session.line(pos) {
            Ok(line) => json::parse(&line).unwrap_or(Value::Null),
            Err(_) => Value::Null,
        }
    }

    /// The header object.
    pub fn header(&self) -> Value {
        self.session
            .header_pos()
            .map(|p| self.value(p))
            .unwrap_or(Value::Null)
    }

    /// An entry's id as text (`?` when it has none).
    pub fn id_text(&self, pos: u32) -> String {
        key_text(&self.session.meta(pos).id)
    }

    /// The current label of an entry.
    pub fn label(&self, pos: u32) -> Option<String> {
        let key = &self.session.meta(pos).id;
        let lp = self.session.label_pos(key)?;
        match self.value(lp).get("label") {
            Some(Value::String(s)) => Some(s.to_string_lossy()),
            Some(v) if v.is_truthy() => Some(json::to_json(v)),
            _ => None,
        }
    }

    /// `getSessionName()`: the latest `session_info` name, trimmed; `None` when empty.
    pub fn name(&self) -> Option<String> {
        let p = self.session.session_name_pos()?;
        let n = str_of(self.value(p).get("name"))?;
        let t = n.trim();
        (!t.is_empty()).then(|| t.to_owned())
    }

    /// The session id of the header.
    pub fn id(&self) -> String {
        self.session.session_id().to_owned()
    }

    pub fn cwd(&self) -> String {
        str_of(self.header().get("cwd")).unwrap_or_default()
    }

    /// The active branch: root first, ending at the leaf (cycle-safe).
    pub fn branch(&self) -> Vec<u32> {
        self.session.context_path()
    }

    /// Find an entry by id or unique id prefix.
    pub fn find_entry(&self, arg: &str) -> Result<u32, CliError> {
        let exact = record::string_key(arg);
        if let Some(p) = self.session.lookup(&exact) {
            return Ok(p);
        }
        let mut hits: Vec<(String, u32)> = Vec::new();
        for slot in 0..self.session.slot_count() as u32 {
            let pos = self.session.slot_pos(slot);
            let id = self.id_text(pos);
            if id.starts_with(arg) && self.session.meta(pos).kind != Kind::Header {
                hits.push((id, pos));
            }
        }
        match hits.len() {
            1 => Ok(hits[0].1),
            0 => Err(CliError::not_found(format!(
                "{}: no entry with id {arg}",
                self.path.display()
            ))),
            _ => Err(CliError::usage(format!(
                "{}: entry id prefix {arg} is ambiguous: {}",
                self.path.display(),
                hits.iter()
                    .map(|(id, _)| id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// A record key (canonical JSON of the id) as text: strings without their quotes.
pub fn key_text(key: &str) -> String {
    if key == record::UNDEFINED {
        return "?".into();
    }
    match json::parse(key.as_bytes()) {
        Ok(Value::String(ref s)) => s.to_string_lossy(),
        _ => key.to_owned(),
    }
}
