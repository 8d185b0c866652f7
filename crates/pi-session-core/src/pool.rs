//! Work on many files at once: a scoped thread per core, results in input order, progress reported
//! on the calling thread as items finish.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// `f` over `items` on up to 8 threads; `progress(done)` is called after each finished item.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
    mut progress: impl FnMut(usize),
) -> Vec<R> {
    let n = items.len();
    let threads = crate::listing::job::default_threads().min(n.max(1));
    let next = AtomicUsize::new(0);
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, f) = (&next, &f);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                if tx.send((i, f(&items[i]))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (done, (i, r)) in rx.into_iter().enumerate() {
            out[i] = Some(r);
            progress(done + 1);
        }
    });
    out.into_iter()
        .map(|r| r.expect("every item was processed"))
        .collect()
}
