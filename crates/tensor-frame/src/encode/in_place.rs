//! A message's metadata changed in place: when the new metadata frame takes exactly the
//! bytes the old one and its padding took, nothing else in the message moves — the index's
//! offsets, the data frames and their hashes stay as they are — so an edit of the metadata
//! is a few bytes written over the old frame rather than a new message.

use crate::error::Result;
use crate::frame_out::frame;
use crate::message::Message;
use crate::metadata::GlobalMetadata;
use crate::wire::{FrameType, HASH_PRESENT, POSTAMBLE_LEN, padding};

/// The bytes that give `m` the global metadata `metadata` (complete: `_reserved_` included,
/// as [`Message::metadata`] gives it) without moving anything else: `(offset in the
/// message, bytes)` to write over its one metadata frame and that frame's padding. `None`
/// when the message keeps its metadata in more than one frame (header and footer, or
/// per-object preceders), or when the new frame, padded, is not exactly as long as the old
/// one and its padding: such a message is re-framed ([`reframe_to`](super::reframe_to)).
/// The new frame carries a hash when the old one did.
pub fn metadata_in_place(
    m: &Message<'_>,
    metadata: &GlobalMetadata,
) -> Result<Option<(u64, Vec<u8>)>> {
    let frames = m.frames()?;
    let mut metadata_frames = frames.iter().enumerate().filter(|(_, f)| {
        matches!(
            f.frame_type,
            FrameType::HeaderMetadata | FrameType::FooterMetadata | FrameType::PrecederMetadata
        )
    });
    let (Some((i, old)), None) = (metadata_frames.next(), metadata_frames.next()) else {
        return Ok(None);
    };
    if old.frame_type == FrameType::PrecederMetadata {
        return Ok(None);
    }
    let room = frames
        .get(i + 1)
        .map_or(m.bytes().len() as u64 - POSTAMBLE_LEN, |next| next.offset)
        - old.offset;
    let hashed = old.header.flags & HASH_PRESENT != 0;
    let mut new = frame(old.frame_type, &metadata.encode(), hashed, old.offset);
    new.resize(new.len() + padding(new.len() as u64) as usize, 0);
    Ok((new.len() as u64 == room).then_some((old.offset, new)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EncodeOptions, Message, MetaValue, serialize};
    use tensor_descriptor::DataObjectDescriptor;

    fn message(note: &str) -> Vec<u8> {
        let mut meta = GlobalMetadata::default();
        meta.extra.insert("note".into(), MetaValue::from(note));
        let d = DataObjectDescriptor::new(
            tensor_dtype::Dtype::Float32,
            &[4],
            tensor_core::ByteOrder::Little,
        );
        serialize(&meta, &[d], &[&[0u8; 16]], &EncodeOptions::default()).unwrap()
    }

    #[test]
    fn a_value_of_the_same_size_is_written_in_place_and_reads_back() {
        let old = message("aaaa");
        let m = Message::open(&old).unwrap();
        let mut meta = m.metadata().unwrap().clone();
        meta.extra.insert("note".into(), MetaValue::from("bbbb"));
        let (at, bytes) = metadata_in_place(&m, &meta).unwrap().expect("fits");
        let mut edited = old.clone();
        edited[at as usize..at as usize + bytes.len()].copy_from_slice(&bytes);
        let e = Message::open(&edited).unwrap();
        e.verify_hashes().unwrap();
        assert_eq!(e.metadata().unwrap(), &meta);
        assert_eq!(
            e.decode_all(crate::DecodeOptions::default()).unwrap().len(),
            1
        );
        // Everything but the metadata frame is as it was.
        assert_eq!(
            edited[at as usize + bytes.len()..],
            old[at as usize + bytes.len()..]
        );
        assert_eq!(edited[..at as usize], old[..at as usize]);
    }

    #[test]
    fn a_longer_value_does_not_fit() {
        let old = message("aaaa");
        let m = Message::open(&old).unwrap();
        let mut meta = m.metadata().unwrap().clone();
        meta.extra
            .insert("note".into(), MetaValue::from("b".repeat(40).as_str()));
        assert!(metadata_in_place(&m, &meta).unwrap().is_none());
    }
}
