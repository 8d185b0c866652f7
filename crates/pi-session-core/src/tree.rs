//! The tree shape derived from the records: `getTree()`.

use crate::store::View;

/// How a node's children are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildOrder {
    /// Sorted by timestamp here: every child has a strict ISO timestamp.
    Sorted,
    /// In file order: some child's timestamp is not a strict ISO string, so the children must be
    /// sorted by `new Date(entry.timestamp).getTime()` with JavaScript's `Date` semantics (the
    /// reference's own comparator), which only JavaScript has exactly.
    ByDate,
}

/// One node of [`Tree`]: an entry, the label in effect on it, and its children (16 bytes: a
/// tree of a big session has tens of thousands of nodes, built on every `getTree()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// Position of the record that owns the node's id (the last one with that id, as the
    /// reference's Map keeps).
    pub pos: u32,
    /// The label record's position, or `u32::MAX`.
    label: u32,
    start: u32,
    /// The child count, shifted left by one; the low bit set for [`ChildOrder::ByDate`].
    len_order: u32,
}

impl Node {
    /// Position of the label record in effect on the node, if any.
    pub fn label(&self) -> Option<u32> {
        (self.label != u32::MAX).then_some(self.label)
    }

    /// Whether [`Tree::children`] is in final order.
    pub fn order(&self) -> ChildOrder {
        if self.len_order & 1 == 1 {
            ChildOrder::ByDate
        } else {
            ChildOrder::Sorted
        }
    }

    /// How many children the node has.
    pub fn child_count(&self) -> usize {
        (self.len_order >> 1) as usize
    }
}

/// `getTree()`'s shape: one node per id (in index order), the roots and each node's children as
/// indexes into `nodes` (a node's record position is its `pos`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    pub nodes: Vec<Node>,
    root_nodes: Vec<u32>,
    child_nodes: Vec<u32>,
}

impl Tree {
    /// Positions of the root entries, in the reference's order.
    pub fn roots(&self) -> Vec<u32> {
        self.positions(&self.root_nodes)
    }

    /// Positions of `node`'s children (final order when `node.order` is [`ChildOrder::Sorted`]).
    pub fn children(&self, node: &Node) -> Vec<u32> {
        self.positions(self.child_nodes(node))
    }

    /// Positions of the children of every node, node after node (in `nodes` order).
    pub fn all_children(&self) -> Vec<u32> {
        self.positions(&self.child_nodes)
    }

    fn positions(&self, nodes: &[u32]) -> Vec<u32> {
        nodes.iter().map(|&k| self.nodes[k as usize].pos).collect()
    }

    /// Indexes into `nodes` of the roots.
    pub fn root_nodes(&self) -> &[u32] {
        &self.root_nodes
    }

    /// Indexes into `nodes` of `node`'s children (in the order of [`Tree::children`]).
    pub fn child_nodes(&self, node: &Node) -> &[u32] {
        let start = node.start as usize;
        &self.child_nodes[start..start + node.child_count()]
    }

    /// Every node reachable from the roots, once, each after all of its children (a node with
    /// two parents, as entries sharing an id have, comes before both): an order in which a
    /// node's children are always made before it.
    pub fn children_first(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut seen = vec![false; self.nodes.len()];
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for &root in &self.root_nodes {
            if std::mem::replace(&mut seen[root as usize], true) {
                continue;
            }
            stack.push((root, 0));
            while let Some(top) = stack.last_mut() {
                let (node, next) = *top;
                let kids = self.child_nodes(&self.nodes[node as usize]);
                match kids.get(next) {
                    Some(&kid) => {
                        top.1 += 1;
                        if !std::mem::replace(&mut seen[kid as usize], true) {
                            stack.push((kid, 0));
                        }
                    }
                    None => {
                        order.push(node);
                        stack.pop();
                    }
                }
            }
        }
        order
    }
}

