//! The record store under a session: the records and where their lines are (`records`), the
//! id index with labels and leaf (`index`), and the read-only [`View`] of both that queries and
//! walks take. It knows nothing of files beyond reading a line back; the session above it owns
//! the persistence rules.

pub(crate) mod index;
pub(crate) mod records;
mod view;

pub use index::Leaf;
pub use records::Rec;
pub use view::View;

/// Records and an index built from JSON lines, for the unit tests of the queries over a [`View`].
#[cfg(test)]
pub(crate) mod fixture {
    use super::index::Ids;
    use super::records::{Rec, Records};
    use super::View;
    use crate::file::LoadedFile;
    use crate::text::Text;

    pub(crate) struct Fixture {
        records: Records,
        ids: Ids,
    }

    impl Fixture {
        /// The records of `lines` (one JSON text each; lines that are no record are skipped), indexed.
        pub(crate) fn new(lines: &[&str]) -> Fixture {
            let loaded = LoadedFile::parse(lines.join("\n").into_bytes());
            let mut records = Records::default();
            let ranges: Vec<_> = loaded
                .lines
                .iter()
                .filter_map(|(s, e, m)| m.clone().map(|m| (*s, *e, m)))
                .collect();
            records.text = Text::loaded(loaded.text);
            for (s, e, meta) in ranges {
                records.push(Rec::in_text(s, e, meta));
            }
            let mut ids = Ids::default();
            ids.unresolved(records.len());
            ids.build(&records.recs);
            Fixture { records, ids }
        }

        pub(crate) fn view(&self) -> View<'_> {
            View::new(&self.records, &self.ids)
        }

        /// The position of the record that holds the id `id` (a JSON string).
        pub(crate) fn pos(&self, id: &str) -> u32 {
            self.view()
                .lookup(&crate::record::string_key(id))
                .unwrap_or_else(|| panic!("no entry {id}"))
        }
    }
}
