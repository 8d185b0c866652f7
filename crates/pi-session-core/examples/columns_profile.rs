//! Time preparing a session's branch for JS as skeleton batches and as column batches, on one
//! thread and on two: `cargo run --release --example columns_profile -- FILE`.
use std::time::{Duration, Instant};

use pi_session_core::materialize::Form;

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: columns_profile FILE");
    let mut s = pi_session_core::Session::blank("/w".into(), "/tmp".into(), false).unwrap();
    s.set_session_file(path.into()).unwrap();
    let branch = s.branch_from(s.leaf_key());
    let time = |form: Form, threads: usize| -> Duration {
        let t = Instant::now();
        s.for_each_batch_as(form, &branch, 1 << 20, usize::MAX, threads, |_| true)
            .unwrap();
        t.elapsed()
    };
    for threads in [1, 2] {
        for round in 0..3 {
            let skeletons = time(Form::Skeleton, threads);
            let columns = time(Form::Columns, threads);
            println!("{} entries, threads {threads}, round {round}: skeletons {skeletons:?}, columns {columns:?}", branch.len());
        }
    }
}
