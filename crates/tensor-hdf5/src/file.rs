//! [`Hdf5`]: a file opened over its bytes, its objects walked from the root group.

use crate::cursor::{Cursor, Sizes};
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::group;
use crate::message::{Attribute, Dataspace, Datatype, Filter, Layout, Target, kind};
use crate::object_header::{self, Message};
use crate::superblock::{self, Superblock};
use tensor_core::Limits;

/// The most messages one object header may hold.
const MAX_MESSAGES: usize = 1 << 16;

/// A group or a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind<'a> {
    /// A group.
    Group,
    /// A dataset.
    Dataset(Dataset<'a>),
}

/// An object of the file, by path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object<'a> {
    /// Its path: `/` for the root group, `/group/name` below it.
    pub path: String,
    /// Where its object header is (absolute).
    pub address: u64,
    /// A group or a dataset.
    pub kind: Kind<'a>,
    /// Its attributes, in header order.
    pub attributes: Vec<Attribute<'a>>,
}

/// An HDF5 file, borrowing its bytes.
#[derive(Clone, Debug)]
pub struct Hdf5<'a> {
    bytes: &'a [u8],
    superblock: Superblock,
    limits: Limits,
}

impl<'a> Hdf5<'a> {
    /// Opens `bytes`, a whole file: finds and checks its superblock.
    pub fn open(bytes: &'a [u8], limits: Limits) -> Result<Self> {
        let superblock = superblock::find(bytes)?;
        Ok(Hdf5 {
            bytes,
            superblock,
            limits,
        })
    }

