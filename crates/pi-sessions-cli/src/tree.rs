//! `tree`: every entry of a session as a tree (the shape of `getTree()`), branches drawn, labels
//! shown, the active branch highlighted, the leaf marked, long unbranched runs folded.

use std::collections::{HashMap, HashSet};

use pi_session_core::record::Kind;
use pi_session_core::tree::{tree_plan, NONE};

use crate::args::{Command, Opt, Parsed};
use crate::error::{CliResult, EXIT_OK};
use crate::loaded::{self, Loaded};
use crate::style::Style;
use crate::transcript::{self, Block, Item, Role};
use crate::{resolve, show, text, Ctx};

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

fn decode(plan: &[u32]) -> (Vec<u32>, HashMap<u32, Node>) {
    let mut i = 0;
    let roots_n = plan[i] as usize;
    i += 1;
    let roots = plan[i..i + roots_n].to_vec();
    i += roots_n;
    let n = plan[i] as usize;
    i += 1;
    let mut nodes = HashMap::with_capacity(n);
    for _ in 0..n {
        let pos = plan[i];
        let label = (plan[i + 1] != NONE).then_some(plan[i + 1]);
        let cc = plan[i + 3] as usize;
        let children = plan[i + 4..i + 4 + cc].to_vec();
        i += 4 + cc;
        nodes.insert(pos, Node { label, children });
    }
    (roots, nodes)
}

/// The tree as text.
pub fn render(ctx: &Ctx, l: &Loaded, full: bool, out: &mut String) {
    let st = ctx.style;
    let (roots, nodes) = decode(&tree_plan(&l.session));
    let branch = l.branch();
    let on_branch: HashSet<u32> = branch.iter().copied().collect();
    let leaf = branch.last().copied();
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

fn node_line(st: Style, l: &Loaded, pos: u32, active: bool, leaf: bool, room: usize) -> String {
    let item = transcript::items(l, &[pos]).remove(0);
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
                format!("⚙ {name} {}", transcript::args_line(args, 120))
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
