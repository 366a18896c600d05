//! What the encoder is asked to do: hashes, the index, preceders, provenance, NaN and ±Inf,
//! the stages beyond the reference, masks.

use crate::provenance::Provenance;
use tensor_pipeline::masks::MaskMethod;

/// Where the aggregate hash frame goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HashFrames {
    /// In the header for buffered messages, in the footer for streamed ones.
    #[default]
    Auto,
    /// No aggregate hash frame (the inline slots still hold each frame's hash).
    None,
    /// In the header (buffered only).
    Header,
    /// In the footer.
    Footer,
    /// In both (buffered only).
    Both,
}

/// Where the index frame goes in a buffered message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IndexFrame {
    /// In the header: readers find any object after reading the header alone.
    #[default]
    Header,
    /// In the footer.
    Footer,
    /// No index: readers walk the frames.
    None,
}

/// How messages are written.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::struct_excessive_bools)] // Independent switches, as the reference has them.
pub struct EncodeOptions {
    /// Hash every frame (XXH3-64 in each frame's slot) and set `HASHES_PRESENT`.
    pub hashing: bool,
    /// Where the aggregate hash frame goes (only when hashing).
    pub hash_frames: HashFrames,
    /// Where the index goes (buffered messages; streamed ones always index in the footer).
    pub index: IndexFrame,
    /// Write each object's `base` entry in a `PrecederMetadata` frame just before the object,
    /// instead of in the header metadata.
    pub preceders: bool,
    /// The encoder, time and uuid written to `_reserved_`.
    pub provenance: Provenance,
    /// Accept NaN in float and complex data: replaced by zero and recorded in a mask.
    pub allow_nan: bool,
    /// Accept ±Inf the same way.
    pub allow_inf: bool,
    /// With a lossless pipeline (no `simple_packing`), store NaN and ±Inf as they are — bit
    /// for bit, NaN payloads and signs included — instead of moving them into masks. Masks
    /// are for lossy packing, which cannot represent them; a lossless pipeline can. (The
    /// reference's encoder always masks; its decoder reads either.)
    pub keep_non_finite: bool,
    /// Write what tensorkit reads but the reference (tensogram 0.24) does not: simple
    /// packing of float32, and szip after packing to a width that is not 8, 16, 24 or 32
    /// bits (tensorkit codes such samples in byte containers; the reference's decoder fails
    /// on them or decodes them wrongly). Off by default: such objects are refused.
    pub beyond_reference: bool,
    /// How masks are compressed.
    pub mask_method: MaskMethod,
    /// Masks whose packed size is at most this many bytes are stored raw (`none`).
    pub small_mask_threshold: u64,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            hashing: true,
            hash_frames: HashFrames::Auto,
            index: IndexFrame::Header,
            preceders: false,
            provenance: Provenance::now(),
            allow_nan: false,
            allow_inf: false,
            keep_non_finite: false,
            beyond_reference: false,
            mask_method: MaskMethod::Roaring,
            small_mask_threshold: 128,
        }
    }
}