/// `getTree()`: the tree of every entry. Children are sorted by timestamp here when every child
/// has a strict ISO timestamp; otherwise the node says [`ChildOrder::ByDate`].
pub fn tree<'a>(s: impl Into<View<'a>>) -> Tree {
    let s: View<'a> = s.into();
    let entries = s.entry_positions();
    let links = parent_links(s, &entries);
    let mut edges = Edges::lay_out(s, &entries, &links);
    // Without a backward edge there is no cycle: nothing to cut, and every node hangs off a root.
    let cut = if links.forward_only {
        vec![false; edges.flat.len()]
    } else {
        cut_cycles(s, &entries, &mut edges)
    };
    build_tree(s, &edges, &cut)
}

/// The node of an entry: its index slot (the reference's nodeMap keyed by id), whose entry is
/// the slot's record.
fn node_slot(s: View<'_>, p: u32) -> usize {
    s.record_slot(p).expect("entries are indexed") as usize
}

/// Each entry's parent node, and how many children each node has.
struct ParentLinks {
    /// By entry (as in `entry_positions`): the parent's node, `None` for a root.
    parent_of: Vec<Option<u32>>,
    child_count: Vec<u32>,
    /// Every edge goes from a node to one whose record comes later in the file (as in any file
    /// written by appends): then there is no cycle to look for.
    forward_only: bool,
}

fn parent_links(s: View<'_>, entries: &[u32]) -> ParentLinks {
    let mut links = ParentLinks {
        parent_of: vec![None; entries.len()],
        child_count: vec![0u32; s.slot_count()],
        forward_only: true,
    };
    for (i, &p) in entries.iter().enumerate() {
        let m = s.meta(p);
        if &*m.parent == "null" {
            continue;
        }
        let parent = s.cached_parent_slot(p).or_else(|| s.slot_of_key(&m.parent));
        if let Some(ps) = parent {
            let own = node_slot(s, p);
            // A parentId equal to the entry's own id (same key, so same slot) makes a root.
            if ps as usize == own {
                continue;
            }
            links.parent_of[i] = Some(ps);
            links.child_count[ps as usize] += 1;
            links.forward_only &= s.slot_pos(ps) < s.slot_pos(own as u32);
        }
    }
    links
}

/// Children lists laid out back to back (insertion order kept), with offsets per node, and the
/// roots.
struct Edges {
    /// Node `k`'s children are `flat[offset[k]..offset[k + 1]]`.
    offset: Vec<usize>,
    flat: Vec<usize>,
    roots: Vec<usize>,
}

impl Edges {
    fn lay_out(s: View<'_>, entries: &[u32], links: &ParentLinks) -> Edges {
        let n = s.slot_count();
        let mut offset = vec![0usize; n + 1];
        for k in 0..n {
            offset[k + 1] = offset[k] + links.child_count[k] as usize;
        }
        let mut fill = offset.clone();
        let mut flat = vec![0usize; offset[n]];
        let mut roots: Vec<usize> = Vec::new();
        for (i, &p) in entries.iter().enumerate() {
            match links.parent_of[i] {
                None => roots.push(node_slot(s, p)),
                Some(ps) => {
                    let ps = ps as usize;
                    flat[fill[ps]] = node_slot(s, p);
                    fill[ps] += 1;
                }
            }
        }
        Edges {
            offset,
            flat,
            roots,
        }
    }
}

/// A tree must be finite. Walking from the roots, an edge back to a node still on the current
/// path (a cycle closed through a duplicate id) is cut. Entries caught in a parentId cycle hang
/// off no root (the reference drops them, or loops): the first such entry of each cycle becomes
/// a root, and the walk from it cuts the edge that closes its cycle. Every entry appears.
/// Returns which edges (indices into `flat`) are cut.
fn cut_cycles(s: View<'_>, entries: &[u32], edges: &mut Edges) -> Vec<bool> {
    let mut cut = vec![false; edges.flat.len()];
    let mut color = vec![0u8; s.slot_count()];
    let (offset, flat) = (&edges.offset, &edges.flat);
    walk_cutting_cycles(&edges.roots, offset, flat, &mut cut, &mut color);
    for &p in entries {
        let node = node_slot(s, p);
        if color[node] != 0 || s.slot_pos(node as u32) != p {
            continue;
        }
        edges.roots.push(node);
        walk_cutting_cycles(&[node], offset, flat, &mut cut, &mut color);
    }
    cut
}

