//! A progress bar on stderr, drawn only on a terminal and only for work big enough to wait for.

use std::io::Write;
use std::time::{Duration, Instant};

/// Below this many files, loading is quick enough that a bar would only flicker.
pub const MIN_FILES: usize = 100;

pub struct Progress<'a> {
    err: Option<&'a mut dyn Write>,
    label: &'static str,
    total: usize,
    last: Option<Instant>,
}

impl<'a> Progress<'a> {
    /// A bar when `tty` and `total >= MIN_FILES`, else a silent one.
    pub fn new(err: &'a mut dyn Write, tty: bool, label: &'static str, total: usize) -> Self {
        Progress {
            err: (tty && total >= MIN_FILES).then_some(err),
            label,
            total,
            last: None,
        }
    }

    pub fn update(&mut self, done: usize) {
        let Some(err) = self.err.as_mut() else { return };
        let now = Instant::now();
        if done < self.total
            && self
                .last
                .is_some_and(|l| now.duration_since(l) < Duration::from_millis(50))
        {
            return;
        }
        self.last = Some(now);
        const W: usize = 30;
        let filled = (done * W).checked_div(self.total).unwrap_or(W);
        let _ = write!(
            err,
            "\r\x1b[K{} [{}{}] {done}/{}",
            self.label,
            "█".repeat(filled),
            "░".repeat(W - filled),
            self.total
        );
        let _ = err.flush();
    }

    /// Erase the bar.
    pub fn finish(&mut self) {
        if let Some(err) = self.err.as_mut() {
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}
