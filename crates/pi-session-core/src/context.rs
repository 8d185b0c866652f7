//! Compaction-aware context selection over the current branch.
//!
//! Produces positions, not messages: the binding turns the selected entries into message objects
//! (which must be the caller's own objects). The rules are the reference's (`buildContextEntries`,
//! `buildSessionProjection`) plus the seed's `retainedTail` checkpoint.

use std::collections::HashMap;

use crate::record::{Kind, Role};
use crate::store::View;

/// What a selected compaction contributes (every other entry is [`Compaction::None`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compaction {
    /// Not a compaction, or the leading one without `retainedTail`: projected as usual.
    None,
    /// A compaction that is not the leading one: contributes no messages.
    Suppressed,
    /// The leading compaction, carrying `retainedTail` (its tail messages follow its summary).
    RetainedTail,
}

/// One selected entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected {
    pub pos: u32,
    /// The latest `context_edit` in the selection that targets this entry.
    pub edit: Option<u32>,
    pub compaction: Compaction,
}

/// What a projection needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Last `thinking_level_change` on the full path.
    pub thinking: Option<u32>,
    /// Last `model_change` or assistant message on the full path.
    pub model: Option<u32>,
    pub entries: Vec<Selected>,
}

/// Select context entries from a root-first path (`buildContextEntries`).
pub fn select<'a>(s: impl Into<View<'a>>, path: &[u32]) -> Vec<u32> {
    let s: View<'a> = s.into();
    let Some(c) = path
        .iter()
        .rposition(|&p| s.meta(p).kind == Kind::Compaction)
    else {
        return path.to_vec();
    };
    let comp = s.meta(path[c]);
    // The reference finds the compaction again by id; with duplicate ids that can be an earlier entry.
    let Some(ci) = path.iter().position(|&p| s.meta(p).id == comp.id) else {
        return path.to_vec();
    };
    let mut out = vec![path[c]];
    if !comp.retained_tail {
        let mut found = false;
        for &p in &path[..ci] {
            let m = s.meta(p);
            if m.id == comp.first_kept {
                found = true;
            }
            if found && !(m.kind == Kind::Message && m.role == Role::System) {
                out.push(p);
            }
        }
    }
    out.extend_from_slice(&path[ci + 1..]);
    out
}

/// The projection plan for a path (`buildSessionProjection`).
pub fn plan<'a>(s: impl Into<View<'a>>, path: &[u32]) -> Plan {
    let s: View<'a> = s.into();
    let mut plan = Plan::default();
    for &p in path {
        let m = s.meta(p);
        match m.kind {
            Kind::ThinkingLevelChange => plan.thinking = Some(p),
            Kind::ModelChange => plan.model = Some(p),
            Kind::Message if m.role == Role::Assistant => plan.model = Some(p),
            _ => {}
        }
    }
    let selected = select(s, path);
    let mut edits: HashMap<&str, u32> = HashMap::new();
    for &p in &selected {
        let m = s.meta(p);
        if m.kind == Kind::ContextEdit {
            edits.insert(&m.target, p);
        }
    }
    plan.entries = selected
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let m = s.meta(p);
            let compaction = match m.kind {
                Kind::Compaction if i > 0 => Compaction::Suppressed,
                Kind::Compaction if m.retained_tail => Compaction::RetainedTail,
                _ => Compaction::None,
            };
            Selected {
                pos: p,
                edit: edits.get(&*m.id).copied(),
                compaction,
            }
        })
        .collect();
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::fixture::Fixture;

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    fn msg(id: &str, parent: &str, role: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"message":{{"role":"{role}","content":"{id}"}}}}"#
        )
    }

    fn q(id: &str) -> String {
        format!("\"{id}\"")
    }

    fn fixture(lines: &[String]) -> Fixture {
        Fixture::new(&lines.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// u1 a1 sys u2 a2 [compaction keeping from sys] u3
    fn compacted(extra: &str) -> Fixture {
        fixture(&[
            H.to_owned(),
            msg("u1", "null", "user"),
            msg("a1", &q("u1"), "assistant"),
            msg("sys", &q("a1"), "system"),
            msg("u2", &q("sys"), "user"),
            msg("a2", &q("u2"), "assistant"),
            format!(
                r#"{{"type":"compaction","id":"c","parentId":"a2","summary":"s","firstKeptEntryId":"sys"{extra}}}"#
            ),
            msg("u3", &q("c"), "user"),
        ])
    }

    #[test]
    fn a_compaction_keeps_its_summary_then_the_kept_entries_then_what_follows() {
        let f = compacted("");
        let path = f.view().context_path();
        let kept: Vec<u32> = ["c", "u2", "a2", "u3"].iter().map(|id| f.pos(id)).collect();
        // The system message at the cut is not carried over.
        assert_eq!(select(f.view(), &path), kept);
    }

    #[test]
    fn a_path_without_a_compaction_is_the_context_as_it_is() {
        let f = fixture(&[
            H.to_owned(),
            msg("u1", "null", "user"),
            msg("a1", &q("u1"), "assistant"),
        ]);
        let path = f.view().context_path();
        assert_eq!(select(f.view(), &path), path);
    }

    #[test]
    fn a_retained_tail_compaction_contributes_only_itself_and_what_follows() {
        let f = compacted(r#","retainedTail":[]"#);
        let path = f.view().context_path();
        let p = plan(f.view(), &path);
        let selected: Vec<u32> = p.entries.iter().map(|e| e.pos).collect();
        assert_eq!(selected, [f.pos("c"), f.pos("u3")]);
        assert_eq!(p.entries[0].compaction, Compaction::RetainedTail);
        assert_eq!(p.model, Some(f.pos("a2")), "the last assistant message");
    }

    #[test]
    fn an_older_compaction_kept_after_the_cut_is_suppressed() {
        let f = fixture(&[
            H.to_owned(),
            msg("u1", "null", "user"),
            r#"{"type":"compaction","id":"c1","parentId":"u1","summary":"old","firstKeptEntryId":"u1"}"#.to_owned(),
            msg("u2", &q("c1"), "user"),
            r#"{"type":"compaction","id":"c2","parentId":"u2","summary":"new","firstKeptEntryId":"c1"}"#.to_owned(),
        ]);
        let path = f.view().context_path();
        let p = plan(f.view(), &path);
        let got: Vec<(u32, Compaction)> = p.entries.iter().map(|e| (e.pos, e.compaction)).collect();
        assert_eq!(
            got,
            [
                (f.pos("c2"), Compaction::None),
                (f.pos("c1"), Compaction::Suppressed),
                (f.pos("u2"), Compaction::None)
            ]
        );
    }

    #[test]
    fn a_context_edit_is_attached_to_the_entry_it_targets() {
        let f = fixture(&[
            H.to_owned(),
            msg("u1", "null", "user"),
            r#"{"type":"thinking_level_change","id":"t","parentId":"u1","thinkingLevel":"high"}"#
                .to_owned(),
            r#"{"type":"context_edit","id":"e","parentId":"t","targetId":"u1"}"#.to_owned(),
        ]);
        let path = f.view().context_path();
        let p = plan(f.view(), &path);
        assert_eq!(p.thinking, Some(f.pos("t")));
        assert_eq!(p.entries[0].pos, f.pos("u1"));
        assert_eq!(p.entries[0].edit, Some(f.pos("e")));
        assert_eq!(p.model, None);
        assert_eq!(p.entries.len(), 3);
    }
}
