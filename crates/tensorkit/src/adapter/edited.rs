//! [`EditedHeader`]: what an adapter gives an edit to write, when the tensors' bytes can
//! stay where they are.

use tensor_core::patch::Patch;

/// A new header for an edited file ([`Adapter::header_for_edit`](super::Adapter::header_for_edit)).
#[derive(Debug)]
#[non_exhaustive]
pub enum EditedHeader {
    /// Written over the old one: the file keeps its length or ends after it.
    InPlace(Patch),
    /// Too long for the old one's place: a copy of the file is `header`, then the old file
    /// from `data_start` on, as it is.
    Moved {
        /// The new header, padded as the format wants the data to start.
        header: Vec<u8>,
        /// Where the old file's data section starts.
        data_start: u64,
    },
}

impl EditedHeader {
    /// `header` written over the first bytes of a file `len` bytes long, which keeps its
    /// length.
    #[must_use]
    pub fn at_start(header: Vec<u8>, len: u64) -> Self {
        EditedHeader::InPlace(Patch {
            writes: vec![(0, header)],
            len,
        })
    }
}
