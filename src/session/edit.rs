//! Moving the leaf and changing the tree: branch, prune, a new session from a branch, and the
//! checks of a context edit.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use pi_session_core::session::{self, Replacement};
use pi_session_core::timefmt;

use super::{pos_or_none, NativeSession};
use crate::cut::U32s;
use crate::error::ForJs;

#[napi]
impl NativeSession {
    /// `branch(id)`: the leaf moves to the entry of `key`; the answer is its position.
    #[napi(catch_unwind)]
    pub fn branch(&mut self, env: Env, key: Option<String>, display: String) -> Result<u32> {
        self.inner.branch(key.as_deref(), &display).for_js(&env)?;
        Ok(pos_or_none(self.inner.leaf_pos()))
    }

    /// `countSubtree(id)`: entries in the subtree of `key` (the entry included), 0 for none.
    #[napi(catch_unwind)]
    pub fn count_subtree(&self, key: Option<String>) -> u32 {
        self.inner.count_subtree(key.as_deref()) as u32
    }

    /// `pruneBranch(id)`: delete the subtree of `key` (see the core's `prune` module).
    #[napi(catch_unwind)]
    pub fn prune_branch(
        &mut self,
        env: Env,
        key: Option<String>,
        display: String,
    ) -> Result<PruneResult> {
        let p = self
            .inner
            .prune_branch(key.as_deref(), &display)
            .for_js(&env)?;
        Ok(PruneResult {
            removed: p.removed as u32,
            labels_dropped: p.labels_dropped as u32,
            rewired: p.rewired as u32,
            bytes_before: p.bytes_before as f64,
            bytes_after: p.bytes_after as f64,
            written: p.written,
            removed_keys: p.removed_ids.iter().map(|k| k.to_string()).collect(),
            context_changed: p.context_changed,
            kept: U32s(p.kept),
            edit_pos: p.edits.iter().map(|e| e.0).collect(),
            edit_member: p.edits.iter().map(|e| e.1.to_owned()).collect(),
            edit_json: p.edits.into_iter().map(|e| e.2).collect(),
        })
    }

    /// Set the leaf without checks (`null` → null leaf).
    #[napi(catch_unwind)]
    pub fn set_leaf_key(&mut self, key: Option<String>) {
        self.inner.set_leaf_key(key.as_deref());
    }

    #[napi(catch_unwind)]
    pub fn reset_leaf(&mut self) {
        self.inner.reset_leaf();
    }

    /// `createBranchedSession(leafId)` (see the core's `Branched`); `now_ms`: JS's `Date.now()`,
    /// the clock of the new header's time and id.
    #[napi(catch_unwind)]
    pub fn create_branched_session(
        &mut self,
        env: Env,
        start_key: Option<String>,
        display: String,
        now_ms: Option<f64>,
    ) -> Result<BranchedResult> {
        let result = timefmt::with_host_now(now_ms, || {
            self.inner.create_branched(start_key.as_deref(), &display)
        });
        self.account(&env);
        let b = result.for_js(&env)?;
        Ok(BranchedResult {
            file: b.file.map(|p| p.to_string_lossy().into_owned()),
            from: U32s(b.from),
            kept: b.kept as u32,
            first_kept_at: b.first_kept.iter().map(|f| f.0).collect(),
            first_kept_from: b.first_kept.iter().map(|f| f.1).collect(),
        })
    }

    /// `appendContextEdit`'s first check: the replacement as JS sees it (`shape`: `null`,
    /// `notObject`, `noContent`, `text`, `blocks` or `otherContent`).
    #[napi(catch_unwind)]
    pub fn check_context_edit_replacement(&self, env: Env, shape: String) -> Result<()> {
        replacement_shape(&shape)
            .and_then(session::check_replacement)
            .for_js(&env)
    }

    /// `appendContextEdit`'s target checks (found, on the active branch): its position.
    #[napi(catch_unwind)]
    pub fn context_edit_target(
        &self,
        env: Env,
        key: Option<String>,
        display: String,
    ) -> Result<u32> {
        self.inner
            .context_edit_target(key.as_deref(), &display)
            .for_js(&env)
    }

    /// `appendContextEdit`'s last check on the target's `type` and message role as JS read them
    /// (null: not a string): whether string content is stored as one text block.
    #[napi(catch_unwind)]
    pub fn context_edit_wraps_text(
        &self,
        env: Env,
        display: String,
        entry_type: Option<String>,
        role: Option<String>,
        shape: String,
    ) -> Result<bool> {
        replacement_shape(&shape)
            .and_then(|r| {
                session::context_edit_wraps_text(
                    &display,
                    entry_type.as_deref(),
                    role.as_deref(),
                    r,
                )
            })
            .for_js(&env)
    }
}

fn replacement_shape(name: &str) -> pi_session_core::Result<Replacement> {
    Ok(match name {
        "null" => Replacement::Null,
        "notObject" => Replacement::NotObject,
        "noContent" => Replacement::NoContent,
        "text" => Replacement::Text,
        "blocks" => Replacement::Blocks,
        "otherContent" => Replacement::OtherContent,
        _ => {
            return Err(pi_session_core::Error::internal(format!(
                "unknown replacement shape {name:?}"
            )))
        }
    })
}

/// What `createBranchedSession` did, for the JS shell to make the new entry objects from the old.
#[napi(object, object_from_js = false)]
pub struct BranchedResult {
    /// The new file (none in memory).
    pub file: Option<String>,
    /// Per record after the new header, the old position it was made from: the path's entries,
    /// then the re-created label records (each from the label record it copies).
    #[napi(ts_type = "Uint32Array")]
    pub from: U32s,
    /// How many of `from` are the path's entries; each one's `parentId` is now the id of the one
    /// before it (the first's is null).
    pub kept: u32,
    /// The compactions among them (indexes into `from`) and, for each, the old position of the
    /// entry whose id is now its `firstKeptEntryId` (null: the value it had).
    pub first_kept_at: Vec<u32>,
    pub first_kept_from: Vec<Option<u32>>,
}

/// What `pruneBranch` did, with what a host holding entry objects needs to follow it.
#[napi(object, object_from_js = false)]
pub struct PruneResult {
    pub removed: u32,
    pub labels_dropped: u32,
    pub rewired: u32,
    pub bytes_before: f64,
    pub bytes_after: f64,
    pub written: bool,
    /// Keys (JSON texts) of the ids of every entry deleted, labels dropped with them included.
    pub removed_keys: Vec<String>,
    pub context_changed: bool,
    /// Old positions of the records kept, in their new order.
    #[napi(ts_type = "Uint32Array")]
    pub kept: U32s,
    /// Member edits on survivors: new position, member name, JSON value.
    pub edit_pos: Vec<u32>,
    pub edit_member: Vec<String>,
    pub edit_json: Vec<String>,
}