/// The nodes with their labels and children (sorted by timestamp when every child has one).
fn build_tree(s: View<'_>, edges: &Edges, cut: &[bool]) -> Tree {
    let n = s.slot_count();
    let (offset, flat) = (&edges.offset, &edges.flat);
    // Labels by node.
    let mut label_of = vec![None; n];
    for (target, pos) in s.labels() {
        if let Some(slot) = s.slot_of_key(target) {
            label_of[slot as usize] = Some(pos);
        }
    }
    let ts = |node: usize| s.meta(s.slot_pos(node as u32)).ts_ms;
    let mut tree = Tree {
        nodes: Vec::with_capacity(n),
        root_nodes: edges.roots.iter().map(|&r| r as u32).collect(),
        child_nodes: Vec::with_capacity(flat.len()),
    };
    let mut kids: Vec<usize> = Vec::new();
    for node in 0..n {
        kids.clear();
        kids.extend(
            (offset[node]..offset[node + 1])
                .filter(|&k| !cut[k])
                .map(|k| flat[k]),
        );
        let by_date = if kids.iter().all(|&k| !ts(k).is_nan()) {
            kids.sort_by(|&a, &b| ts(a).total_cmp(&ts(b)));
            0
        } else {
            1
        };
        let start = tree.child_nodes.len() as u32;
        tree.child_nodes.extend(kids.iter().map(|&k| k as u32));
        tree.nodes.push(Node {
            pos: s.slot_pos(node as u32),
            label: label_of[node].unwrap_or(u32::MAX),
            start,
            len_order: (kids.len() as u32) << 1 | by_date,
        });
    }
    tree
}

