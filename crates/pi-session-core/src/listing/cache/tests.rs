use super::*;

/// Fields of a summary, different for each `n`, with a value of every kind a summary holds.
fn info(n: u32) -> SummaryInfo {
    use crate::json::{self, JsStr};
    SummaryInfo {
        path: format!("/s/{n}.jsonl"),
        id: Some(json::parse(format!("\"id-{n}\"").as_bytes()).unwrap()),
        cwd: JsStr::from_str("/w \"q\""),
        name: n
            .is_multiple_of(2)
            .then(|| JsStr::from_str(&format!("name {n}"))),
        parent_session_path: None,
        created: Some(json::parse(br#""2024-01-01T00:00:00.000Z""#).unwrap()),
        activity: (!n.is_multiple_of(3)).then_some(1_704_067_200_000.5 + f64::from(n)),
        pending_times: vec![json::parse(br#"["Jan 2 2024", {"a": null}]"#).unwrap()],
        mtime_ms: 5000.25,
        message_count: u64::from(n),
    }
}

fn summary(n: u32) -> Cached {
    Some(Arc::new(FileSummary {
        info: info(n),
        first_message: format!("first \\\"{n}\\\""),
        all_text: format!("all\\n{n} caf\u{e9} \\ud800"),
    }))
}

fn stamp(n: u64) -> Stamp {
    Stamp {
        size: n,
        mtime_ns: -5 - i128::from(n),
        ctime_ns: 1_700_000_000_123_456_789,
        ino: 42 + n,
    }
}

/// The summary a hit stands for (reading stored records the way the job does).
fn resolve(
    hit: Hit,
    path: &str,
    stamp: &Stamp,
) -> Result<Option<(SummaryInfo, String, String)>, Damaged> {
    match hit {
        Hit::Fresh(c) => {
            Ok(c.map(|s| (s.info.clone(), s.first_message.clone(), s.all_text.clone())))
        }
        Hit::Stored(blocks, at) => {
            let rec = Hit::read(&blocks, &at, path, stamp)?;
            let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("UTF-8");
            Hit::line(&rec).map(|o| o.map(|(m, f, a)| (m, text(f), text(a))))
        }
    }
}

fn owned(c: &Cached) -> Option<(SummaryInfo, String, String)> {
    c.as_ref()
        .map(|s| (s.info.clone(), s.first_message.clone(), s.all_text.clone()))
}

use crate::testing::temp_dir;

fn path(n: u32) -> String {
    format!("/s/\"q\"{n}.jsonl")
}

/// Where the index says record `p` is.
fn record_at(c: &ListCache, p: &str) -> RecordAt {
    match &c.entries[p].value {
        Stored::At(at) => at.clone(),
        Stored::Fresh(_) => panic!("{p} was not loaded from the file"),
    }
}

#[test]
fn saved_entries_hit_after_a_reload_and_a_changed_record_is_damaged() {
    // long: one scenario over one cache file, each step reading what the step before saved.
    let dir = temp_dir("reload");
    let file = dir.join(FILE_NAME);
    let mut c = ListCache::load(file.clone());
    assert!(c.is_empty());
    for n in 0..3u32 {
        c.put(&path(n), stamp(u64::from(n)), summary(n));
    }
    c.put("/s/not-a-session.jsonl", stamp(9), None);
    c.save().unwrap();

    let check = |c: &mut ListCache| {
        assert_eq!(c.len(), 4);
        for n in 0..3u32 {
            assert!(
                c.get(&path(n), &stamp(u64::from(n) + 1)).is_none(),
                "other stamp"
            );
            let hit = c.get(&path(n), &stamp(u64::from(n))).expect("hit");
            assert!(
                matches!(hit, Hit::Stored(..)),
                "loaded entries are read from the file"
            );
            assert_eq!(
                resolve(hit, &path(n), &stamp(u64::from(n))),
                Ok(owned(&summary(n)))
            );
        }
        let hit = c.get("/s/not-a-session.jsonl", &stamp(9)).expect("hit");
        assert_eq!(resolve(hit, "/s/not-a-session.jsonl", &stamp(9)), Ok(None));
    };
    let mut loaded = ListCache::load(file.clone());
    check(&mut loaded);
    // Saving copies the stored records into a new file that reads back the same.
    loaded.put("/s/extra.jsonl", stamp(7), summary(7));
    loaded.save().unwrap();
    let mut again = ListCache::load(file.clone());
    assert!(again.get("/s/extra.jsonl", &stamp(7)).is_some());
    again.entries.remove("/s/extra.jsonl");
    check(&mut again);

    // A record whose bytes are not the ones the index summed (here: the index names a
    // neighbour's bytes, which parse, with this record's checksum) is damaged, not served;
    // so is a record asked for under another file's name.
    let mut c = ListCache::load(file.clone());
    let (one, two) = (record_at(&c, &path(1)), record_at(&c, &path(2)));
    let blocks = c.data.clone().unwrap();
    let swapped = RecordAt {
        record: two.record.clone(),
        ..one.clone()
    };
    assert_eq!(
        Hit::read(&blocks, &swapped, &path(1), &stamp(1)).err(),
        Some(Damaged)
    );
    assert_eq!(
        Hit::read(&blocks, &one, &path(2), &stamp(1)).err(),
        Some(Damaged)
    );
    // Saving drops a damaged record (its file is read again) and keeps the others.
    if let Some(e) = c.entries.get_mut(&path(1)) {
        e.value = Stored::At(swapped);
    }
    for n in [0u32, 1, 2] {
        c.get(&path(n), &stamp(u64::from(n))).expect("hit");
    }
    c.put("/s/extra.jsonl", stamp(7), summary(7));
    c.save().unwrap();
    let mut c = ListCache::load(file.clone());
    assert!(c.get(&path(1), &stamp(1)).is_none(), "dropped on save");
    let hit = c.get(&path(2), &stamp(2)).expect("the others are kept");
    assert_eq!(resolve(hit, &path(2), &stamp(2)), Ok(owned(&summary(2))));

    // A torn file (no trailer) or a foreign one is ignored and marked for rewriting.
    let bytes = fs::read(&file).unwrap();
    fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let c = ListCache::load(file.clone());
    assert!(c.is_empty() && c.dirty);
    fs::write(&file, b"{\"format\":\"something else\"}\n").unwrap();
    assert!(ListCache::load(file.clone()).is_empty());
    fs::write(&file, b"{\"format\":\"pi-session-list-cache/4\"}\n").unwrap();
    assert!(ListCache::load(file.clone()).is_empty(), "the old format");
    fs::remove_dir_all(&dir).unwrap();
}

/// Texts as big as a few blocks, of words drawn from a small vocabulary (as sessions are).
fn wordy(n: u32, len: usize) -> Cached {
    const WORDS: [&str; 12] = [
        "session", "entry", "the", "file", "parse", "error", "tool", "result", "of", "and",
        "write", "context",
    ];
    let mut x = n.wrapping_mul(2_654_435_761).wrapping_add(1);
    let mut all = String::with_capacity(len + 16);
    while all.len() < len {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        all.push_str(WORDS[(x % 12) as usize]);
        all.push(if x.is_multiple_of(9) { '\n' } else { ' ' });
    }
    let all = all.replace('\n', "\\n");
    Some(Arc::new(FileSummary {
        info: info(n),
        first_message: all[..200].to_owned(),
        all_text: all,
    }))
}

#[test]
fn records_are_compressed_in_blocks_and_a_damaged_block_is_read_again() {
    let dir = temp_dir("blocks");
    let file = dir.join(FILE_NAME);
    let mut c = ListCache::load(file.clone());
    let texts = (0..5u32).map(|n| wordy(n, 900_000)).collect::<Vec<_>>();
    for (n, t) in (0u32..).zip(&texts) {
        c.put(&path(n), stamp(u64::from(n)), t.clone());
    }
    c.save().unwrap();
    let text_bytes: usize = texts
        .iter()
        .flatten()
        .map(|s| s.all_text.len() + s.first_message.len())
        .sum();
    let size = fs::metadata(&file).unwrap().len() as usize;
    assert!(
        size * 4 < text_bytes,
        "cache {size} bytes for {text_bytes} bytes of text"
    );
    let c = ListCache::load(file.clone());
    let ats = (0..5u32)
        .map(|n| record_at(&c, &path(n)))
        .collect::<Vec<_>>();
    let blocks: Vec<_> = ats.iter().map(|a| a.block.clone()).collect();
    assert!(blocks[0] == blocks[1], "records share a block");
    assert!(blocks[0] != blocks[4], "and there is more than one block");
    // Records come back in the order they were put (the next run asks in that order).
    assert!(blocks.windows(2).all(|w| w[0].start <= w[1].start));

    // One byte of the first block's compressed data changed: its records are damaged (the
    // frame's checksum, else the records' own), the other block's are still served.
    let mut bytes = fs::read(&file).unwrap();
    let mid = (blocks[0].start + blocks[0].end) / 2;
    bytes[mid as usize] ^= 0x20;
    fs::write(&file, &bytes).unwrap();
    let mut c = ListCache::load(file.clone());
    for n in 0..5u32 {
        let hit = c
            .get(&path(n), &stamp(u64::from(n)))
            .expect("index names it");
        let got = resolve(hit, &path(n), &stamp(u64::from(n)));
        if blocks[n as usize] == blocks[0] {
            assert_eq!(got, Err(Damaged), "record {n}");
        } else {
            assert_eq!(got, Ok(owned(&texts[n as usize])), "record {n}");
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_first_save_makes_its_own_dir_only_in_an_agent_dir_and_removes_the_old_cache() {
    let dir = temp_dir("place");
    let agent = dir.join("agent");
    let file = file_in(&agent);
    assert!(file.starts_with(agent.join(DIR)));
    assert!(file.extension().is_none(), "not a *.jsonl file");
    // No agent dir: nothing is created.
    let mut c = ListCache::load(file.clone());
    c.put(&path(0), stamp(0), summary(0));
    c.save().unwrap();
    assert!(
        !agent.exists(),
        "the agent dir is never created for the cache"
    );
    // An agent dir with the old cache and other files: the cache's dir is made, the old
    // cache is deleted, nothing else is touched, and no *.jsonl appears in the root.
    fs::create_dir_all(agent.join("sessions")).unwrap();
    fs::write(
        agent.join(LEGACY_FILE),
        "{\"format\":\"pi-session-list-cache/4\"}\n",
    )
    .unwrap();
    fs::write(agent.join("settings.json"), "{}").unwrap();
    fs::write(agent.join("stray.jsonl"), "x\n").unwrap();
    let mut c = ListCache::load(file.clone());
    c.put(&path(0), stamp(0), summary(0));
    c.save().unwrap();
    assert!(file.is_file());
    let mut names: Vec<_> = fs::read_dir(&agent)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [DIR, "sessions", "settings.json", "stray.jsonl"]);
    // An old version that wrote its file again: gone after the next listing, even one that
    // has nothing new to save.
    fs::write(
        agent.join(LEGACY_FILE),
        "{\"format\":\"pi-session-list-cache/4\"}\n",
    )
    .unwrap();
    let mut c = ListCache::load(file.clone());
    c.get(&path(0), &stamp(0)).expect("hit");
    c.save().unwrap();
    assert!(!c.dirty && !agent.join(LEGACY_FILE).exists());
    // A cache elsewhere (not laid out by file_in) deletes nothing beside it.
    fs::write(dir.join(LEGACY_FILE), "old").unwrap();
    let mut c = ListCache::load(dir.join("other-cache"));
    c.put(&path(0), stamp(0), summary(0));
    c.save().unwrap();
    assert!(dir.join(LEGACY_FILE).exists());
    fs::remove_dir_all(&dir).unwrap();
}
