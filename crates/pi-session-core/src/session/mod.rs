//! The in-memory session behind one `SessionManager`: the facade over the record store
//! ([`crate::store`]) and the file layer ([`crate::file`]), with the persistence rules of the
//! reference. Its operations live one per module: `header` (a new session), `load` (opening a
//! file), `preload` (entries handed over in memory), `append` (with rollback), `persist`
//! (the lazy first write, flush, restore mode), `branch` (`createBranchedSession`), `edit`
//! (`appendContextEdit`'s checks), `fork` (`forkFrom`) and `prune` (`pruneBranch`).

use std::path::{Path, PathBuf};

use crate::config::{Config, Tuning};
use crate::error::{Error, Result};
use crate::fsio::{self, Durability};
use crate::lock;
use crate::record::{Key, Meta};
use crate::reserve::Reservations;
use crate::store::index::Ids;
use crate::store::records::{Rec, Records};
use crate::store::View;
use tracked::Tracked;

mod append;
mod branch;
mod edit;
mod fork;
mod header;
mod load;
mod open;
mod persist;
mod preload;
mod prune;
mod tracked;

pub use crate::store::Leaf;
pub use append::AppendHow;
pub use branch::Branched;
pub use edit::{check_replacement, context_edit_wraps_text, Replacement};
pub use fork::{fork, fork_file, ForkWrites, Forked};
pub use header::{header_line, NewSession};
pub use load::LoadReport;
pub use open::Opened;
pub use prune::Pruned;

/// The session store state behind one `SessionManager`.
#[derive(Debug)]
pub struct Session {
    cwd: String,
    session_dir: String,
    file: Option<PathBuf>,
    persist: bool,
    flushed: bool,
    session_id: String,
    /// The records and where their lines are. Every write to it counts toward the generation.
    records: Tracked<Records>,
    /// The id index, labels and leaf over `records`. Every write to it counts toward the
    /// generation.
    ids: Tracked<Ids>,
    durability: Durability,
    appender: fsio::Appender,
    /// The appender's descriptor last checked (its `opened` number), and whether it writes the
    /// file `records.reader` reads: lines appended through it can then be read back from there.
    /// Cleared with the reader (`reset_state`).
    backed: Option<(u64, bool)>,
    /// Where lines are left in the file: big files opened, long lines appended (see [`Tuning`]).
    tuning: Tuning,
    /// Exclusive mode and the lease it holds (see [`crate::lock`]).
    guard: lock::WriterGuard,
    /// Entry ids handed out for appends to come (see [`crate::reserve`]).
    reserved: Reservations,
    /// Restore a vanished directory or file at write time (see [`Session::set_restore_missing`]).
    restore_missing: bool,
    /// New session files and directories are private (`PI_SESSION_PRIVATE`, see `fsio::private`).
    private_files: bool,
    /// Explicit bumps of the generation (see [`Session::changed`]); the rest of it is the count
    /// of writes to `records` and `ids`.
    generation: u64,
}

impl<'a> From<&'a Session> for View<'a> {
    fn from(s: &'a Session) -> View<'a> {
        s.view()
    }
}

impl Session {
    /// A manager with no state yet and the product defaults ([`Config::default`]); callers
    /// follow with `new_session`, `set_session_file` or `load_preloaded` as the reference's
    /// constructor does.
    pub fn blank(cwd: String, session_dir: String, persist: bool) -> Result<Session> {
        Session::with_config(cwd, session_dir, persist, Config::default())
    }

    /// [`Session::blank`] configured by `config` (what the binding and the CLI read from the
    /// process environment, or what a test needs).
    pub fn with_config(
        cwd: String,
        session_dir: String,
        persist: bool,
        config: Config,
    ) -> Result<Session> {
        if persist && !session_dir.is_empty() {
            fsio::ensure_session_dir(Path::new(&session_dir), config.private_files)?;
        }
        Ok(Session {
            cwd,
            session_dir,
            file: None,
            persist,
            flushed: false,
            session_id: String::new(),
            records: Tracked::default(),
            ids: Tracked::default(),
            durability: config.durability,
            appender: fsio::Appender::default(),
            backed: None,
            tuning: config.tuning,
            guard: lock::WriterGuard::new(config.exclusive),
            reserved: Reservations::default(),
            restore_missing: config.restore_missing,
            private_files: config.private_files,
            generation: 0,
        })
    }