/// Iterative depth-first walk: marks nodes (1 = on the current path, 2 = done) and cuts edges to a
/// node on the current path.
fn walk_cutting_cycles(
    from: &[usize],
    offset: &[usize],
    flat: &[usize],
    cut: &mut [bool],
    color: &mut [u8],
) {
    for &root in from {
        if color[root] != 0 {
            continue;
        }
        color[root] = 1;
        let mut stack: Vec<(usize, usize)> = vec![(root, offset[root])];
        while let Some(top) = stack.last_mut() {
            let (node, edge) = *top;
            if edge == offset[node + 1] {
                color[node] = 2;
                stack.pop();
                continue;
            }
            top.1 += 1;
            if cut[edge] {
                continue;
            }
            let child = flat[edge];
            match color[child] {
                0 => {
                    color[child] = 1;
                    stack.push((child, offset[child]));
                }
                1 => cut[edge] = true,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::fixture::Fixture;

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    fn entry(id: &str, parent: Option<&str>, second: u32) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"custom","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:{second:02}.000Z","customType":"t"}}"#
        )
    }

    fn fixture(lines: &[String]) -> Fixture {
        Fixture::new(&lines.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// `(pos, label, order, children)` per node, for comparing whole trees.
    fn shape(t: &Tree) -> Vec<(u32, Option<u32>, ChildOrder, Vec<u32>)> {
        t.nodes
            .iter()
            .map(|n| (n.pos, n.label(), n.order(), t.children(n)))
            .collect()
    }

    #[test]
    fn a_tree_with_a_branch_lists_children_by_timestamp_with_their_labels() {
        // a ─┬─ b (t=3) ── d
        //    └─ c (t=2, labelled)
        let f = fixture(&[
            H.to_owned(),
            entry("a", None, 1),
            entry("b", Some("a"), 3),
            entry("c", Some("a"), 2),
            entry("d", Some("b"), 4),
            r#"{"type":"label","id":"l","parentId":"d","timestamp":"2025-01-01T00:00:05.000Z","targetId":"c","label":"x"}"#.to_owned(),
        ]);
        let (a, b, c, d, l) = (f.pos("a"), f.pos("b"), f.pos("c"), f.pos("d"), f.pos("l"));
        let t = tree(f.view());
        assert_eq!(t.roots(), [a]);
        use ChildOrder::Sorted;
        assert_eq!(
            shape(&t),
            [
                (a, None, Sorted, vec![c, b]), // c is older than b: it comes first
                (b, None, Sorted, vec![d]),
                (c, Some(l), Sorted, vec![]),
                (d, None, Sorted, vec![l]),
                (l, None, Sorted, vec![]),
            ]
        );
        assert_eq!(t.all_children(), [c, b, d, l]);
    }

    #[test]
    fn children_first_lists_every_node_once_after_its_children() {
        // Branches, a parentId cycle (cut), and an id written twice (its node has two parents).
        let f = fixture(&[
            H.to_owned(),
            entry("a", None, 1),
            entry("b", Some("a"), 2),
            entry("c", Some("a"), 3),
            entry("d", Some("b"), 4),
            entry("x", Some("y"), 5),
            entry("y", Some("x"), 6),
            entry("d", Some("c"), 7),
            entry("e", Some("d"), 8),
        ]);
        let t = tree(f.view());
        let order = t.children_first();
        let mut at = vec![usize::MAX; t.nodes.len()];
        for (i, &k) in order.iter().enumerate() {
            assert_eq!(at[k as usize], usize::MAX, "node {k} listed twice");
            at[k as usize] = i;
        }
        // Every node of the tree (all are reachable from a root) is listed.
        assert_eq!(order.len(), t.nodes.len());
        for (k, node) in t.nodes.iter().enumerate() {
            for &kid in t.child_nodes(node) {
                assert!(
                    at[kid as usize] < at[k],
                    "child {kid} before its parent {k}"
                );
            }
            // Child indexes and child positions say the same.
            let positions: Vec<u32> = t
                .child_nodes(node)
                .iter()
                .map(|&c| t.nodes[c as usize].pos)
                .collect();
            assert_eq!(positions, t.children(node));
        }
        let roots: Vec<u32> = t
            .root_nodes()
            .iter()
            .map(|&r| t.nodes[r as usize].pos)
            .collect();
        assert_eq!(roots, t.roots());
    }

    #[test]
    fn children_without_a_strict_timestamp_keep_their_order_for_js_to_sort() {
        let f = fixture(&[
            H.to_owned(),
            entry("a", None, 1),
            entry("b", Some("a"), 3),
            r#"{"type":"custom","id":"c","parentId":"a","timestamp":"yesterday","customType":"t"}"#
                .to_owned(),
        ]);
        let t = tree(f.view());
        let (a, b, c) = (f.pos("a"), f.pos("b"), f.pos("c"));
        assert_eq!(shape(&t)[0], (a, None, ChildOrder::ByDate, vec![b, c]));
    }

    #[test]
    fn entries_caught_in_a_parent_id_cycle_still_appear_once() {
        let f = fixture(&[
            H.to_owned(),
            entry("r", None, 1),
            entry("x", Some("y"), 2),
            entry("y", Some("x"), 3),
        ]);
        let t = tree(f.view());
        let (r, x, y) = (f.pos("r"), f.pos("x"), f.pos("y"));
        // Roots: r, then x (the first entry of the cycle); the edge back to x is cut.
        assert_eq!(t.roots(), [r, x]);
        use ChildOrder::Sorted;
        assert_eq!(
            shape(&t),
            [
                (r, None, Sorted, vec![]),
                (x, None, Sorted, vec![y]),
                (y, None, Sorted, vec![]),
            ]
        );
    }
}
