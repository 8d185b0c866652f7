//! Where in an entry a string value is, from the entry's type and role and the keys that lead to
//! the string; and which strings are never content (ids, signatures).

use super::kind::Place;
use super::walk::Seg;
use crate::record::{Kind as Record, Role};

/// The keys of a path, raw (`None` for an array index).
fn keys<'a>(line: &'a [u8], path: &'a [Seg]) -> impl Iterator<Item = Option<&'a [u8]>> + 'a {
    path.iter().map(move |s| match s {
        Seg::Key(r) => Some(&line[r.clone()]),
        Seg::Index(_) => None,
    })
}

/// A value that is structure or an opaque blob a provider signed, never a place for a secret
/// to be found or redacted: ids and links (changing them would change the tree), the entry's
/// type and time, and signature fields (`thinkingSignature`, `textSignature`,
/// `thoughtSignature`, …), whose bytes the provider checks when they are sent back.
pub(super) fn is_opaque(line: &[u8], path: &[Seg]) -> bool {
    let structural = path.len() == 1
        && matches!(
            keys(line, path).next().flatten(),
            Some(b"id" | b"parentId" | b"type" | b"timestamp" | b"version")
        );
    structural
        || keys(line, path).flatten().any(|k| {
            k == b"signature"
                || k.ends_with(b"Signature")
                || k == b"encrypted_content"
                || k == b"encryptedContent"
                || k == b"toolCallId"
                || k == b"targetId"
                || k == b"firstKeptEntryId"
                || k == b"fromId"
        })
}

/// The place of a string at `path` in a record of `kind` (and `role`, for a message).
pub(super) fn place(line: &[u8], kind: Record, role: &Role, path: &[Seg]) -> Place {
    let k: Vec<Option<&[u8]>> = keys(line, path).collect();
    let top = k.first().copied().flatten();
    let second = k.get(1).copied().flatten();
    let under = |name: &[u8]| k.iter().skip(2).any(|x| *x == Some(name));
    match kind {
        Record::Message if top == Some(b"message") => message(role, second, &under, &k),
        Record::CustomMessage if matches!(top, Some(b"content" | b"details")) => Place::Custom,
        Record::Custom if top == Some(b"data") => Place::Custom,
        Record::Compaction | Record::BranchSummary
            if matches!(top, Some(b"summary" | b"details")) =>
        {
            Place::Summary
        }
        _ => Place::Other,
    }
}

fn message(
    role: &Role,
    second: Option<&[u8]>,
    under: &dyn Fn(&[u8]) -> bool,
    k: &[Option<&[u8]>],
) -> Place {
    let last = k.last().copied().flatten();
    match role {
        Role::User if second == Some(b"content") => Place::User,
        Role::Assistant if second == Some(b"content") => {
            if under(b"arguments") || last == Some(b"name") {
                Place::ToolArgs
            } else if last == Some(b"thinking") {
                Place::Thinking
            } else {
                Place::Assistant
            }
        }
        Role::Assistant if second == Some(b"errorMessage") => Place::Assistant,
        Role::ToolResult if matches!(second, Some(b"content" | b"details")) => Place::ToolOutput,
        Role::Other(r) => match (&**r, second) {
            ("\"bashExecution\"", Some(b"command")) => Place::ToolArgs,
            ("\"bashExecution\"", Some(b"output")) => Place::ToolOutput,
            ("\"branchSummary\"" | "\"compactionSummary\"", Some(b"summary")) => Place::Summary,
            ("\"bashExecution\"" | "\"branchSummary\"" | "\"compactionSummary\"", _) => {
                Place::Other
            }
            (_, Some(b"content" | b"details")) => Place::Custom,
            _ => Place::Other,
        },
        _ => Place::Other,
    }
}
