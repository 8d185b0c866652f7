//! Sessions whose JS object the garbage collector has taken give their memory back at the next
//! open, not when Node gets round to their finalizers.
//!
//! Node runs Node-API finalizers only after the running JavaScript returns to the event loop, so a
//! synchronous loop that opens one session after another (a script that reads a whole directory)
//! kept every session it had opened: open + buildSessionContext of 3,000 sessions (2.6 GB) peaked
//! at 1.35 GB. A weak reference to each manager's JS object is cleared by the GC itself; once it
//! is clear no JavaScript can reach that session again, so its state (lines, index, descriptors,
//! a held lease) is dropped at once and only an empty shell waits for the finalizer.
//!
//! The same holds for the readers of lazy values (`LazyValues`, see `crate::lazy`): one shares
//! the bytes of the load it reads from, so an entry nobody holds any more must not keep them
//! until the event loop turns either.
//!
//! A sweep reads the weak references inside a handle scope that it closes before returning. Each
//! value read is a handle that roots its object while the scope is open. Without that scope, the
//! GC that V8 starts for the memory reported right after a sweep, in the same call, found every
//! manager rooted and collected none (a loop of opens on Node 20 and 24 held all its sessions).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use crate::lazy::LazyValues;
use crate::session::NativeSession;

/// What a tracked native object is, with the pointer to it.
#[derive(Clone, Copy)]
enum Target {
    Session(*mut NativeSession),
    Lazy(*mut LazyValues),
}

#[derive(Clone, Copy)]
struct Tracked {
    /// Valid until the object's finalizer, which removes this entry first.
    target: Target,
    weak: sys::napi_ref,
}

thread_local! {
    // Per thread = per Node environment: a worker's sessions are only ever seen by that worker.
    static TRACKED: RefCell<HashMap<u64, Tracked>> = RefCell::new(HashMap::new());
    static NEXT_ID: Cell<u64> = const { Cell::new(1) };
    static RELEASED: Cell<u32> = const { Cell::new(0) };
    /// Entries left after the last sweep, and bytes reported since: a sweep looks at every
    /// entry, so it runs only once the registry has doubled or enough memory was added (a
    /// program that keeps 30,000 managers alive would otherwise sweep them all per open).
    static SWEPT_LEN: Cell<usize> = const { Cell::new(0) };
    static GROWN: Cell<i64> = const { Cell::new(0) };
}

/// Up to this many entries a sweep is cheap enough (~1 µs) to run at every open; beyond, only
/// once the registry has doubled since the last sweep...
const SWEEP_ALWAYS_LEN: usize = 64;
/// ...or once sessions have grown by this much since it.
const SWEEP_GROWTH: i64 = 16 << 20;

/// Session `current` (0: none) grew by `bytes` (0 when a manager is only being tracked): sweep
/// if due.
pub(crate) fn sweep_if_due(env: &Env, current: u64, bytes: i64) {
    let grown = GROWN.with(|g| {
        g.set(g.get().saturating_add(bytes));
        g.get()
    });
    let len = TRACKED.with(|t| t.borrow().len());
    if grown >= SWEEP_GROWTH || len <= SWEEP_ALWAYS_LEN || len >= 2 * SWEPT_LEN.with(Cell::get) {
        sweep(env, current);
    }
}

/// The tracked session `id` of this thread, if its finalizer has not run yet (the pointer is
/// valid until then).
pub(crate) fn session_of(id: u64) -> Option<*mut NativeSession> {
    if id == 0 {
        return None;
    }
    TRACKED.with(|t| match t.borrow().get(&id)?.target {
        Target::Session(s) => Some(s),
        Target::Lazy(_) => None,
    })
}

/// How many managers had their state dropped as soon as the GC took them (for tests and
/// diagnostics).
#[napi]
pub fn reclaimed_session_count() -> u32 {
    RELEASED.with(Cell::get)
}

/// Start watching `object`, the JS object of `session` (called once, right after creation),
/// after a sweep if one is due. Returns the session's tracking id (0 when no weak reference could
/// be made: never reclaimed early then, as before). V8 is then told what the other sessions hold
/// (see [`crate::memory`]).
pub(crate) fn track(env: &Env, object: sys::napi_value, session: &mut NativeSession) -> u64 {
    let id = track_target(env, object, Target::Session(session as *mut NativeSession));
    crate::memory::tell_held(env);
    id
}

