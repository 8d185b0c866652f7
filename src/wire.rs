//! The wire formats: the core's typed query results encoded for JavaScript, one encoder per
//! format. Every constant of a layout (the "no record" value, flags, statuses, offsets and
//! strides) is defined here once and exported to JavaScript, whose one decoder, `lib/wire.js`,
//! reads them from the binding instead of spelling them again. Bulk results cross as one
//! `Uint32Array` (no per-node napi objects: JavaScript builds the objects, over entries it parses
//! in one batch).
//!
//! A listing's summaries cross as one JSON text each ([`summary_info`]), decoded by
//! `lib/listing.js`.

use napi_derive::napi;
use pi_session_core::context::{Compaction, Plan};
use pi_session_core::json;
use pi_session_core::listing::SummaryInfo;
use pi_session_core::transcript::{BoundaryError, Transcript};
use pi_session_core::tree::{ChildOrder, Tree};

/// "No record" in a position slot of every format, and from the scalar position getters of
/// `NativeSession` (`headerPos`, `leafPos`, `lookup`, `labelPos`, `sessionNamePos`).
#[napi]
pub const NONE: u32 = u32::MAX;

/// The key of an absent id (JavaScript's `undefined`): the core's own spelling
/// (`record::UNDEFINED`), which no JSON text can be. `lib/wire.js` keys `undefined` with it.
#[napi]
pub const NO_ID_KEY: &str = pi_session_core::record::UNDEFINED;

// The tree (`getTree`): `[rootCount, rootIndex × rootCount, nodeCount, node × nodeCount,
// childIndex…]`, a node being `[entryPos, labelPos|NONE, sortByDate, childCount]`.
/// Where the tree format holds its root count; the root indexes follow from [`TREE_ROOTS`].
#[napi]
pub const TREE_ROOT_COUNT: u32 = 0;
#[napi]
pub const TREE_ROOTS: u32 = 1;
/// A node's slots, and their offsets within it.
#[napi]
pub const NODE_STRIDE: u32 = 4;
#[napi]
pub const NODE_ENTRY: u32 = 0;
#[napi]
pub const NODE_LABEL: u32 = 1;
/// 1: JavaScript sorts the node's children by `new Date(timestamp)`; 0: they are in order.
#[napi]
pub const NODE_SORT_BY_DATE: u32 = 2;
#[napi]
pub const NODE_CHILD_COUNT: u32 = 3;

// The context plan (`contextPlan`): `[thinkingPos|NONE, modelPos|NONE, count, item × count]`, an
// item being `[entryPos, editPos|NONE, flags]`.
#[napi]
pub const PLAN_THINKING: u32 = 0;
#[napi]
pub const PLAN_MODEL: u32 = 1;
#[napi]
pub const PLAN_COUNT: u32 = 2;
#[napi]
pub const PLAN_ITEMS: u32 = 3;
#[napi]
pub const ITEM_STRIDE: u32 = 3;
#[napi]
pub const ITEM_ENTRY: u32 = 0;
#[napi]
pub const ITEM_EDIT: u32 = 1;
#[napi]
pub const ITEM_FLAGS: u32 = 2;
/// Item flag: the entry contributes no messages (a compaction after the leading one).
#[napi]
pub const FLAG_SUPPRESSED: u32 = 1;
/// Item flag: the leading compaction carries `retainedTail`.
#[napi]
pub const FLAG_RETAINED_TAIL: u32 = 2;

// A transcript page (`transcriptPage`): `[status, total, itemsAfterLatestCompaction, start,
// count, leafPos|NONE, leafItems, item × count]`, an item being `[entryPos, within]` (the entry
// that makes it and its index among that entry's items). A status other than [`PAGE_OK`] is
// alone: nothing follows it.
#[napi]
pub const PAGE_STATUS: u32 = 0;
#[napi]
pub const PAGE_TOTAL: u32 = 1;
#[napi]
pub const PAGE_AFTER_COMPACTION: u32 = 2;
#[napi]
pub const PAGE_START: u32 = 3;
#[napi]
pub const PAGE_COUNT: u32 = 4;
#[napi]
pub const PAGE_LEAF: u32 = 5;
#[napi]
pub const PAGE_LEAF_ITEMS: u32 = 6;
#[napi]
pub const PAGE_ITEMS: u32 = 7;
#[napi]
pub const PAGE_ITEM_STRIDE: u32 = 2;
#[napi]
pub const PAGE_ITEM_ENTRY: u32 = 0;
#[napi]
pub const PAGE_ITEM_WITHIN: u32 = 1;
/// Page status: the page follows.
#[napi]
pub const PAGE_OK: u32 = 0;
/// Page status: the boundary's entry is not on the active branch.
#[napi]
pub const PAGE_NOT_ON_BRANCH: u32 = 1;
/// Page status: the boundary names more items than its entry makes.
#[napi]
pub const PAGE_PAST_ENTRY: u32 = 2;

// The encoders write each layout in the order of its offsets: the tree's root count comes first,
// the roots next; the plan's and the page's heads end where their items begin.
const _: () = assert!(TREE_ROOT_COUNT == 0 && TREE_ROOTS == 1);
const _: () =
    assert!(PLAN_THINKING < PLAN_ITEMS && PLAN_MODEL < PLAN_ITEMS && PLAN_COUNT < PLAN_ITEMS);
const _: () = assert!(PAGE_LEAF_ITEMS < PAGE_ITEMS && PAGE_STATUS == 0);

