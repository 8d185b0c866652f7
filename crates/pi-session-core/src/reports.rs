//! The reports of `merge`, `sync` and `move`: for each, the one JSON document that both its
//! command prints with `--json` (`pi-sessions merge|sync|move`) and its library function returns
//! (`mergeSessions`, `syncSessions`, `moveSessions`, through the binding as this text). One
//! serializer per report, so the CLI and the library cannot drift apart.

use crate::json::build::{arr, num, obj, opt, s};
use crate::json::Value;
use crate::merge::Merged;
use crate::relocate::{Action, Done, FileMove, Plan};
use crate::sync::{self, Place, Report};

/// `{session, out, entries, conflicts: [{id, newId}], keptLines, leafId}`.
pub fn merged(m: &Merged, out: Option<&str>) -> Value {
    obj(vec![
        ("session", s(&m.session_id)),
        ("out", opt(out)),
        ("entries", num(m.entries as f64)),
        (
            "conflicts",
            arr(m
                .conflicts
                .iter()
                .map(|c| obj(vec![("id", s(&c.id)), ("newId", s(&c.new_id))]))
                .collect()),
        ),
        ("keptLines", num(m.kept_lines as f64)),
        ("leafId", opt(m.leaf_id.as_deref())),
    ])
}

/// `{remote, transport, branch, dryRun, rounds, rewritten, synced: [{id, local, remote, action,
/// conflicts, copiesRemoved, tail, restored}], deleted: [{id, local, remote, from, how}],
/// purged: [{id, remote}], pushed, pulled, merged, restored, unchanged, problems: [{code, id,
/// path, message}], secretsPolicy, secrets: [{id, path, kinds, findings, sent, first}]}`.
pub fn synced(r: &Report) -> Value {
    let synced = r
        .synced
        .iter()
        .map(|x| {
            obj(vec![
                ("id", s(&x.id)),
                ("local", s(&x.local.to_string_lossy())),
                ("remote", s(&x.remote)),
                ("action", s(x.action.name())),
                ("conflicts", num(x.conflicts as f64)),
                (
                    "copiesRemoved",
                    arr(x
                        .copies_removed
                        .iter()
                        .map(|c| s(&c.to_string_lossy()))
                        .collect()),
                ),
                ("tail", num(x.tail as f64)),
                ("restored", opt(x.restored.map(Place::name))),
            ])
        })
        .collect();
    let deleted = r
        .deleted
        .iter()
        .map(|d| {
            obj(vec![
                ("id", s(&d.id)),
                ("local", s(&d.local.to_string_lossy())),
                ("remote", s(&d.remote)),
                ("from", s(d.from.name())),
                ("how", s(d.how.name())),
            ])
        })
        .collect();
    let purged = r
        .purged
        .iter()
        .map(|p| obj(vec![("id", s(&p.id)), ("remote", s(&p.remote))]))
        .collect();
    let problems = r
        .problems
        .iter()
        .map(|p| {
            obj(vec![
                ("code", s(p.code)),
                ("id", opt(p.id.as_deref())),
                ("path", s(&p.path.to_string_lossy())),
                ("message", s(&p.message)),
            ])
        })
        .collect();
    obj(vec![
        ("remote", s(&r.remote)),
        ("transport", s(r.kind.name())),
        ("branch", opt(r.branch.as_deref())),
        ("dryRun", Value::Bool(r.dry_run)),
        ("rounds", num(f64::from(r.rounds))),
        ("rewritten", Value::Bool(r.rewritten)),
        ("synced", arr(synced)),
        ("deleted", arr(deleted)),
        ("purged", arr(purged)),
        ("pushed", num(r.count(sync::Action::Pushed) as f64)),
        ("pulled", num(r.count(sync::Action::Pulled) as f64)),
        ("merged", num(r.count(sync::Action::Merged) as f64)),
        ("restored", num(r.restored() as f64)),
        ("unchanged", num(r.unchanged as f64)),
        ("problems", arr(problems)),
        ("secretsPolicy", s(r.secrets_policy.name())),
        ("secrets", arr(r.secrets.iter().map(flagged_json).collect())),
    ])
}

/// `{id, path, kinds, findings, sent, first}`.
fn flagged_json(f: &sync::Flagged) -> Value {
    obj(vec![
        ("id", s(&f.id)),
        ("path", s(&f.path.to_string_lossy())),
        ("kinds", arr(f.kinds.iter().map(|k| s(k.name())).collect())),
        ("findings", num(f.findings as f64)),
        ("sent", Value::Bool(f.sent)),
        ("first", Value::Bool(f.first)),
    ])
}

/// `{from, to, oldDir, newDir, applied, files: [{from, to, id, action, status, rewrites: [{field,
/// from, to}], tail, reason, message}], moved, skipped}`.
pub fn moved(old: &str, plan: &Plan, applied: bool, done: Option<&[Done]>) -> Value {
    let files: Vec<Value> = plan
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| file_json(f, done.map(|d| &d[i])))
        .collect();
    let moving = |i: usize, f: &FileMove| match done {
        Some(d) => matches!(d[i], Done::Moved { .. }),
        None => !matches!(f.action, Action::Skip(_)),
    };
    let moved = plan
        .files
        .iter()
        .enumerate()
        .filter(|(i, f)| moving(*i, f))
        .count();
    obj(vec![
        ("from", s(old)),
        ("to", s(&plan.new_cwd)),
        ("oldDir", s(&plan.old_dir.to_string_lossy())),
        ("newDir", s(&plan.new_dir.to_string_lossy())),
        ("applied", Value::Bool(applied)),
        ("files", arr(files)),
        ("moved", num(moved as f64)),
        ("skipped", num((plan.files.len() - moved) as f64)),
    ])
}

fn file_json(f: &FileMove, done: Option<&Done>) -> Value {
    let o = f.outcome(done);
    let (action, status, reason, message, tail) = (o.action, o.status, o.reason, o.message, o.tail);
    obj(vec![
        ("from", s(&f.from.to_string_lossy())),
        ("to", s(&f.to.to_string_lossy())),
        ("id", opt(f.session_id.as_deref())),
        ("action", s(action)),
        ("status", s(status)),
        (
            "rewrites",
            arr(f
                .rewrites
                .iter()
                .map(|r| {
                    obj(vec![
                        ("field", s(r.field)),
                        ("from", opt(r.from.as_deref())),
                        ("to", s(&r.to)),
                    ])
                })
                .collect()),
        ),
        ("tail", num(tail as f64)),
        ("reason", opt(reason)),
        ("message", opt(message.as_deref())),
    ])
}