    /// The superblock.
    #[must_use]
    pub fn superblock(&self) -> &Superblock {
        &self.superblock
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            offsets: self.superblock.offsets,
            lengths: self.superblock.lengths,
            base: self.superblock.base,
        }
    }

    fn messages(&self, address: u64) -> Result<Vec<Message<'a>>> {
        let at = self
            .superblock
            .base
            .checked_add(address)
            .ok_or(tensor_core::Error::Overflow {
                what: "HDF5 address",
            })?;
        object_header::read(
            self.bytes,
            at,
            self.superblock.offsets,
            self.superblock.lengths,
            MAX_MESSAGES,
        )
    }

    /// The object whose header is at `address` (relative to the base), named `path`.
    fn object(&self, path: String, address: u64, messages: &[Message<'a>]) -> Result<Object<'a>> {
        let lengths = self.superblock.lengths;
        let mut dense = None;
        if let Some(m) = messages.iter().find(|m| m.kind == kind::ATTRIBUTE_INFO) {
            let mut c = crate::cursor::Cursor {
                bytes: m.data,
                at: 0,
                offsets: self.superblock.offsets,
                lengths,
                what: "attribute info message",
            };
            let _version = c.u8()?;
            let flags = c.u8()?;
            if flags & 1 != 0 {
                c.skip(2)?;
            }
            if let Some(heap) = c.address()? {
                let index = c.address()?.ok_or_else(|| {
                    Error::malformed(
                        "attribute info message",
                        m.at,
                        "a heap without a name index",
                    )
                })?;
                dense = Some((heap, index));
            }
        }
        let mut attributes = messages
            .iter()
            .filter(|m| m.kind == kind::ATTRIBUTE)
            .map(|m| Attribute::decode(m.data, m.at, lengths))
            .collect::<Result<Vec<_>>>()?;
        if let Some((heap, index)) = dense {
            attributes.extend(self.dense_attributes(heap, index)?);
        }
        let find = |k: u16| messages.iter().find(|m| m.kind == k);
        let kind = match (
            find(kind::DATATYPE),
            find(kind::DATASPACE),
            find(kind::LAYOUT),
        ) {
            (Some(t), Some(s), Some(l)) => {
                if t.flags & 0x02 != 0 {
                    return Err(Error::Unsupported(format!(
                        "{path}: a committed (shared) datatype"
                    )));
                }
                let (datatype, _) = Datatype::decode(t.data, t.at)?;
                let dataspace = Dataspace::decode(s.data, s.at, lengths)?;
                let layout = Layout::decode(l.data, l.at, self.superblock.offsets, lengths)?;
                let filters = match find(kind::PIPELINE) {
                    Some(p) => Filter::decode_all(p.data, p.at)?,
                    None => Vec::new(),
                };
                let fill = match find(kind::FILL).or_else(|| find(kind::FILL_OLD)) {
                    Some(f) => crate::message::fill_value(f.kind, f.data, f.at)?
                        .filter(|v| v.len() as u64 == u64::from(datatype.size()))
                        .map(<[u8]>::to_vec),
                    None => None,
                };
                Kind::Dataset(Dataset {
                    datatype,
                    dataspace,
                    layout,
                    filters,
                    fill,
                })
            }
            _ => Kind::Group,
        };
        Ok(Object {
            path,
            address,
            kind,
            attributes,
        })
    }

    /// The data a variable-length element (a string, a list of references: length,
    /// collection address, object index, as an attribute or dataset stores it) refers to;
    /// `None` for an empty one.
    pub fn vlen(&self, element: &[u8]) -> Result<Option<&'a [u8]>> {
        crate::global_heap::element(self.bytes, self.sizes(), element)
    }

    /// Object references (object header addresses, relative to the base) from `data`, as a
    /// reference datatype or a list of references stores them.
    #[must_use]
    pub fn references(&self, data: &[u8]) -> Vec<u64> {
        data.chunks_exact(usize::from(self.superblock.offsets))
            .map(|r| r.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
            .collect()
    }

    /// Where a dataset's elements lie in the file (absolute offsets), when they are stored
    /// as they are in one run (contiguous, no filters, written): what a remote reader fetches
    /// to have them. Nothing of the file past the header is read.
    pub fn stored_range(&self, dataset: &Dataset<'_>) -> Result<Option<std::ops::Range<u64>>> {
        let total = dataset.byte_len()?;
        let Layout::Contiguous {
            address: Some(a),
            size,
        } = dataset.layout
        else {
            return Ok(None);
        };
        if !dataset.filters.is_empty() || size < total {
            return Ok(None);
        }
        let overflow = || tensor_core::Error::Overflow {
            what: "HDF5 address",
        };
        let start = self.superblock.base.checked_add(a).ok_or_else(overflow)?;
        let end = start.checked_add(total).ok_or_else(overflow)?;
        Ok(Some(start..end))
    }

    /// A dataset's elements in place, when they are stored as they are (contiguous or
    /// compact, no filters, written): a zero-copy view's bytes.
    pub fn stored(&self, dataset: &Dataset<'a>) -> Result<Option<&'a [u8]>> {
        if !dataset.filters.is_empty() {
            return Ok(None);
        }
        if let Layout::Compact(data) = dataset.layout {
            let total = usize::try_from(dataset.byte_len()?).unwrap_or(usize::MAX);
            return Ok(data.get(..total));
        }
        let Some(range) = self.stored_range(dataset)? else {
            return Ok(None);
        };
        let sb = &self.superblock;
        let mut c = Cursor::at(
            self.bytes,
            range.start,
            sb.offsets,
            sb.lengths,
            "contiguous dataset",
        )?;
        c.take(range.end - range.start).map(Some)
    }

    /// Bytes of an address in this file.
    #[must_use]
    pub fn address_size(&self) -> u8 {
        self.superblock.offsets
    }

    /// Reads `dataset` (one of this file's) into `out`, exactly its bytes: its elements in
    /// C order and the file's byte order.
    pub fn read(&self, dataset: &Dataset<'_>, out: &mut [u8]) -> Result<()> {
        crate::data::read(self.bytes, self.sizes(), &self.limits, dataset, out)
    }

    /// Reads `rows` of `dataset`'s outermost dimension into `out`, exactly their bytes (C
    /// order, the file's byte order): only the chunks those rows lie in are decoded, so a
    /// dataset is read a few chunk rows at a time in the memory of those rows.
    pub fn read_rows(
        &self,
        dataset: &Dataset<'_>,
        rows: std::ops::Range<u64>,
        out: &mut [u8],
    ) -> Result<()> {
        crate::data::read_rows(self.bytes, self.sizes(), &self.limits, dataset, rows, out)
    }

    /// The attributes of dense storage: attribute messages in a fractal heap, found through
    /// the version 2 B-tree that indexes them by name (records: an 8-byte heap ID, flags,
    /// creation order, the name's hash), in creation order.
    fn dense_attributes(&self, heap: u64, index: u64) -> Result<Vec<Attribute<'a>>> {
        let sizes = self.sizes();
        let heap = crate::fractal_heap::Heap::open(self.bytes, heap, sizes)?;
        let mut found = Vec::new();
        for record in crate::btree2::records(self.bytes, index, 8, sizes)? {
            let (Some(id), Some(order)) = (record.get(..8), record.get(9..13)) else {
                return Err(Error::malformed(
                    "attribute name record",
                    index,
                    "shorter than 13 bytes",
                ));
            };
            let order = u32::from_le_bytes([order[0], order[1], order[2], order[3]]);
            let message = heap.object(self.bytes, id, sizes)?;
            found.push((order, Attribute::decode(message, index, sizes.lengths)?));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
        Ok(found.into_iter().map(|(_, a)| a).collect())
    }

    /// The root group's object (its attributes), read alone.
    pub fn root(&self) -> Result<Object<'a>> {
        let address = self.superblock.root;
        let messages = self.messages(address)?;
        self.object("/".to_owned(), address, &messages)
    }

    /// Every object reachable from the root group by hard links, depth first, members in
    /// the order their group keeps them; each object once, however many links lead to it.
    /// At most the limits' tensor count of objects.
    pub fn objects(&self) -> Result<Vec<Object<'a>>> {
        let sizes = self.sizes();
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut stack = vec![("/".to_owned(), self.superblock.root)];
        while let Some((path, address)) = stack.pop() {
            if seen.contains(&address) {
                continue;
            }
            seen.push(address);
            self.limits.check_tensor_count(out.len() as u64 + 1)?;
            let messages = self.messages(address)?;
            let object = self.object(path.clone(), address, &messages)?;
            if object.kind == Kind::Group {
                let links = group::links(self.bytes, &messages, sizes)?;
                let prefix = if path == "/" {
                    String::new()
                } else {
                    path.clone()
                };
                for link in links.into_iter().rev() {
                    if let Target::Hard(child) = link.target {
                        stack.push((format!("{prefix}/{}", link.name), child));
                    }
                }
            }
            out.push(object);
        }
        Ok(out)
    }
}
