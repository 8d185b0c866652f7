//! Sessions whose JS object the garbage collector has taken give their memory back at the next
//! open, not when Node gets round to their finalizers.
//!
//! Node runs Node-API finalizers only after the running JavaScript returns to the event loop, so a
//! synchronous loop that opens one session after another (a script that reads a whole directory)
//! kept every session it had opened: 150 opens of a 16 MB file peaked at 2.7 GB (the reference:
//! 255 MB). A weak reference to each manager's JS object is cleared by the GC itself; once it is
//! clear no JavaScript can reach that session again, so its state (lines, index, descriptors, a
//! held lease) is dropped at once and only an empty shell waits for the finalizer.

use std::cell::{Cell, RefCell};
use std::ptr;

use napi::{sys, Env};

use crate::NativeSession;

#[derive(Clone, Copy)]
struct Tracked {
    id: u64,
    /// Valid until the session's finalizer, which removes this entry first.
    session: *mut NativeSession,
    weak: sys::napi_ref,
}

thread_local! {
    // Per thread = per Node environment: a worker's sessions are only ever seen by that worker.
    static TRACKED: RefCell<Vec<Tracked>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u64> = const { Cell::new(1) };
    static RELEASED: Cell<u32> = const { Cell::new(0) };
}

/// How many sessions this thread has released early (for tests and diagnostics).
pub fn released_count() -> u32 {
    RELEASED.with(Cell::get)
}

/// Start watching `object`, the JS object of `session` (called once, right after creation).
/// Returns the session's tracking id (0 when no weak reference could be made: never reclaimed
/// early then, as before).
pub fn track(env: &Env, object: sys::napi_value, session: &mut NativeSession) -> u64 {
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
    TRACKED.with(|t| {
        t.borrow_mut().push(Tracked {
            id,
            session: session as *mut NativeSession,
            weak,
        })
    });
    id
}

/// The session `id` is being finalized: forget it (its memory is about to go anyway).
pub fn untrack(env: &Env, id: u64) {
    if id == 0 {
        return;
    }
    let entry = TRACKED.with(|t| {
        let mut t = t.borrow_mut();
        let at = t.iter().position(|e| e.id == id)?;
        Some(t.swap_remove(at))
    });
    if let Some(e) = entry {
        // SAFETY: the reference was created in this env and is deleted exactly once (here or in
        // `sweep`, which removed the entry first).
        unsafe { sys::napi_delete_reference(env.raw(), e.weak) };
    }
}

/// Release every tracked session whose JS object has been collected, except `current` (the
/// session of the running call, whose object is alive anyway).
pub fn sweep(env: &Env, current: u64) {
    let dead: Vec<Tracked> = TRACKED.with(|t| {
        let mut t = t.borrow_mut();
        let mut dead = Vec::new();
        t.retain(|e| {
            if e.id == current {
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
        dead
    });
    for e in dead {
        // SAFETY: the JS object is gone, so no call can be running on this session and none can
        // start; its finalizer has not run (it would have removed the entry), so the native
        // object is still allocated. The registry is not borrowed while the old state drops.
        unsafe {
            (*e.session).release(env);
            sys::napi_delete_reference(env.raw(), e.weak);
        }
        RELEASED.with(|n| n.set(n.get().saturating_add(1)));
    }
}
