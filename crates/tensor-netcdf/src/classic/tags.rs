//! The tags and markers of a classic header.

/// The tag of an absent list (and the zero it is).
pub(super) const ABSENT: u32 = 0;
/// The tag of a dimension list.
pub(super) const NC_DIMENSION: u32 = 0x0A;
/// The tag of a variable list.
pub(super) const NC_VARIABLE: u32 = 0x0B;
/// The tag of an attribute list.
pub(super) const NC_ATTRIBUTE: u32 = 0x0C;
/// The record count of a file being written as a stream (8 bytes of ones in CDF-5).
pub(super) const STREAMING: u32 = u32::MAX;
