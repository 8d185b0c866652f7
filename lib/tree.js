"use strict";
// getTree: the core computes the tree's shape (crates/pi-session-core/src/tree.rs `tree_plan`);
// this module decodes it, in this one function, into the reference's nodes
// `{ entry, children, label, labelTimestamp }` over the session's own entry objects.
//
// The wire format (a Uint32Array; NONE for "no record"):
//   [rootCount, rootPos × rootCount, nodeCount, node × nodeCount]
//   node: [entryPos, labelPos, sortChildren, childCount, childPos × childCount]
// sortChildren 1: the children are ordered here by timestamp (as the reference sorts them).
const { NONE } = require("./wire.js");

const NODE_ENTRY = 0;
const NODE_LABEL = 1;
const NODE_SORT = 2;
const NODE_CHILD_COUNT = 3;
const NODE_CHILDREN = 4;

/** @typedef {{ entry: any, children: TreeNode[], label: unknown, labelTimestamp: unknown }} TreeNode */

/**
 * The roots of the tree `plan` describes.
 * @param {Uint32Array} plan
 * @param {InstanceType<typeof import("./session-state.js").SessionState>} s
 * @returns {TreeNode[]}
 */
function decodeTree(plan, s) {
  let i = 0;
  const rootCount = plan[i++];
  const rootAt = i;
  i += rootCount;
  const nodeCount = plan[i++];
  const nodeAt = i;
  /** The offset of the node after the one at `j`. @param {number} j */
  const next = (j) => j + NODE_CHILDREN + plan[j + NODE_CHILD_COUNT];
  // First pass: which records become nodes (and which label records they show), parsed at once.
  const want = new Uint32Array(nodeCount * 2);
  let w = 0;
  for (let k = 0, j = nodeAt; k < nodeCount; k++, j = next(j)) {
    want[w++] = plan[j + NODE_ENTRY];
    if (plan[j + NODE_LABEL] !== NONE) want[w++] = plan[j + NODE_LABEL];
  }
  s.materialize(want, w);
  const objs = s.objs;
  /** @type {TreeNode[]} */
  const nodeAtPos = new Array(s.n.recordCount());
  for (let k = 0, j = nodeAt; k < nodeCount; k++, j = next(j)) {
    const labelEntry = plan[j + NODE_LABEL] === NONE ? undefined : objs[plan[j + NODE_LABEL]];
    nodeAtPos[plan[j + NODE_ENTRY]] = {
      entry: objs[plan[j + NODE_ENTRY]],
      children: /** @type {any} */ (null),
      label: labelEntry?.label,
      labelTimestamp: labelEntry?.timestamp,
    };
  }
  // Children arrays are made at their final size (most nodes have one child): pushing into an
  // empty array would allocate room for 17 and make the garbage collector work for it.
  for (let k = 0, j = nodeAt; k < nodeCount; k++, j = next(j)) {
    const cc = plan[j + NODE_CHILD_COUNT];
    const c0 = j + NODE_CHILDREN;
    const node = nodeAtPos[plan[j + NODE_ENTRY]];
    if (cc === 0) node.children = [];
    else if (cc === 1) node.children = [nodeAtPos[plan[c0]]];
    else {
      const children = [nodeAtPos[plan[c0]], nodeAtPos[plan[c0 + 1]]];
      for (let c = 2; c < cc; c++) children.push(nodeAtPos[plan[c0 + c]]);
      if (plan[j + NODE_SORT] === 1) children.sort((a, b) => new Date(a.entry.timestamp).getTime() - new Date(b.entry.timestamp).getTime());
      node.children = children;
    }
  }
  const roots = new Array(rootCount);
  for (let r = 0; r < rootCount; r++) roots[r] = nodeAtPos[plan[rootAt + r]];
  return roots;
}

module.exports = { decodeTree };
