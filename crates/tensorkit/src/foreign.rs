//! Files of formats tensorkit does not read, recognised by their signatures so that they are
//! named in the error instead of being taken for a length-prefixed format (a zip archive's
//! `PK\x03\x04` read as a header length, an HDF5 or NetCDF-3 file's ninth byte as BinTensors'
//! option tag). Tried after the formats with a magic number and before the length-prefixed
//! ones; a format leaves this list when tensorkit learns to read it.

/// What `head`, a file's first bytes, looks like, when it is a well-known format tensorkit
/// does not read: `"a zip archive"`, `"HDF5 (NetCDF-4 files are HDF5)"`, ...
#[must_use]
pub(crate) fn identify(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"PK\x03\x04") {
        return Some(zip_kind(head));
    }
    if head.starts_with(b"PK\x05\x06") {
        return Some("an empty zip archive");
    }
    // The superblock's signature; HDF5 also allows it at 512, 1024, 2048... bytes, after a
    // user block. (At 0, the netcdf feature's adapter reads it first, as NetCDF-4.)
    if [0usize, 512, 1024, 2048]
        .iter()
        .any(|&at| head.get(at..at + 8) == Some(b"\x89HDF\r\n\x1a\n".as_slice()))
    {
        return Some("HDF5 (NetCDF-4 and Keras .h5 files are HDF5)");
    }
    match head {
        // Read by the netcdf feature's adapter, which is tried first; named here for builds
        // without it.
        [b'C', b'D', b'F', 1, ..] => return Some("NetCDF-3 (classic)"),
        [b'C', b'D', b'F', 2, ..] => return Some("NetCDF-3 (64-bit offset)"),
        [b'C', b'D', b'F', 5, ..] => return Some("NetCDF-3 (CDF-5)"),
        _ => {}
    }
    if head.starts_with(b"\x93NUMPY") {
        return Some("a NumPy .npy file");
    }
    // torch.save's legacy layout opens with a pickled magic number, 0x1950a86a20f9469cfc6c.
    if head.starts_with(b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19") {
        return Some("a legacy PyTorch checkpoint, a pickle; tensorkit never runs pickles");
    }
    // PROTO with a protocol pickle writes (2 to 5), then a first opcode.
    if let [0x80, 2..=5, next, ..] = head
        && is_pickle_opcode(*next)
    {
        return Some("a Python pickle; tensorkit never runs pickles");
    }
    if head.starts_with(b"\x1f\x8b") {
        return Some("gzip-compressed data");
    }
    if head.get(257..262) == Some(b"ustar".as_slice()) {
        return Some("a tar archive");
    }
    if looks_like_onnx(head) {
        return Some("an ONNX model (a protobuf ModelProto)");
    }
    None
}

/// What a zip archive's first entry says it holds: torch.save's `archive/data.pkl`, numpy's
/// `.npy` members, Keras' `metadata.json` or `config.json`.
fn zip_kind(head: &[u8]) -> &'static str {
    let name = (|| {
        let len = usize::from(u16::from_le_bytes([*head.get(26)?, *head.get(27)?]));
        head.get(30..30 + len)
    })();
    match name {
        Some(n) if n.ends_with(b"data.pkl") || n.ends_with(b".data/version") => {
            "a PyTorch checkpoint (a zip archive of pickles; tensorkit never runs pickles)"
        }
        Some(n) if n.ends_with(b".npy") => "a NumPy .npz archive",
        Some(b"metadata.json" | b"config.json") => "a Keras model archive (a zip archive)",
        _ => "a zip archive",
    }
}

/// The opcodes a pickle's first frame starts with after `PROTO`: `FRAME`, `EMPTY_DICT`,
/// `EMPTY_LIST`, `MARK`, `GLOBAL`, `STACK_GLOBAL`'s strings, `LONG1`, `BININT*`.
fn is_pickle_opcode(op: u8) -> bool {
    matches!(
        op,
        0x95 | b'}' | b']' | b'(' | b'c' | 0x8c | b'X' | 0x8a | b'J' | b'K' | b'M' | b')'
    )
}

/// An ONNX `ModelProto` begins with `ir_version` (field 1, a varint from 1 to 15), then
/// `producer_name`, `producer_version`, `domain`, `model_version`, `doc_string`, `graph` or
/// `opset_import` (fields 2 to 8).
fn looks_like_onnx(head: &[u8]) -> bool {
    matches!(
        head,
        [
            0x08,
            1..=15,
            0x12 | 0x1a | 0x22 | 0x28 | 0x32 | 0x3a | 0x42,
            ..
        ]
    )
}

#[cfg(test)]
mod tests {
    use super::identify;

    fn zip_with_first_entry(name: &str) -> Vec<u8> {
        let mut h = b"PK\x03\x04\x14\x00\x00\x00\x00\x00".to_vec();
        h.resize(26, 0);
        h.extend_from_slice(&u16::try_from(name.len()).unwrap().to_le_bytes());
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(name.as_bytes());
        h
    }

    #[test]
    fn the_formats_tensorkit_does_not_read_are_named() {
        let cases: [(Vec<u8>, &str); 11] = [
            (
                zip_with_first_entry("archive/data.pkl"),
                "PyTorch checkpoint",
            ),
            (zip_with_first_entry("w.npy"), ".npz"),
            (zip_with_first_entry("config.json"), "Keras"),
            (zip_with_first_entry("readme.txt"), "a zip archive"),
            (b"\x89HDF\r\n\x1a\n\x00\x00\x00\x00".to_vec(), "HDF5"),
            (
                b"CDF\x01\x00\x00\x00\x00\x00\x00\x00\x0a".to_vec(),
                "NetCDF-3 (classic)",
            ),
            (b"CDF\x02\x00\x00\x00\x00".to_vec(), "64-bit offset"),
            (
                b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}".to_vec(),
                "pickle",
            ),
            (
                b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19".to_vec(),
                "legacy PyTorch",
            ),
            (b"\x08\x07\x12\x07pytorch".to_vec(), "ONNX"),
            (b"\x93NUMPY\x01\x00v\x00".to_vec(), ".npy"),
        ];
        for (head, says) in cases {
            let got = identify(&head).unwrap_or_else(|| panic!("{says}: not identified"));
            assert!(got.contains(says), "{got:?} should say {says:?}");
        }
    }

    #[test]
    fn tensor_files_are_not_taken_for_foreign_ones() {
        // A safetensors header and a BinTensors one (length, then `{` or an option tag).
        assert_eq!(identify(b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":1}"), None);
        assert_eq!(identify(b"\x40\x00\x00\x00\x00\x00\x00\x00\x00\x01"), None);
        assert_eq!(identify(b"GGUF\x03\x00\x00\x00"), None);
        assert_eq!(identify(b"TENSOGRM"), None);
    }
}
