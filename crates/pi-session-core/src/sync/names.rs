//! The copies file-sync tools leave when both sides changed a file: Syncthing's
//! `x.sync-conflict-20261203-123456-ABCDEF.jsonl`, Dropbox's `x (conflict).jsonl` and
//! `x (ana's conflicted copy 2026-12-03).jsonl`. Each names the file it is a copy of.

/// The file name a conflict copy was made of (`x.jsonl`), or `None` for an ordinary name.
pub fn conflict_base(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".jsonl")?;
    if let Some(i) = stem.find(".sync-conflict-") {
        return (i > 0).then(|| format!("{}.jsonl", &stem[..i]));
    }
    let inner_start = stem.rfind(" (")?;
    let inner = stem[inner_start + 2..].strip_suffix(')')?;
    (inner_start > 0 && inner.to_ascii_lowercase().contains("conflict"))
        .then(|| format!("{}.jsonl", &stem[..inner_start]))
}

#[cfg(test)]
mod tests {
    use super::conflict_base;

    #[test]
    fn syncthing_and_dropbox_copies_name_their_original() {
        let x = Some("2026_abc.jsonl".to_owned());
        assert_eq!(
            conflict_base("2026_abc.sync-conflict-20261203-123456-ABCDEF.jsonl"),
            x
        );
        assert_eq!(conflict_base("2026_abc (conflict).jsonl"), x);
        assert_eq!(
            conflict_base("2026_abc (ana's conflicted copy 2026-12-03).jsonl"),
            x
        );
    }

    #[test]
    fn ordinary_names_are_no_copies() {
        assert_eq!(conflict_base("2026_abc.jsonl"), None);
        assert_eq!(conflict_base("notes (draft).jsonl"), None);
        assert_eq!(conflict_base("x.sync-conflict-1.json"), None);
    }
}