/// A slot of `N` values with `(offset, value)` pairs written in place.
fn slots<const N: usize>(values: [(u32, u32); N]) -> [u32; N] {
    let mut out = [0; N];
    for (at, v) in values {
        out[at as usize] = v;
    }
    out
}

fn pos(p: Option<u32>) -> u32 {
    p.unwrap_or(NONE)
}

/// `getTree()`: the tree format (see [`TREE_ROOT_COUNT`]), the nodes in an order where every node
/// comes after its children ([`Tree::children_first`]), and the children of all nodes following
/// the nodes, node after node, as indexes of that order (as are the roots). JS then makes each
/// node in one pass, its children already made: `getTree()` right after a resume runs that loop
/// cold, once per node of the session. `sortByDate` is [`ChildOrder::ByDate`].
pub fn tree(t: &Tree) -> Vec<u32> {
    let order = t.children_first();
    let mut index = vec![NONE; t.nodes.len()];
    for (i, &node) in order.iter().enumerate() {
        index[node as usize] = i as u32;
    }
    let nodes = || order.iter().map(|&k| &t.nodes[k as usize]);
    let child_count: usize = nodes().map(|n| n.child_count()).sum();
    let stride = NODE_STRIDE as usize;
    let mut out = Vec::with_capacity(2 + t.root_nodes().len() + order.len() * stride + child_count);
    out.push(t.root_nodes().len() as u32);
    out.extend(t.root_nodes().iter().map(|&r| index[r as usize]));
    out.push(order.len() as u32);
    for n in nodes() {
        let node: [u32; NODE_STRIDE as usize] = slots([
            (NODE_ENTRY, n.pos),
            (NODE_LABEL, pos(n.label())),
            (
                NODE_SORT_BY_DATE,
                u32::from(n.order() == ChildOrder::ByDate),
            ),
            (NODE_CHILD_COUNT, n.child_count() as u32),
        ]);
        out.extend_from_slice(&node);
    }
    for n in nodes() {
        out.extend(t.child_nodes(n).iter().map(|&c| index[c as usize]));
    }
    out
}

/// The context plan (see [`PLAN_THINKING`]), items flagged with `FLAG_*`.
pub fn plan(p: &Plan) -> Vec<u32> {
    let head: [u32; PLAN_ITEMS as usize] = slots([
        (PLAN_THINKING, pos(p.thinking)),
        (PLAN_MODEL, pos(p.model)),
        (PLAN_COUNT, p.entries.len() as u32),
    ]);
    let mut out = Vec::with_capacity(head.len() + p.entries.len() * ITEM_STRIDE as usize);
    out.extend_from_slice(&head);
    for e in &p.entries {
        let flags = match e.compaction {
            Compaction::None => 0,
            Compaction::Suppressed => FLAG_SUPPRESSED,
            Compaction::RetainedTail => FLAG_RETAINED_TAIL,
        };
        let item: [u32; ITEM_STRIDE as usize] = slots([
            (ITEM_ENTRY, e.pos),
            (ITEM_EDIT, pos(e.edit)),
            (ITEM_FLAGS, flags),
        ]);
        out.extend_from_slice(&item);
    }
    out
}

/// A transcript page (`NativeSession.transcriptPage`, see [`PAGE_STATUS`]): the items of the page
/// next to `boundary`, or the status alone when the boundary is refused.
pub fn transcript_page(
    t: &Transcript,
    boundary: Option<Result<usize, BoundaryError>>,
    limit: usize,
    backward: bool,
) -> Vec<u32> {
    let anchor = match boundary {
        None => None,
        Some(Ok(item)) => Some(item),
        Some(Err(BoundaryError::NotOnBranch)) => return vec![PAGE_NOT_ON_BRANCH],
        Some(Err(BoundaryError::PastEntry)) => return vec![PAGE_PAST_ENTRY],
    };
    let items = t.page(anchor, limit, backward);
    let (leaf, leaf_items) = t.leaf().map_or((NONE, 0), |(p, n)| (p, n as u32));
    let head: [u32; PAGE_ITEMS as usize] = slots([
        (PAGE_STATUS, PAGE_OK),
        (PAGE_TOTAL, t.total() as u32),
        (
            PAGE_AFTER_COMPACTION,
            t.items_after_latest_compaction() as u32,
        ),
        (PAGE_START, items.start as u32),
        (PAGE_COUNT, items.len() as u32),
        (PAGE_LEAF, leaf),
        (PAGE_LEAF_ITEMS, leaf_items),
    ]);
    let mut out = Vec::with_capacity(head.len() + items.len() * PAGE_ITEM_STRIDE as usize);
    out.extend_from_slice(&head);
    for item in items {
        let (pos, within) = t.locate(item);
        let slot: [u32; PAGE_ITEM_STRIDE as usize] =
            slots([(PAGE_ITEM_ENTRY, pos), (PAGE_ITEM_WITHIN, within as u32)]);
        out.extend_from_slice(&slot);
    }
    out
}

/// A listing summary's fields as one JSON text: `{path, id?, cwd, name?, parentSessionPath?,
/// created?, modified?, messageCount}` (values as the file states them), and when the core could
/// not decide `modified` (a date only JavaScript's `Date` reads, see `SummaryInfo::modified`)
/// instead of it the ingredients of the rule: `{…, act?, actPending, mtimeMs, …}`; with
/// `elsewhere`, a last member `"elsewhere":true`: a `list` of a shared directory leaves the
/// session out (it is of another cwd).
pub fn summary_info(s: &SummaryInfo, elsewhere: bool) -> String {
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
    if elsewhere {
        out.push_str(",\"elsewhere\":true");
    }
    out.push('}');
    out
}
