//! Fault injection for tests: a per-thread hook run at the points of the rewrite paths where a
//! crash matters most. A test makes the hook panic to simulate a kill (nothing after that point
//! runs, not even the cleanup of temp files) or return an error to simulate a failed write.
//!
//! The hook exists only with the `fault-injection` feature, which the crate's own tests turn on
//! (a dev-dependency on itself) and nothing shipped does: without it a point is an empty inline
//! function, so the library (and the addon) carries no hook. With it, a point without a hook
//! costs one thread-local read; rewrites are rare, appends have no point.

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

/// A fault point: `target` is the file being written (not its temp file). Nothing to do without
/// the `fault-injection` feature.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub(crate) fn hit(_point: Point, _target: &std::path::Path) -> crate::error::Result<()> {
    Ok(())
}

#[cfg(feature = "fault-injection")]
pub use hook::{set_hook, HookGuard};

#[cfg(feature = "fault-injection")]
pub(crate) use hook::hit;

#[cfg(feature = "fault-injection")]
mod hook {
    use std::cell::RefCell;
    use std::path::Path;

    use super::Point;
    use crate::error::Result;

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
}
