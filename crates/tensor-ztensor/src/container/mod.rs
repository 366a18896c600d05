//! The later zTensor generations: 1.x (`ZTEN1000`) and 2.x (the current container).
//!
//! Both describe objects — a shape, a layout, and named parts stored in blobs — in a CBOR
//! manifest. This module reads both into one model, [`Container`], with every structural
//! check made at open and digests checked when a part is read.

pub(crate) mod logical;
mod manifest;
mod part;
mod read;

use crate::error::{Class, Error, Result};
pub use crate::generation::{
    ALIGNMENT_V2, CANONICAL_ALIGNMENT, FOOTER_V2, Generation, MAGIC_V1, MAGIC_V2, MAX_RANK_V2,
    detect,
};
use manifest::{locate_manifest, malformed, read_manifest};
pub use part::{Object, Part, PartEncoding};
use std::collections::HashSet;
use tensor_core::cbor::Value;
use tensor_core::{ReadOptions, Verify};

/// An open zTensor 1.x or 2 file.
#[derive(Debug)]
pub struct Container<'a> {
    bytes: &'a [u8],
    /// Where `bytes` start in the file: 0, or the start of a [window](Self::window).
    base: u64,
    generation: Generation,
    /// Shared with [windows](Self::window); a `Vec` as read (an `Arc<[Object]>` would copy
    /// every object once more at open).
    objects: std::sync::Arc<Vec<Object<'a>>>,
    attributes: Option<Value>,
    options: ReadOptions,
    warnings: Vec<String>,
    /// The stretches between blobs (zTensor 2), for [`warnings`](Self::warnings).
    gaps: Vec<(u64, u64)>,
}

impl<'a> Container<'a> {
    /// Where the manifest sits in the file: its offset and length.
    pub fn manifest_place(&self) -> Result<(u64, u64)> {
        let (offset, len, _) = locate_manifest(self.bytes, self.generation)?;
        Ok((offset, len))
    }

