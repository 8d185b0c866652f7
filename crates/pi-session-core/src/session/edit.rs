//! `appendContextEdit`'s checks, in the reference's order and with its messages:
//!
//! 1. the replacement is `null` or an object with `content` a string or an array
//!    ([`check_replacement`], `INVALID_REPLACEMENT`);
//! 2. the target is in the session (`ENTRY_NOT_FOUND`) and
//! 3. on the active branch, the plain path from the leaf ([`Session::context_edit_target`],
//!    `NOT_ON_ACTIVE_BRANCH`);
//! 4. the target contributes editable model content: a `custom_message`, or a `message` whose
//!    role is `user`, `assistant` or `toolResult` ([`context_edit_wraps_text`], `NOT_EDITABLE`),
//!    which also says whether string content is stored as one text block.
//!
//! The checks take what JavaScript reads off its values (a [`Replacement`], the target's `type`
//! and role), because the reference reads them off live objects: `in` sees inherited and
//! `undefined` members, a getter runs, a message that is no object throws; JSON carries none of it.

use super::Session;
use crate::error::{Error, ErrorCode, Result};
use crate::store::View;

/// What the checks see of a replacement value, as the reference's test reads it: `null`; not an
/// object; an object without a `content` member (own or inherited); one whose `content` is a
/// string, an array, or something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    Null,
    NotObject,
    NoContent,
    Text,
    Blocks,
    OtherContent,
}

/// Check 1: `INVALID_REPLACEMENT` unless the replacement is `null` or has string/array content.
pub fn check_replacement(replacement: Replacement) -> Result<()> {
    match replacement {
        Replacement::Null | Replacement::Text | Replacement::Blocks => Ok(()),
        Replacement::NotObject | Replacement::NoContent | Replacement::OtherContent => {
            Err(Error::new(
                ErrorCode::InvalidReplacement,
                "Context edit replacement must be null or contain string/array content",
            ))
        }
    }
}

/// Checks 2 and 3 over a view: the target's position. `key` is `None` for an id value that can
/// be no key (it is in no session); `display` is the id as the messages show it.
pub fn context_edit_target(v: View<'_>, key: Option<&str>, display: &str) -> Result<u32> {
    let Some(pos) = key.and_then(|k| v.lookup(k)) else {
        return Err(Error::entry_not_found(display));
    };
    let key = key.expect("found by key");
    // `getBranch().some((entry) => entry.id === targetId)`: keys compare as ids do.
    let on_branch = v
        .branch_from(v.leaf_key())
        .iter()
        .any(|&p| &*v.meta(p).id == key);
    if !on_branch {
        return Err(Error::new(
            ErrorCode::NotOnActiveBranch,
            format!("Entry {display} is not on the active branch"),
        ));
    }
    Ok(pos)
}

/// Check 4, given the target's `type` and, for a message, its `message.role` (`None`: not a
/// string, which equals none of the names). `Ok(true)`: the replacement's string content is stored
/// as `{ content: [{ type: "text", text }] }` (an assistant or tool result target), else as given.
pub fn context_edit_wraps_text(
    display: &str,
    entry_type: Option<&str>,
    role: Option<&str>,
    replacement: Replacement,
) -> Result<bool> {
    let editable = match entry_type {
        Some("custom_message") => true,
        Some("message") => matches!(role, Some("user" | "assistant" | "toolResult")),
        _ => false,
    };
    if !editable {
        return Err(Error::new(
            ErrorCode::NotEditable,
            format!("Entry {display} does not contribute editable model content"),
        ));
    }
    Ok(replacement == Replacement::Text
        && entry_type == Some("message")
        && matches!(role, Some("assistant" | "toolResult")))
}

impl Session {
    /// Checks 2 and 3 of `appendContextEdit` (see [`context_edit_target`]).
    pub fn context_edit_target(&self, key: Option<&str>, display: &str) -> Result<u32> {
        context_edit_target(self.view(), key, display)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::string_key;
    use crate::store::fixture::Fixture;

    const H: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

    /// a → b (the leaf), and c off the branch under a.
    fn session() -> Fixture {
        Fixture::new(&[
            H,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","id":"c","parentId":"a","message":{"role":"user","content":"y"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":[]}}"#,
        ])
    }

    fn code(r: Result<impl std::fmt::Debug>) -> (&'static str, String) {
        let e = r.expect_err("an error");
        (e.code.as_str(), e.message)
    }

    #[test]
    fn a_replacement_must_be_null_or_carry_string_or_array_content() {
        for ok in [Replacement::Null, Replacement::Text, Replacement::Blocks] {
            assert!(check_replacement(ok).is_ok(), "{ok:?}");
        }
        for bad in [
            Replacement::NotObject,
            Replacement::NoContent,
            Replacement::OtherContent,
        ] {
            assert_eq!(
                code(check_replacement(bad)),
                (
                    "INVALID_REPLACEMENT",
                    "Context edit replacement must be null or contain string/array content".into()
                )
            );
        }
    }

    #[test]
    fn an_unknown_or_unkeyable_target_is_not_found() {
        let f = session();
        assert_eq!(
            code(context_edit_target(f.view(), Some(&string_key("zz")), "zz")),
            ("ENTRY_NOT_FOUND", "Entry zz not found".into())
        );
        assert_eq!(
            code(context_edit_target(f.view(), None, "[object Object]")),
            ("ENTRY_NOT_FOUND", "Entry [object Object] not found".into())
        );
    }

    #[test]
    fn a_target_off_the_active_branch_is_refused() {
        let f = session();
        assert_eq!(
            code(context_edit_target(f.view(), Some(&string_key("c")), "c")),
            (
                "NOT_ON_ACTIVE_BRANCH",
                "Entry c is not on the active branch".into()
            )
        );
    }

    #[test]
    fn a_target_on_the_active_branch_gives_its_position() {
        let f = session();
        for id in ["a", "b"] {
            assert_eq!(
                context_edit_target(f.view(), Some(&string_key(id)), id).unwrap(),
                f.pos(id)
            );
        }
    }

    #[test]
    fn only_model_visible_content_is_editable() {
        for (ty, role) in [
            (Some("message"), Some("system")),
            (Some("message"), None),
            (Some("message"), Some("custom")),
            (Some("compaction"), None),
            (Some("label"), Some("user")),
            (None, None),
        ] {
            assert_eq!(
                code(context_edit_wraps_text("t", ty, role, Replacement::Null)),
                (
                    "NOT_EDITABLE",
                    "Entry t does not contribute editable model content".into()
                ),
                "{ty:?} {role:?}"
            );
        }
    }

    #[test]
    fn string_content_becomes_a_text_block_for_assistant_and_tool_results_only() {
        let wraps = |ty, role, r| context_edit_wraps_text("t", Some(ty), role, r).unwrap();
        assert!(wraps("message", Some("assistant"), Replacement::Text));
        assert!(wraps("message", Some("toolResult"), Replacement::Text));
        assert!(!wraps("message", Some("user"), Replacement::Text));
        assert!(!wraps(
            "custom_message",
            Some("assistant"),
            Replacement::Text
        ));
        assert!(!wraps("message", Some("assistant"), Replacement::Blocks));
        assert!(!wraps("message", Some("assistant"), Replacement::Null));
    }
}
