//! Moving the leaf and changing the tree: branch, prune, and a new session from a branch.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::{core_key, NativeSession};
use crate::error::ForJs;

#[napi]
impl NativeSession {
    #[napi(catch_unwind)]
    pub fn branch(&mut self, env: Env, key: String, display: String) -> Result<()> {
        self.inner.branch(core_key(&key), &display).for_js(&env)
    }

    /// `countSubtree(id)`: entries in the subtree of `key` (the entry included).
    #[napi(catch_unwind)]
    pub fn count_subtree(&self, env: Env, key: String, display: String) -> Result<u32> {
        self.inner
            .count_subtree(core_key(&key), &display)
            .map(|n| n as u32)
            .for_js(&env)
    }

    /// `pruneBranch(id)`: delete the subtree of `key` (see the core's `prune` module).
    #[napi(catch_unwind)]
    pub fn prune_branch(&mut self, env: Env, key: String, display: String) -> Result<PruneResult> {
        let p = self
            .inner
            .prune_branch(core_key(&key), &display)
            .for_js(&env)?;
        Ok(PruneResult {
            removed: p.removed as u32,
            labels_dropped: p.labels_dropped as u32,
            rewired: p.rewired as u32,
            bytes_before: p.bytes_before as f64,
            bytes_after: p.bytes_after as f64,
            written: p.written,
            kept: Uint32Array::new(p.kept),
            edit_pos: p.edits.iter().map(|e| e.0).collect(),
            edit_member: p.edits.iter().map(|e| e.1.to_owned()).collect(),
            edit_json: p.edits.into_iter().map(|e| e.2).collect(),
        })
    }

    /// Set the leaf without checks (`null` → null leaf).
    #[napi(catch_unwind)]
    pub fn set_leaf_key(&mut self, key: Option<String>) {
        self.inner.set_leaf_key(key.as_deref().map(core_key));
    }

    #[napi(catch_unwind)]
    pub fn reset_leaf(&mut self) {
        self.inner.reset_leaf();
    }

    #[napi(catch_unwind)]
    pub fn create_branched_session(
        &mut self,
        env: Env,
        start_key: Option<String>,
        display: String,
    ) -> Result<Option<String>> {
        let result = self
            .inner
            .create_branched_session(start_key.as_deref().map(core_key), &display);
        self.account(&env);
        result
            .map(|p| p.map(|p| p.to_string_lossy().into_owned()))
            .for_js(&env)
    }
}

/// What `pruneBranch` did, with what a host holding entry objects needs to follow it.
#[napi(object)]
pub struct PruneResult {
    pub removed: u32,
    pub labels_dropped: u32,
    pub rewired: u32,
    pub bytes_before: f64,
    pub bytes_after: f64,
    pub written: bool,
    /// Old positions of the records kept, in their new order.
    pub kept: Uint32Array,
    /// Member edits on survivors: new position, member name, JSON value.
    pub edit_pos: Vec<u32>,
    pub edit_member: Vec<String>,
    pub edit_json: Vec<String>,
}
