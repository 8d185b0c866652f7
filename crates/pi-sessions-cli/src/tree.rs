//! `tree`: every entry of a session as a tree (the shape of `getTree()`), branches drawn, labels
//! shown, the active branch highlighted, the leaf marked, long unbranched runs folded.

use std::collections::{HashMap, HashSet};

use pi_session_core::record::Kind;
use pi_session_core::tree::{self, ChildOrder};

use crate::args::{Command, Opt, Parsed};
use crate::conversation::{self, Block, Item, Role};
use crate::error::{CliResult, EXIT_OK};
use crate::loaded::{self, Loaded};
use crate::style::Style;
use crate::{catalog, resolve, show, text, Ctx};

pub const CMD: Command = Command {
    name: "tree",
    summary: "the entry tree of a session, with branches, labels and the leaf",
    usage: "<id|path> [--full]",
    description: "Draws every entry of the session (all branches, as getTree() shapes them). Entries on \
the active branch are filled (●), others hollow (○); the leaf is marked; labels appear in brackets. \
Unbranched runs longer than a few entries are folded unless --full is given.",
    opts: &[Opt {
        long: "full",
        short: None,
        value: None,
        help: "do not fold long unbranched runs",
    }],
    min_pos: 1,
    max_pos: Some(1),
    examples: &["pi-sessions tree 0193f0a0"],
};

struct Node {
    label: Option<u32>,
    children: Vec<u32>,
}

pub fn run(ctx: &mut Ctx, p: &Parsed) -> CliResult {
    let path = resolve::session(ctx.env, &p.pos[0])?;
    let l = loaded::open(&path)?;
    let mut out = String::new();
    render(ctx, &l, p.flag("full"), &mut out);
    ctx.out.write_all(out.as_bytes())?;
    Ok(EXIT_OK)
}

/// The tree of `getTree()`: roots, and per entry position its label and its children in
/// `getTree()`'s order.
fn nodes(l: &Loaded) -> (Vec<u32>, HashMap<u32, Node>) {
    let t = tree::tree(&l.session);
    let mut nodes = HashMap::with_capacity(t.nodes.len());
    for n in &t.nodes {
        let mut children = t.children(n);
        if n.order() == ChildOrder::ByDate {
            sort_by_date(l, &mut children);
        }
        nodes.insert(
            n.pos,
            Node {
                label: n.label(),
                children,
            },
        );
    }
    (t.roots(), nodes)
}

/// The children of a [`ChildOrder::ByDate`] node in `getTree()`'s order: the reference sorts them
/// with `new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime()`, a comparator that
/// calls two entries equal when either date is invalid, so the order depends on the algorithm.
/// This is V8's for arrays shorter than 64 (a run, then binary insertion), which also gives the
/// stable order for any longer array whose dates are all valid.
fn sort_by_date(l: &Loaded, children: &mut [u32]) {
    if children.len() < 2 {
        return;
    }
    let ms: HashMap<u32, Option<f64>> = children
        .iter()
        .map(|&p| (p, l.value(p).get("timestamp").and_then(catalog::date_ms)))
        .collect();
    // The sign of the reference's comparator (NaN counts as 0).
    let cmp = |a: u32, b: u32| match (ms[&a], ms[&b]) {
        (Some(x), Some(y)) if x < y => -1,
        (Some(x), Some(y)) if x > y => 1,
        _ => 0,
    };
    // The leading run: ascending (never descending) or strictly descending, then reversed.
    let descending = cmp(children[1], children[0]) < 0;
    let mut run = 2;
    while run < children.len() {
        let order = cmp(children[run], children[run - 1]);
        if (descending && order >= 0) || (!descending && order < 0) {
            break;
        }
        run += 1;
    }
    if descending {
        children[..run].reverse();
    }
    // Binary insertion of the rest: after every element that is not greater.
    for start in run..children.len() {
        let pivot = children[start];
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + (right - left) / 2;
            if cmp(pivot, children[mid]) < 0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        children.copy_within(left..start, left + 1);
        children[left] = pivot;
    }
}

