//! Fault injection for tests: a per-thread hook run at the points of the rewrite paths where a
//! crash matters most. A test makes the hook panic to simulate a kill (nothing after that point
//! runs, not even the cleanup of temp files) or return an error to simulate a failed write.
//! Without a hook, a point costs one thread-local read; rewrites are rare, appends have no point.

use std::cell::RefCell;
use std::path::Path;

use crate::error::Result;

/// Where a rewrite can be interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// `replace_atomic`: the temp file is complete and fsynced; the rename has not happened.
    BeforeRename,
    /// `replace_atomic`: renamed over the target; the directory is not fsynced yet.
    AfterRename,
    /// `create_new_atomic` (fork target, migration backup): the temp file is complete, not linked.
    BeforeLink,
}

type Hook = Box<dyn FnMut(Point, &Path) -> Result<()>>;

thread_local! {
    static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
}

/// Removes the hook when dropped (also when the hook's panic unwinds through the test).
#[must_use = "the hook is removed when this guard is dropped"]
pub struct HookGuard(());

impl Drop for HookGuard {
    fn drop(&mut self) {
        HOOK.with(|h| h.borrow_mut().take());
    }
}

/// Run `hook(point, target)` at every fault point reached on this thread until the guard drops.
pub fn set_hook(hook: impl FnMut(Point, &Path) -> Result<()> + 'static) -> HookGuard {
    HOOK.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
    HookGuard(())
}

/// A fault point: `target` is the file being written (not its temp file).
pub(crate) fn hit(point: Point, target: &Path) -> Result<()> {
    HOOK.with(|h| match h.borrow_mut().as_mut() {
        Some(f) => f(point, target),
        None => Ok(()),
    })
}