/// Start watching `object`, the JS object of the lazy values `lazy` (see [`track`]).
pub(crate) fn track_lazy(env: &Env, object: sys::napi_value, lazy: &mut LazyValues) -> u64 {
    track_target(env, object, Target::Lazy(lazy as *mut LazyValues))
}

fn track_target(env: &Env, object: sys::napi_value, target: Target) -> u64 {
    sweep_if_due(env, 0, 0);
    let mut weak = ptr::null_mut();
    // SAFETY: `object` is a live value of this env's current callback scope.
    let status = unsafe { sys::napi_create_reference(env.raw(), object, 0, &mut weak) };
    if status != sys::Status::napi_ok || weak.is_null() {
        return 0;
    }
    let id = NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    });
    TRACKED.with(|t| t.borrow_mut().insert(id, Tracked { target, weak }));
    id
}

/// Whether this thread tracks a session besides one (the caller's own, once tracked). Asked only
/// when a session's size changed by a step, and it stops at the second session it meets.
pub(crate) fn other_sessions() -> bool {
    TRACKED
        .try_with(|t| {
            let t = t.borrow();
            let mut sessions = t
                .values()
                .filter(|e| matches!(e.target, Target::Session(_)));
            sessions.nth(1).is_some()
        })
        .unwrap_or(false)
}

/// The session `id` is being finalized: forget it (its memory is about to go anyway).
pub(crate) fn untrack(env: &Env, id: u64) {
    if id == 0 {
        return;
    }
    // `try_with`: a finalizer may run while the thread's storage is being torn down.
    let entry = TRACKED.try_with(|t| {
        let mut t = t.borrow_mut();
        let e = t.remove(&id)?;
        // Keep "doubled since the last sweep" relative to what is left.
        SWEPT_LEN.with(|n| n.set(n.get().min(t.len())));
        Some(e)
    });
    if let Ok(Some(e)) = entry {
        // SAFETY: the reference was created in this env and is deleted exactly once (here or in
        // `sweep`, which removed the entry first).
        unsafe { sys::napi_delete_reference(env.raw(), e.weak) };
    }
}

/// Release every tracked session whose JS object has been collected, except `current` (the
/// session of the running call, whose object is alive anyway).
fn sweep(env: &Env, current: u64) {
    // The values read below are handles: closed with this scope, not with the calling method
    // (see the module doc).
    let mut scope = ptr::null_mut();
    // SAFETY: opened and closed on this env's thread, around handles made only in between.
    let scoped =
        unsafe { sys::napi_open_handle_scope(env.raw(), &mut scope) } == sys::Status::napi_ok;
    let dead: Vec<Tracked> = TRACKED.with(|t| {
        let mut t = t.borrow_mut();
        let mut dead = Vec::new();
        t.retain(|&id, e| {
            if id == current {
                return true;
            }
            let mut value = ptr::null_mut();
            // SAFETY: a reference of this env, not yet deleted (entries are removed before that).
            let status = unsafe { sys::napi_get_reference_value(env.raw(), e.weak, &mut value) };
            if status == sys::Status::napi_ok && value.is_null() {
                dead.push(*e);
                false
            } else {
                true
            }
        });
        SWEPT_LEN.with(|n| n.set(t.len()));
        dead
    });
    if scoped {
        // SAFETY: the scope opened above; no handle made in it is used after this point.
        unsafe { sys::napi_close_handle_scope(env.raw(), scope) };
    }
    GROWN.with(|g| g.set(0));
    for e in dead {
        // SAFETY: the JS object is gone, so no call can be running on this session and none can
        // start; its finalizer has not run (it would have removed the entry), so the native
        // object is still allocated. The registry is not borrowed while the old state drops.
        unsafe {
            match e.target {
                Target::Session(s) => {
                    (*s).release(env);
                    RELEASED.with(|n| n.set(n.get().saturating_add(1)));
                }
                Target::Lazy(l) => (*l).release(),
            }
            sys::napi_delete_reference(env.raw(), e.weak);
        }
    }
}