/// The tree as text.
pub fn render(ctx: &Ctx, l: &Loaded, full: bool, out: &mut String) {
    let st = ctx.style;
    let (roots, nodes) = nodes(l);
    let branch = l.branch();
    let on_branch: HashSet<u32> = branch.iter().copied().collect();
    let leaf = branch.last().copied();
    heading(st, l, &nodes, leaf, out);
    if roots.is_empty() {
        out.push_str(&st.dim("(no entries)\n"));
        return;
    }
    let width = ctx.env.width();
    let kids = |p: u32| nodes.get(&p).map(|n| n.children.as_slice()).unwrap_or(&[]);
    let mut seen: HashSet<u32> = HashSet::new();
    let mut stack: Vec<(u32, String, String)> = roots
        .iter()
        .rev()
        .map(|&r| (r, String::new(), String::new()))
        .collect();
    while let Some((start, lead, cont)) = stack.pop() {
        let mut chain = vec![start];
        seen.insert(start);
        while let [only] = kids(*chain.last().expect("non-empty")) {
            if !seen.insert(*only) {
                break;
            }
            chain.push(*only);
        }
        let important = |i: usize| {
            let p = chain[i];
            let k = l.session.meta(p).kind;
            full || i == 0
                || i + 2 >= chain.len()
                || Some(p) == leaf
                || nodes.get(&p).is_some_and(|n| n.label.is_some())
                || matches!(k, Kind::Compaction | Kind::BranchSummary)
        };
        let mut i = 0;
        while i < chain.len() {
            if !important(i) {
                let run = (i..chain.len()).take_while(|&j| !important(j)).count();
                if run >= 3 {
                    out.push_str(&cont);
                    out.push_str(&st.dim(&format!("┆ … {run} more entries\n")));
                    i += run;
                    continue;
                }
            }
            let p = chain[i];
            let prefix = if i == 0 { &lead } else { &cont };
            out.push_str(prefix);
            let room = width.saturating_sub(text::width(prefix));
            out.push_str(&node_line(
                st,
                l,
                p,
                on_branch.contains(&p),
                Some(p) == leaf,
                room,
            ));
            out.push('\n');
            i += 1;
        }
        let last = *chain.last().expect("non-empty");
        let children = kids(last);
        for (k, &c) in children.iter().enumerate().rev() {
            if seen.contains(&c) {
                continue;
            }
            let end = k + 1 == children.len();
            stack.push((
                c,
                format!("{cont}{}", if end { "└─ " } else { "├─ " }),
                format!("{cont}{}", if end { "   " } else { "│  " }),
            ));
        }
    }
}

/// The session's title, its counts (entries, branch tips, the leaf) and its file.
fn heading(st: Style, l: &Loaded, nodes: &HashMap<u32, Node>, leaf: Option<u32>, out: &mut String) {
    let tips = nodes.values().filter(|n| n.children.is_empty()).count();
    out.push_str(&st.bold(&text::sanitize(&show::title(l))));
    out.push('\n');
    out.push_str(&st.dim(&format!(
        "{} entries · {} branch tip{}{}",
        nodes.len(),
        tips,
        if tips == 1 { "" } else { "s" },
        leaf.map(|p| format!(" · leaf {}", l.id_text(p)))
            .unwrap_or_default(),
    )));
    out.push('\n');
    out.push_str(&st.dim(&l.path.display().to_string()));
    out.push('\n');
}

fn node_line(st: Style, l: &Loaded, pos: u32, active: bool, leaf: bool, room: usize) -> String {
    let item = conversation::items(l, &[pos]).remove(0);
    let id = item.id.clone();
    let (who, body) = summary(&item);
    let mut tail = String::new();
    if let Some(lbl) = &item.label {
        tail.push_str(&format!(" [{}]", text::sanitize(lbl)));
    }
    if leaf {
        tail.push_str(" ◀ leaf");
    }
    let fixed = 2 + text::width(&id) + 1 + text::width(&who) + 2 + text::width(&tail);
    let body = text::truncate(&text::sanitize(&body), room.saturating_sub(fixed).max(8));
    let marker = if active { "●" } else { "○" };
    let role_paint = |s: &str| match (item.role, active) {
        (_, false) => st.dim(s),
        (Role::User, _) => st.green(s),
        (Role::Assistant, _) => st.cyan(s),
        (Role::Tool, _) => st.yellow(s),
        (Role::Summary, _) => st.magenta(s),
        (Role::Custom, _) => st.blue(s),
        (Role::System | Role::Meta, _) => st.dim(s),
    };
    let mut line = format!(
        "{} {} {}",
        role_paint(marker),
        st.gray(&id),
        role_paint(&who)
    );
    if !body.is_empty() {
        let b = if active && item.role != Role::Meta {
            body
        } else {
            st.dim(&body)
        };
        line.push_str(&format!("  {b}"));
    }
    if let Some(lbl) = &item.label {
        line.push_str(&format!(
            " {}",
            st.yellow(&format!("[{}]", text::sanitize(lbl)))
        ));
    }
    if leaf {
        line.push_str(&format!(" {}", st.bold_yellow("◀ leaf")));
    }
    line
}

/// `(who, what)` for one tree line.
fn summary(item: &Item) -> (String, String) {
    if item.role == Role::Meta {
        return (item.title.clone(), String::new());
    }
    let who = match (&item.role, &item.detail) {
        (Role::Tool, Some(d)) => format!("{} {}", item.title, d),
        _ => item.title.clone(),
    };
    let mut what = String::new();
    for b in &item.blocks {
        let part = match b {
            Block::Text(t) if !t.trim().is_empty() => text::preview(t, 200),
            Block::ToolCall { name, args } => {
                format!("⚙ {name} {}", conversation::args_line(args, 120))
            }
            Block::Output { text: t, .. } if !t.trim().is_empty() => text::preview(t, 200),
            _ => continue,
        };
        if !what.is_empty() {
            what.push_str(" · ");
        }
        what.push_str(&part);
        if what.len() > 200 {
            break;
        }
    }
    (who, what)
}
