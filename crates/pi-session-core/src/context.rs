//! Compaction-aware context selection over the current branch.
//!
//! Produces positions, not messages: the binding turns the selected entries into message objects
//! (which must be the caller's own objects). The rules are the reference's (`buildContextEntries`,
//! `buildSessionProjection`) plus the seed's `retainedTail` checkpoint.

use std::collections::HashMap;

use crate::record::{Kind, Role};
use crate::store::View;
use crate::tree::NONE;

/// Flag: a compaction that is not the leading one (contributes no messages).
pub const FLAG_SUPPRESSED: u32 = 1;
/// Flag: a compaction carrying `retainedTail` (its tail messages follow its summary).
pub const FLAG_RETAINED_TAIL: u32 = 2;

/// One selected entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected {
    pub pos: u32,
    /// The latest `context_edit` in the selection that targets this entry.
    pub edit: Option<u32>,
    pub flags: u32,
}

/// What a projection needs.
#[derive(Debug, Clone, Default)]
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
            let mut flags = 0;
            if m.kind == Kind::Compaction {
                if i > 0 {
                    flags |= FLAG_SUPPRESSED;
                } else if m.retained_tail {
                    flags |= FLAG_RETAINED_TAIL;
                }
            }
            Selected {
                pos: p,
                edit: edits.get(&*m.id).copied(),
                flags,
            }
        })
        .collect();
    plan
}

/// Flat encoding for the binding: `[thinking|NONE, model|NONE, n, (pos, edit|NONE, flags)…]`.
pub fn encode(plan: &Plan) -> Vec<u32> {
    let mut out = Vec::with_capacity(3 + plan.entries.len() * 3);
    out.push(plan.thinking.unwrap_or(NONE));
    out.push(plan.model.unwrap_or(NONE));
    out.push(plan.entries.len() as u32);
    for e in &plan.entries {
        out.push(e.pos);
        out.push(e.edit.unwrap_or(NONE));
        out.push(e.flags);
    }
    out
}

/// One page of a plan for the transcript read model: up to `limit` selected entries next to the
/// boundary `anchor` (an index between entries, clamped to the plan), those before it when
/// `backward`, else those from it on. Laid out as `encode`'s, except that the count slot holds the
/// plan's whole length and the page's first index follows it:
/// `[thinking|NONE, model|NONE, total, start, (pos, edit|NONE, flags)…]`. Only the page's positions
/// cross to JavaScript, so only their records are parsed there.
pub fn encode_page(plan: &Plan, anchor: usize, limit: usize, backward: bool) -> Vec<u32> {
    let total = plan.entries.len();
    let anchor = anchor.min(total);
    let (start, end) = if backward {
        (anchor.saturating_sub(limit), anchor)
    } else {
        (anchor, anchor.saturating_add(limit).min(total))
    };
    let mut out = Vec::with_capacity(4 + (end - start) * 3);
    out.push(plan.thinking.unwrap_or(NONE));
    out.push(plan.model.unwrap_or(NONE));
    out.push(total as u32);
    out.push(start as u32);
    for e in &plan.entries[start..end] {
        out.push(e.pos);
        out.push(e.edit.unwrap_or(NONE));
        out.push(e.flags);
    }
    out
}