    /// A number that differs after any change to records, index, labels or leaf, so callers can
    /// keep what they derived from them until it changes. It follows every write to the records
    /// and the index by construction ([`Tracked`]), so no mutation site has to remember it.
    pub fn generation(&self) -> u64 {
        self.generation
            .wrapping_add(self.records.changes())
            .wrapping_add(self.ids.changes())
    }

    /// The records and id index, read-only (what queries such as [`crate::tree`] and
    /// [`crate::context`] take).
    pub fn view(&self) -> View<'_> {
        View::new(&self.records, &self.ids)
    }

    // ----- simple accessors -------------------------------------------------------------------

    pub fn cwd(&self) -> &str {
        &self.cwd
    }
    pub fn session_dir(&self) -> &str {
        &self.session_dir
    }
    pub fn session_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }
    pub fn is_persisted(&self) -> bool {
        self.persist
    }
    pub fn is_flushed(&self) -> bool {
        self.flushed
    }
    pub fn session_id(&self) -> &str {
        &self.session_id
    }
    pub fn durability(&self) -> Durability {
        self.durability
    }
    pub fn set_durability(&mut self, d: Durability) {
        self.durability = d;
    }
    /// The size thresholds this session was made with.
    pub fn tuning(&self) -> Tuning {
        self.tuning
    }
    /// Approximate heap bytes held (lines, records, index), for telling a garbage-collected host
    /// how much memory a session keeps alive.
    pub fn memory_bytes(&self) -> usize {
        self.records.held_bytes() + self.ids.index.len() * 48
    }

    // ----- reads, through the view (see [`View`] for each) ----------------------------------------

    pub fn leaf(&self) -> Leaf {
        self.ids.leaf
    }
    pub fn leaf_key(&self) -> Option<&str> {
        self.view().leaf_key()
    }
    pub fn record_count(&self) -> usize {
        self.records.len()
    }
    pub fn meta(&self, pos: u32) -> &Meta {
        self.records.meta(pos)
    }
    pub fn line(&self, pos: u32) -> Result<std::borrow::Cow<'_, [u8]>> {
        self.records.line(pos)
    }
    /// The length of the record's line in bytes (wherever it is), `pos` in range.
    pub(crate) fn line_len(&self, pos: u32) -> usize {
        self.records.recs[pos as usize].len()
    }
    pub fn full_line(&self, pos: u32) -> Result<std::borrow::Cow<'_, [u8]>> {
        self.records.full_line(pos)
    }
    /// The record's skeleton and its holder's shape (see [`crate::lazy`]), `pos` in range.
    pub(crate) fn skeleton<'a>(
        &'a self,
        pos: u32,
        scratch: &'a mut Vec<u8>,
    ) -> Result<(std::borrow::Cow<'a, [u8]>, Option<u32>)> {
        self.records.skeleton(pos, scratch)
    }
    /// Whether the record's skeleton is held in memory (checked JSON since it was read), not
    /// read from the file again; `pos` in range.
    pub(crate) fn skeleton_held(&self, pos: u32) -> bool {
        self.records.skeleton_held(pos)
    }
    /// The holder shape `id` of the records loaded last (see [`crate::lazy`]).
    pub(crate) fn shape(&self, id: u32) -> Option<&crate::lazy::Shape> {
        self.records.shapes.get(id)
    }
    /// The length of the record's skeleton, `pos` in range.
    pub(crate) fn skeleton_len(&self, pos: u32) -> usize {
        self.records.skeleton_len(pos)
    }
    /// How many bytes the skeletons of all records are: what making every entry object parses.
    pub fn skeleton_bytes(&self) -> usize {
        (0..self.record_count() as u32)
            .map(|p| self.records.skeleton_len(p))
            .sum()
    }
    /// The reader of the lazy values of the records loaded last (see [`crate::lazy`]): made at
    /// the first call after a load, and valid for as long as it is kept, whatever the session
    /// does next.
    pub fn lazy_reader(&mut self) -> std::sync::Arc<crate::lazy::LazyReader> {
        // Where values are read from changes nothing the records say.
        self.records.storage_mut().lazy_reader()
    }
    pub fn entry_count(&self) -> usize {
        self.view().entry_count()
    }
    pub fn header_pos(&self) -> Option<u32> {
        self.view().header_pos()
    }
    pub fn entry_positions(&self) -> Vec<u32> {
        self.view().entry_positions()
    }
    pub fn entry_positions_since(&self, count: usize) -> Option<Vec<u32>> {
        self.view().entry_positions_since(count)
    }
    pub fn lookup(&self, key: &str) -> Option<u32> {
        self.view().lookup(key)
    }
    pub fn leaf_pos(&self) -> Option<u32> {
        self.view().leaf_pos()
    }
    pub fn label_pos(&self, target: &str) -> Option<u32> {
        self.view().label_pos(target)
    }
    pub fn labels(&self) -> impl Iterator<Item = (&Key, u32)> {
        self.view().labels()
    }
    pub fn session_name_pos(&self) -> Option<u32> {
        self.view().session_name_pos()
    }
    pub fn children(&self, parent: &str) -> Vec<u32> {
        self.view().children(parent)
    }
    pub fn slot_count(&self) -> usize {
        self.view().slot_count()
    }
    pub fn slot_pos(&self, slot: u32) -> u32 {
        self.view().slot_pos(slot)
    }
    pub fn record_slot(&self, pos: u32) -> Option<u32> {
        self.view().record_slot(pos)
    }
    pub fn slot_of_key(&self, key: &str) -> Option<u32> {
        self.view().slot_of_key(key)
    }
    pub fn cached_parent_slot(&self, pos: u32) -> Option<u32> {
        self.view().cached_parent_slot(pos)
    }
    pub fn parent_of(&self, pos: u32) -> Option<u32> {
        self.view().parent_of(pos)
    }
    pub fn path_to(&self, pos: u32) -> Vec<u32> {
        self.view().path_to(pos)
    }
    pub fn branch_from(&self, start: Option<&str>) -> Vec<u32> {
        self.view().branch_from(start)
    }
    pub fn context_path(&self) -> Vec<u32> {
        self.view().context_path()
    }

    // ----- leaf moves ---------------------------------------------------------------------------

    /// `branch(id)`: `ENTRY_NOT_FOUND` for an unknown id (`key` `None`: an id value that can be
    /// no key, so is in no session).
    pub fn branch(&mut self, key: Option<&str>, display_id: &str) -> Result<()> {
        let Some(&slot) = key.and_then(|k| self.ids.index.slot_of.get(k)) else {
            return Err(Error::entry_not_found(display_id));
        };
        self.ids.leaf = Leaf::Slot(slot);
        Ok(())
    }

    /// Set the leaf to an id key, or to null (used by `branchWithSummary` before its append).
    /// An id that is not in the index leaves a null leaf (callers check existence first).
    pub fn set_leaf_key(&mut self, key: Option<&str>) {
        self.ids.leaf = match key.and_then(|k| self.ids.index.slot_of.get(k)) {
            Some(&slot) => Leaf::Slot(slot),
            None => Leaf::Null,
        };
    }

    pub fn reset_leaf(&mut self) {
        self.ids.leaf = Leaf::Null;
    }

    // ----- state changes shared by the operations -----------------------------------------------

    fn reset_state(&mut self) {
        self.reserved.clear();
        self.records.clear();
        self.backed = None;
        self.ids.clear();
    }

    fn push_record(&mut self, line: &[u8], meta: Meta) -> u32 {
        let pos = self.push_meta(meta);
        self.records.keep_in_text(pos, line);
        pos
    }

    /// A record whose line is not placed yet ([`Records::keep_in_text`] or in the file).
    fn push_meta(&mut self, meta: Meta) -> u32 {
        self.ids.grow();
        self.records.push(Rec::in_text(0, 0, meta))
    }

    /// Rebuild index, leaf and labels from the records (the reference's `_buildIndex`).
    fn build_index(&mut self) {
        self.ids.build(&self.records.recs);
    }
}
