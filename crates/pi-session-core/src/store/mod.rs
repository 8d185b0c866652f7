//! The record store under a session: the records and where their lines are ([`records`]), the
//! id index with labels and leaf ([`index`]), and the read-only [`View`] of both that queries and
//! walks take. It knows nothing of files beyond reading a line back; the session above it owns
//! the persistence rules.

pub(crate) mod index;
pub(crate) mod records;
mod view;

pub use index::Leaf;
pub use records::Rec;
pub use view::View;
