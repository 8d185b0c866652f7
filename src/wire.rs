//! The wire formats: the core's typed query results encoded for JavaScript, one encoder per
//! format. JavaScript decodes each in one place, `lib/wire.js`, whose named offsets follow the
//! layouts documented here. Bulk results cross as one `Uint32Array` (no per-node napi objects:
//! JavaScript builds the objects, over entries it parses in one batch).
//!
//! "No record" is [`NONE`] (`u32::MAX`, `NONE` in `lib/wire.js`) in every format. A listing's
//! summaries cross as one JSON text each ([`summary_info`]), decoded by `lib/listing.js`.

use pi_session_core::context::{Compaction, Plan};
use pi_session_core::json;
use pi_session_core::listing::SummaryInfo;
use pi_session_core::transcript::{BoundaryError, Transcript};
use pi_session_core::tree::{ChildOrder, Tree};

/// "No record" in a position slot.
pub const NONE: u32 = u32::MAX;

/// Item flag: the entry contributes no messages (a compaction after the leading one).
pub const FLAG_SUPPRESSED: u32 = 1;
/// Item flag: the leading compaction carries `retainedTail`.
pub const FLAG_RETAINED_TAIL: u32 = 2;

fn pos(p: Option<u32>) -> u32 {
    p.unwrap_or(NONE)
}

/// `getTree()`: `[rootCount, rootIndex…, nodeCount, node…, childIndex…]`, a node being
/// `[entryPos, labelPos|NONE, sortByDate, childCount]`, the nodes in an order where every node
/// comes after its children ([`Tree::children_first`]), and the children of all nodes following
/// the nodes, node after node, as indexes of that order (as are the roots). `sortByDate` 1 means
/// JS sorts the node's children by `new Date(timestamp)` (see [`ChildOrder::ByDate`]), 0 that they
/// are in order. JS then makes each node in one pass, its children already made: `getTree()`
/// right after a resume runs that loop cold, once per node of the session.
pub fn tree(t: &Tree) -> Vec<u32> {
    let order = t.children_first();
    let mut index = vec![NONE; t.nodes.len()];
    for (i, &node) in order.iter().enumerate() {
        index[node as usize] = i as u32;
    }
    let nodes = || order.iter().map(|&k| &t.nodes[k as usize]);
    let child_count: usize = nodes().map(|n| n.child_count()).sum();
    let mut out = Vec::with_capacity(2 + t.root_nodes().len() + order.len() * 4 + child_count);
    out.push(t.root_nodes().len() as u32);
    out.extend(t.root_nodes().iter().map(|&r| index[r as usize]));
    out.push(order.len() as u32);
    for n in nodes() {
        out.extend_from_slice(&[
            n.pos,
            pos(n.label()),
            u32::from(n.order() == ChildOrder::ByDate),
            n.child_count() as u32,
        ]);
    }
    for n in nodes() {
        out.extend(t.child_nodes(n).iter().map(|&c| index[c as usize]));
    }
    out
}

/// The context plan: `[thinkingPos|NONE, modelPos|NONE, count, item…]`, an item being
/// `[entryPos, editPos|NONE, flags]` (`FLAG_*`).
pub fn plan(p: &Plan) -> Vec<u32> {
    let mut out = Vec::with_capacity(3 + p.entries.len() * 3);
    out.push(pos(p.thinking));
    out.push(pos(p.model));
    out.push(p.entries.len() as u32);
    items(&p.entries, &mut out);
    out
}

/// A transcript page (`NativeSession.transcriptPage`): `[status, total, itemsAfterLatestCompaction,
/// start, count, leafPos|NONE, leafItems, (entryPos, within)…]`, one pair per item of the page
/// (the entry that makes it and its index among that entry's items). `status` is 0, or 1 when the
/// boundary's entry is not on the active branch, 2 when it names more items than its entry makes
/// (then nothing follows the status).
pub fn transcript_page(
    t: &Transcript,
    boundary: Option<Result<usize, BoundaryError>>,
    limit: usize,
    backward: bool,
) -> Vec<u32> {
    let anchor = match boundary {
        None => None,
        Some(Ok(item)) => Some(item),
        Some(Err(BoundaryError::NotOnBranch)) => return vec![1],
        Some(Err(BoundaryError::PastEntry)) => return vec![2],
    };
    let items = t.page(anchor, limit, backward);
    let mut out = Vec::with_capacity(7 + items.len() * 2);
    let (leaf, leaf_items) = t.leaf().map_or((NONE, 0), |(p, n)| (p, n as u32));
    out.extend_from_slice(&[
        0,
        t.total() as u32,
        t.items_after_latest_compaction() as u32,
        items.start as u32,
        items.len() as u32,
        leaf,
        leaf_items,
    ]);
    for item in items {
        let (pos, within) = t.locate(item);
        out.push(pos);
        out.push(within as u32);
    }
    out
}

fn items(entries: &[pi_session_core::context::Selected], out: &mut Vec<u32>) {
    for e in entries {
        out.push(e.pos);
        out.push(pos(e.edit));
        out.push(match e.compaction {
            Compaction::None => 0,
            Compaction::Suppressed => FLAG_SUPPRESSED,
            Compaction::RetainedTail => FLAG_RETAINED_TAIL,
        });
    }
}

/// A listing summary's fields as one JSON text: `{path, id?, cwd, name?, parentSessionPath?,
/// created?, modified?, messageCount}` (values as the file states them), and when the core could
/// not decide `modified` (a date only JavaScript's `Date` reads, see `SummaryInfo::modified`)
/// instead of it the ingredients of the rule: `{…, act?, actPending, mtimeMs, …}`.
pub fn summary_info(s: &SummaryInfo) -> String {
    let mut out = String::with_capacity(256);
    out.push('{');
    s.write_head_members(&mut out);
    match s.modified() {
        Some(m) => {
            out.push_str(",\"modified\":");
            json::write_number(m, &mut out);
        }
        None => s.write_activity_members(&mut out),
    }
    out.push_str(",\"messageCount\":");
    out.push_str(&s.message_count.to_string());
    out.push('}');
    out
}
