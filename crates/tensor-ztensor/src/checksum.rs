//! Per-tensor checksums of zTensor 0.1: `crc32c:0x` + 8 hex digits, or `sha256:` + 64 hex
//! digits, both over the bytes as stored on disk.

use sha2::{Digest, Sha256};

/// A parsed `checksum` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checksum {
    /// CRC-32C (Castagnoli).
    Crc32c(u32),
    /// SHA-256.
    Sha256([u8; 32]),
    /// XXH3-64 (zTensor 2).
    Xxh3(u64),
    /// An algorithm this reader does not know (reported, not fatal).
    Unknown(String),
    /// A known algorithm whose value is not valid hex of the right length.
    Malformed(String),
}

impl Checksum {
    /// Parses a stored checksum string; the hex is read case-insensitively.
    #[must_use]
    pub fn parse(s: &str) -> Checksum {
        if let Some(hex) = s.strip_prefix("crc32c:") {
            let digits = hex
                .strip_prefix("0x")
                .or_else(|| hex.strip_prefix("0X"))
                .unwrap_or(hex);
            tensor_core::hex::decode::<4>(digits.as_bytes()).map_or_else(
                || Checksum::Malformed(s.to_owned()),
                |b| Checksum::Crc32c(u32::from_be_bytes(b)),
            )
        } else if let Some(hex) = s.strip_prefix("sha256:") {
            tensor_core::hex::decode::<32>(hex.as_bytes())
                .map_or_else(|| Checksum::Malformed(s.to_owned()), Checksum::Sha256)
        } else {
            Checksum::Unknown(s.to_owned())
        }
    }

    /// The string the reference writer stores: upper-case hex for CRC-32C, lower-case for
    /// SHA-256.
    #[must_use]
    pub fn to_stored(&self) -> String {
        match self {
            Checksum::Crc32c(v) => format!("crc32c:0x{v:08X}"),
            Checksum::Sha256(d) => format!("sha256:{}", tensor_core::hex::encode(d)),
            Checksum::Xxh3(v) => format!("xxh3:{v:016x}"),
            Checksum::Unknown(s) | Checksum::Malformed(s) => s.clone(),
        }
    }

    /// Whether `data` matches; `None` when the algorithm is unknown or the value malformed.
    #[must_use]
    pub fn matches(&self, data: &[u8]) -> Option<bool> {
        let kind = self.kind()?;
        Some(kind.compute(data).as_ref() == Some(self))
    }

    /// The algorithm, when it is one this reader computes and the value is well formed.
    #[must_use]
    pub fn kind(&self) -> Option<ChecksumKind> {
        match self {
            Checksum::Crc32c(_) => Some(ChecksumKind::Crc32c),
            Checksum::Sha256(_) => Some(ChecksumKind::Sha256),
            Checksum::Xxh3(_) => Some(ChecksumKind::Xxh3),
            Checksum::Unknown(_) | Checksum::Malformed(_) => None,
        }
    }
}

/// A checksum computed over data handed over in pieces.
pub(crate) enum Running {
    Crc32c(u32),
    Sha256(Box<Sha256>),
    Xxh3(Box<tensor_core::xxh3::Xxh3>),
}

impl Running {
    /// Adds `data`.
    pub(crate) fn update(&mut self, data: &[u8]) {
        match self {
            Running::Crc32c(c) => *c = crc32c::crc32c_append(*c, data),
            Running::Sha256(h) => h.update(data),
            Running::Xxh3(h) => h.update(data),
        }
    }

    /// The checksum of everything added.
    pub(crate) fn finish(self) -> Checksum {
        match self {
            Running::Crc32c(c) => Checksum::Crc32c(c),
            Running::Sha256(h) => Checksum::Sha256(h.finalize().into()),
            Running::Xxh3(h) => Checksum::Xxh3(h.digest()),
        }
    }
}

/// Which checksum a writer computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ChecksumKind {
    /// None.
    #[default]
    None,
    /// CRC-32C, fast (about 12 GB/s here).
    Crc32c,
    /// SHA-256 (about 1.3 GB/s here).
    Sha256,
    /// XXH3-64 (about 9 GB/s here; zTensor 2 only).
    Xxh3,
}

impl ChecksumKind {
    /// A running computation of this kind of checksum, or `None` for [`ChecksumKind::None`].
    pub(crate) fn running(self) -> Option<Running> {
        match self {
            ChecksumKind::None => None,
            ChecksumKind::Crc32c => Some(Running::Crc32c(0)),
            ChecksumKind::Sha256 => Some(Running::Sha256(Box::default())),
            ChecksumKind::Xxh3 => Some(Running::Xxh3(Box::default())),
        }
    }

    /// The checksum of `data`, or `None` for [`ChecksumKind::None`].
    #[must_use]
    pub fn compute(self, data: &[u8]) -> Option<Checksum> {
        match self {
            ChecksumKind::None => None,
            ChecksumKind::Crc32c => Some(Checksum::Crc32c(crc32c::crc32c(data))),
            ChecksumKind::Sha256 => Some(Checksum::Sha256(Sha256::digest(data).into())),
            ChecksumKind::Xxh3 => Some(Checksum::Xxh3(tensor_core::xxh3::xxh3_64(data))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format_like_the_reference() {
        assert_eq!(
            Checksum::parse("crc32c:0x850A90D9"),
            Checksum::Crc32c(0x850A_90D9)
        );
        assert_eq!(
            Checksum::parse("crc32c:0xf8890cd2"),
            Checksum::Crc32c(0xF889_0CD2)
        );
        assert_eq!(
            Checksum::Crc32c(0xf889_0cd2).to_stored(),
            "crc32c:0xF8890CD2"
        );
        assert!(matches!(
            Checksum::parse("crc32c:0xZZZZZZZZ"),
            Checksum::Malformed(_)
        ));
        assert!(matches!(
            Checksum::parse("crc32c:0x123"),
            Checksum::Malformed(_)
        ));
        // A sign is not a hex digit, though Rust's integer parsing takes one.
        assert!(matches!(
            Checksum::parse("crc32c:0x+50A90D9"),
            Checksum::Malformed(_)
        ));
        assert!(matches!(Checksum::parse("md5:abc"), Checksum::Unknown(_)));
        let s = ChecksumKind::Sha256.compute(b"abc").unwrap();
        assert_eq!(
            s.to_stored(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Checksum::parse(&s.to_stored()), s);
        assert_eq!(s.matches(b"abc"), Some(true));
        assert_eq!(s.matches(b"abd"), Some(false));
        assert_eq!(Checksum::parse("md5:x").matches(b""), None);
        assert_eq!(
            ChecksumKind::Crc32c.compute(b"123456789"),
            Some(Checksum::Crc32c(0xE306_9283))
        );
    }
}