    /// Opens a zTensor 1.x or 2 file with default options.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Opens a zTensor 1.x or 2 file, checking the framing, the manifest (its hash, its
    /// deterministic encoding and schema for 2.x) and every blob's alignment, bounds and
    /// overlap before any data is read.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let Some(generation @ (Generation::V1 | Generation::V2)) = detect(bytes) else {
            return Err(Error::format(
                Class::BadMagic,
                "the file does not start with a zTensor 1.x or 2 magic number",
            ));
        };
        let (m_offset, m_len, hash) = locate_manifest(bytes, generation)?;
        options.limits.check_header_bytes(m_len)?;
        let manifest = &bytes[m_offset as usize..(m_offset + m_len) as usize];
        let mut warnings = Vec::new();
        if let Some((_, reserved)) = hash
            && reserved != 0
        {
            let what = format!(
                "the footer's reserved field (bytes 28..32 of the footer) is {reserved:#x}, not 0"
            );
            if options.strict {
                return Err(malformed(what));
            }
            warnings.push(what);
        }
        if let Some((h, _)) = hash {
            let actual = tensor_core::xxh3::xxh3_64(manifest);
            if actual != h {
                return Err(Error::format(
                    Class::ManifestHashMismatch,
                    format!("the manifest's XXH3-64 is {actual:016x}, the footer records {h:016x}"),
                ));
            }
        }
        let manifest = read_manifest(manifest, generation, &options.limits)?;
        if generation == Generation::V1
            && !manifest.has_tensors
            && &bytes[bytes.len().saturating_sub(8)..] != MAGIC_V1
        {
            // 1.1 and later (the `objects` manifest) always end with the ZTEN1000 trailer;
            // only 1.0 files (a `tensors` map) lack it. Without it the file was cut short.
            return Err(Error::format(
                Class::Truncated,
                "the file does not end with the ZTEN1000 trailer that every zTensor 1.1+ file \
                 carries, and its manifest is not a 1.0 one (tensors): the file appears cut short",
            ));
        }
        let mut c = Container {
            bytes,
            base: 0,
            generation,
            objects: std::sync::Arc::new(manifest.objects),
            attributes: manifest.attributes,
            options: *options,
            warnings,
            gaps: Vec::new(),
        };
        c.check_blobs(m_offset, m_len)?;
        if options.verify == Verify::OnOpen {
            for o in c.objects.iter() {
                for p in &o.parts {
                    c.part_bytes(o, p)?;
                }
            }
        }
        Ok(c)
    }

    fn check_blobs(&mut self, m_offset: u64, m_len: u64) -> Result<()> {
        let (align, floor, limit) = match self.generation {
            Generation::V2 => (
                ALIGNMENT_V2,
                ALIGNMENT_V2,
                self.bytes.len() as u64 - FOOTER_V2 as u64,
            ),
            _ => (crate::generation::ALIGNMENT_V0_1, 8, m_offset),
        };
        // A zTensor 2 manifest has its keys in strictly ascending order (checked as it was
        // read), so its names are unique already; 1.x names are checked here.
        let mut names = if self.generation == Generation::V2 {
            None
        } else {
            Some(HashSet::with_capacity(self.objects.len()))
        };
        // Spans alone, for a quick sort; an overlap's owners are looked up when there is one.
        let mut spans = Vec::with_capacity(self.objects.len() + 1);
        let who = |oi: usize, pi: usize| {
            format!(
                "{}/{}",
                self.objects[oi].name, self.objects[oi].parts[pi].role
            )
        };
        for (oi, o) in self.objects.iter().enumerate() {
            if let Some(names) = &mut names
                && !names.insert(&*o.name)
            {
                return Err(Error::format(
                    Class::DuplicateName,
                    format!("object {:?} appears twice", o.name),
                ));
            }
            for (pi, p) in o.parts.iter().enumerate() {
                if p.offset % align != 0 {
                    return Err(Error::format(
                        Class::MisalignedOffset,
                        format!(
                            "{}: offset {} is not a multiple of {align}",
                            who(oi, pi),
                            p.offset
                        ),
                    ));
                }
                let end = p.offset.checked_add(p.length);
                if p.offset < floor || end.is_none_or(|e| e > limit) {
                    return Err(Error::format(
                        Class::BlobOutOfBounds,
                        format!(
                            "{}: blob {}+{} lies outside the blob region {floor}..{limit}",
                            who(oi, pi),
                            p.offset,
                            p.length
                        ),
                    ));
                }
                if p.length > 0 {
                    spans.push((p.offset, p.offset + p.length));
                }
            }
        }
        // The manifest last, where writers put it: blobs written in order need no sorting.
        spans.push((m_offset, m_offset + m_len));
        spans.sort_unstable();
        // zTensor 2 parts may share a blob (the same span); 1.x parts may not.
        if self.generation == Generation::V2 {
            spans.dedup();
        }
        if let Some(w) = spans.windows(2).find(|w| w[1].0 < w[0].1) {
            // Every part with `span` (two parts of 1.x may claim the same one).
            let owners = |span: (u64, u64)| -> Vec<String> {
                let manifest = (span == (m_offset, m_offset + m_len)).then(|| "(manifest)".into());
                let parts = self.objects.iter().enumerate().flat_map(|(oi, o)| {
                    o.parts
                        .iter()
                        .enumerate()
                        .filter(move |(_, p)| (p.offset, p.offset + p.length) == span)
                        .map(move |(pi, _)| who(oi, pi))
                });
                manifest.into_iter().chain(parts).collect()
            };
            let (first, second) = (owners(w[0]), owners(w[1]));
            return Err(Error::format(
                Class::OverlappingBlobs,
                format!(
                    "{} ({}..{}) overlaps {} ({}..{})",
                    second.last().map_or("?", String::as_str),
                    w[1].0,
                    w[1].1,
                    first.first().map_or("?", String::as_str),
                    w[0].0,
                    w[0].1
                ),
            ));
        }
        if self.generation == Generation::V2 {
            // Everything between blobs (and between the magic and the first one) should be
            // zero. Looking costs a read of all the padding, so it waits for `warnings()`,
            // except that a strict reader refuses such a file at once.
            let mut pos = 8u64;
            for (start, end) in spans.iter().chain(std::iter::once(&(limit, limit))) {
                if *start > pos {
                    self.gaps.push((pos, *start));
                }
                pos = pos.max(*end);
            }
            if self.options.strict
                && let Some(what) = self.unreferenced().next()
            {
                return Err(malformed(what));
            }
        }
        Ok(())
    }

    /// The generation.
    #[must_use]
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// The objects, in manifest order.
    #[must_use]
    pub fn objects(&self) -> &[Object<'a>] {
        &self.objects
    }

    /// What the reader tolerated but a conforming writer never produces (refused instead
    /// with [`ReadOptions::strict`]). Reads the padding between blobs to find non-zero bytes
    /// there, which opening does not (unless strict).
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        self.warnings
            .iter()
            .cloned()
            .chain(self.unreferenced())
            .collect()
    }

    /// A warning for each stretch between blobs that is not all zero.
    fn unreferenced(&self) -> impl Iterator<Item = String> + '_ {
        // Readers may ignore padding (spec §2.4), and an appended file keeps its superseded
        // manifest here as an unreferenced blob (§2.5).
        self.gaps
            .iter()
            .filter(|&&(from, to)| {
                self.bytes[from as usize..to as usize]
                    .iter()
                    .any(|&b| b != 0)
            })
            .map(|(from, to)| {
                format!(
                    "bytes {from}..{to} between blobs are not zero (an unreferenced blob, such as \
                     the manifest an append superseded)"
                )
            })
    }

    /// File-level attributes, if any.
    #[must_use]
    pub fn attributes(&self) -> Option<&Value> {
        self.attributes.as_ref()
    }

    /// A reader of object `i` alone over `bytes`, which hold the file from offset `start` on
    /// and must cover every part of object `i`: for readers that fetch one object's bytes at
    /// a time (a remote file) and keep the manifest parsed once. The window shares the parsed
    /// manifest (no copy); reading any other object from it is an error, and it carries
    /// neither the file's attributes nor its warnings.
    pub fn window<'w>(&self, i: usize, bytes: &'w [u8], start: u64) -> Result<Container<'w>>
    where
        'a: 'w,
    {
        let o = self.objects.get(i).ok_or_else(|| {
            Error::format(
                Class::BlobOutOfBounds,
                format!("no object #{i} (the file has {})", self.objects.len()),
            )
        })?;
        let end = start.saturating_add(bytes.len() as u64);
        if let Some(p) = o
            .parts
            .iter()
            .find(|p| p.offset < start || p.offset.saturating_add(p.length) > end)
        {
            return Err(Error::format(
                Class::BlobOutOfBounds,
                format!(
                    "{}/{}: blob {}+{} lies outside the bytes given ({start}..{end})",
                    o.name, p.role, p.offset, p.length
                ),
            ));
        }
        Ok(Container {
            bytes,
            base: start,
            generation: self.generation,
            objects: std::sync::Arc::clone(&self.objects),
            attributes: None,
            options: self.options,
            warnings: Vec::new(),
            gaps: Vec::new(),
        })
    }
}
