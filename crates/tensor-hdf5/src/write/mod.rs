//! HDF5 written in pure Rust, streamed: each dataset's elements go to the file as its
//! caller hands them over (a chunked dataset's a row of chunks at a time, filtered on every
//! core with the `parallel` feature), and the metadata — chunk B-trees, the global heap,
//! the object headers and the superblock — follows them at the end, the superblock's
//! addresses patched last. Memory stays within a row of chunks and the metadata, whatever
//! the file's size.
//!
//! The file is laid out as the HDF5 library lays out what netCDF-C asks of it: a version 2
//! superblock, version 2 object headers tracking the creation order of links and
//! attributes, links and attributes in the headers, datasets contiguous or chunked through
//! a version 1 B-tree (layout version 3), and variable-length values (strings, lists of
//! object references) in the global heap — what HDF5 1.8 and later read. Groups nest
//! under the root; each lists its datasets, then its subgroups, in the order they were
//! made.

mod chunks;
mod encode;
mod fail;
mod heap;
mod slab;
mod spec;

pub use spec::{Attribute, Data, DatasetId, DatasetSpec, Filters, GroupId, Type, Value};

use crate::error::{Error, Result};
use crate::message::kind;
use chunks::Stored;
use encode::UNDEFINED;
use fail::{io, overflow, short};
use std::io::{Seek, SeekFrom, Write};

/// Where a dataset's elements went.
#[derive(Debug)]
enum Storage {
    Contiguous {
        address: u64,
        size: u64,
    },
    /// Chunks of `chunk` elements (none stored yet when `stored` is empty).
    Chunked {
        chunk: Vec<u64>,
        stored: Vec<Stored>,
    },
}

#[derive(Debug)]
struct Pending {
    name: String,
    /// The group holding it (`None`: the root).
    group: Option<usize>,
    spec: DatasetSpec,
    storage: Storage,
    attributes: Vec<Attribute>,
}

/// A group below the root.
#[derive(Debug)]
struct Group {
    name: String,
    parent: Option<usize>,
    attributes: Vec<Attribute>,
}

/// The largest message an object header holds (its size is 16 bits).
const MAX_MESSAGE: usize = u16::MAX as usize;

/// An HDF5 file being written.
pub struct Writer<'w, W: Write + Seek + ?Sized> {
    out: &'w mut W,
    at: u64,
    datasets: Vec<Pending>,
    groups: Vec<Group>,
    root: Vec<Attribute>,
    /// Each group's link names (`None`: the root's), so that none is given twice.
    links: std::collections::HashSet<(Option<usize>, String)>,
}

impl<'w, W: Write + Seek + ?Sized> Writer<'w, W> {
    /// Starts a file at the start of `out` (the superblock's room reserved).
    ///
    /// # Errors
    /// When `out` cannot be written.
    pub fn new(out: &'w mut W) -> Result<Self> {
        out.seek(SeekFrom::Start(0)).map_err(io)?;
        out.write_all(&[0; encode::SUPERBLOCK_LEN as usize])
            .map_err(io)?;
        Ok(Writer {
            out,
            at: encode::SUPERBLOCK_LEN,
            datasets: Vec::new(),
            groups: Vec::new(),
            root: Vec::new(),
            links: std::collections::HashSet::new(),
        })
    }

    /// Takes `name` in `group` (`None`: the root) for a link; `false` when the group
    /// already links something of that name.
    fn take(&mut self, group: Option<usize>, name: &str) -> bool {
        self.links.insert((group, name.to_owned()))
    }

    /// Adds a group named `name` to `parent` (`None`: the root).
    ///
    /// # Errors
    /// When the name is empty, holds a `/`, or is taken in `parent`.
    pub fn group(&mut self, parent: Option<GroupId>, name: &str) -> Result<GroupId> {
        let parent = parent.map(|g| g.0);
        if name.is_empty() || name.contains('/') || name == "." || !self.take(parent, name) {
            return Err(Error::CannotWrite(format!(
                "group {name:?}: a name must be non-empty, hold no '/' and be its group's only \
                 link of that name"
            )));
        }
        self.groups.push(Group {
            name: name.to_owned(),
            parent,
            attributes: Vec::new(),
        });
        Ok(GroupId(self.groups.len() - 1))
    }

    /// Adds a dataset named `name` to the root group, its elements (C order, little-endian)
    /// written by `data` into the sink it is given — exactly the dataset's bytes. Without
    /// `data`, no storage is allocated: every element reads as the fill value.
    ///
    /// # Errors
    /// When the spec is not one HDF5 can hold, `data` fails or gives another number of
    /// bytes, or `out` cannot be written.
    pub fn dataset(
        &mut self,
        name: &str,
        spec: DatasetSpec,
        data: Option<Data<'_>>,
    ) -> Result<DatasetId> {
        self.dataset_in(None, name, spec, data)
    }

    /// [`dataset`](Self::dataset) in `group` (`None`: the root).
    ///
    /// # Errors
    /// As [`dataset`](Self::dataset); and when `group` already links something named `name`.
    pub fn dataset_in(
        &mut self,
        group: Option<GroupId>,
        name: &str,
        spec: DatasetSpec,
        data: Option<Data<'_>>,
    ) -> Result<DatasetId> {
        let group = group.map(|g| g.0);
        check(name, &spec)?;
        if !self.take(group, name) {
            return Err(Error::CannotWrite(format!(
                "dataset {name:?}: its group already links something of that name"
            )));
        }
        let width = u64::from(spec.ty.size());
        let total = spec
            .dims
            .iter()
            .try_fold(width, |n, &d| n.checked_mul(d))
            .ok_or(overflow("HDF5 dataset size"))?;
        let storage = match (&spec.chunks, data) {
            (None, None) => Storage::Contiguous {
                address: UNDEFINED,
                size: total,
            },
            (Some(chunk), None) => Storage::Chunked {
                chunk: chunk.clone(),
                stored: Vec::new(),
            },
            (None, Some(data)) => {
                let address = if total == 0 { UNDEFINED } else { self.at };
                let mut sink = Counted {
                    out: &mut *self.out,
                    written: 0,
                    limit: total,
                };
                data(&mut sink)?;
                if sink.written != total {
                    return Err(short(name, sink.written, total));
                }
                self.at += total;
                Storage::Contiguous {
                    address,
                    size: total,
                }
            }
            (Some(chunk), Some(data)) => {
                let mut sink = slab::Slabs::new(&spec, chunk, &mut *self.out, self.at)?;
                data(&mut sink)?;
                let (stored, at, written) = sink.finish()?;
                if written != total {
                    return Err(short(name, written, total));
                }
                self.at = at;
                Storage::Chunked {
                    chunk: chunk.clone(),
                    stored,
                }
            }
        };
        self.datasets.push(Pending {
            name: name.to_owned(),
            group,
            spec,
            storage,
            attributes: Vec::new(),
        });
        Ok(DatasetId(self.datasets.len() - 1))
    }

    /// Adds `attribute` to `dataset`, or to the root group when `None`.
    pub fn attribute(&mut self, dataset: Option<DatasetId>, attribute: Attribute) {
        match dataset {
            Some(DatasetId(d)) => self.datasets[d].attributes.push(attribute),
            None => self.root.push(attribute),
        }
    }

    /// Adds `attribute` to `group`.
    pub fn group_attribute(&mut self, group: GroupId, attribute: Attribute) {
        self.groups[group.0].attributes.push(attribute);
    }

    /// Writes the metadata and the superblock. Returns the file's length.
    ///
    /// # Errors
    /// When an attribute is too large for an object header (64 KiB), a reference names no
    /// dataset, or `out` cannot be written.
    pub fn finish(self) -> Result<u64> {
        let Writer {
            out,
            mut at,
            datasets,
            groups,
            root,
            links: _,
        } = self;
        // The chunk B-trees, whose addresses the layouts need.
        let mut trees = Vec::new();
        let mut btree = vec![UNDEFINED; datasets.len()];
        for (i, d) in datasets.iter().enumerate() {
            if let Storage::Chunked { chunk, stored } = &d.storage
                && !stored.is_empty()
            {
                let (bytes, root) = chunks::btree(stored, chunk, at);
                at += bytes.len() as u64;
                btree[i] = root;
                trees.push(bytes);
            }
        }
        // The heap, whose objects' places the attributes need.
        let mut heap = heap::Heap::default();
        // Objects of the datasets' attributes, the root's, then each group's.
        let all = datasets
            .iter()
            .map(|d| &d.attributes)
            .chain(std::iter::once(&root))
            .chain(groups.iter().map(|g| &g.attributes));
        let objects: Vec<Vec<Vec<Option<usize>>>> = all
            .map(|attrs| {
                attrs
                    .iter()
                    .map(|a| heap_objects(a, &mut heap, datasets.len()))
                    .collect()
            })
            .collect::<Result<_>>()?;
        let placed = heap.place(at);
        at += placed.len;
        let vlen = |o: &Option<usize>, n: u32| -> Vec<u8> {
            let mut e = Vec::with_capacity(16);
            encode::put_u32(&mut e, n);
            match o {
                Some(k) => {
                    encode::put_u64(&mut e, placed.ids[*k].0);
                    encode::put_u32(&mut e, placed.ids[*k].1);
                }
                None => e.extend_from_slice(&[0; 12]),
            }
            e
        };
        let attribute_messages = |attrs: &[Attribute], objects: &[Vec<Option<usize>>]| {
            let mut messages = vec![(
                kind::ATTRIBUTE_INFO,
                0x04,
                encode::attribute_info(u16::try_from(attrs.len()).unwrap_or(u16::MAX)),
            )];
            for (a, objects) in attrs.iter().zip(objects) {
                let data = match &a.value {
                    Value::Bytes(b) => b.clone(),
                    Value::Strings(s) => s
                        .iter()
                        .zip(objects)
                        .flat_map(|(s, o)| vlen(o, s.len() as u32))
                        .collect(),
                    Value::References(r) => r
                        .iter()
                        .zip(objects)
                        .flat_map(|(r, o)| vlen(o, r.len() as u32))
                        .collect(),
                };
                let m = encode::attribute(a, &data);
                if m.len() > MAX_MESSAGE {
                    return Err(Error::CannotWrite(format!(
                        "attribute {:?} takes {} bytes, past the {MAX_MESSAGE} an object \
                         header's message holds (dense attribute storage is not written)",
                        a.name,
                        m.len()
                    )));
                }
                messages.push((kind::ATTRIBUTE, 0, m));
            }
            Ok(messages)
        };
        // The datasets' headers, then the root group's.
        let mut headers = Vec::with_capacity(datasets.len() + 1);
        let mut addresses = Vec::with_capacity(datasets.len());
        for (i, d) in datasets.iter().enumerate() {
            let width = d.spec.ty.size();
            let chunked = matches!(d.storage, Storage::Chunked { .. });
            let mut messages = vec![
                (
                    kind::DATASPACE,
                    0,
                    encode::dataspace(Some(&d.spec.dims), d.spec.max.as_deref()),
                ),
                (kind::DATATYPE, 1, encode::datatype(d.spec.ty)),
                (
                    kind::FILL,
                    1,
                    encode::fill_value(chunked, d.spec.fill.as_deref()),
                ),
            ];
            if d.spec.filters.any() {
                messages.push((
                    kind::PIPELINE,
                    1,
                    encode::pipeline(&d.spec.filters.entries(width)),
                ));
            }
            let layout = match &d.storage {
                Storage::Contiguous { address, size } => encode::contiguous(*address, *size),
                Storage::Chunked { chunk, .. } => encode::chunked(btree[i], chunk, width),
            };
            messages.push((kind::LAYOUT, 0, layout));
            messages.extend(attribute_messages(&d.attributes, &objects[i])?);
            let header = encode::object_header(&messages);
            addresses.push(at);
            at += header.len() as u64;
            headers.push(header);
        }
        // The groups' headers, the deepest first (a group is made after its parent, so
        // from the last made to the first every child's address is known before its
        // parent's header lists it), then the root's. Each links its datasets, then its
        // subgroups, in the order they were made.
        let group_header = |group: Option<usize>,
                            group_addresses: &[u64],
                            attributes: &[Attribute],
                            objects: &[Vec<Option<usize>>]|
         -> Result<Vec<u8>> {
            let mut links: Vec<(&str, u64)> = datasets
                .iter()
                .enumerate()
                .filter(|(_, d)| d.group == group)
                .map(|(i, d)| (d.name.as_str(), addresses[i]))
                .collect();
            links.extend(
                groups
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| g.parent == group)
                    .map(|(k, g)| (g.name.as_str(), group_addresses[k])),
            );
            let mut messages = vec![
                (kind::LINK_INFO, 0, encode::link_info(links.len() as u64)),
                (kind::GROUP_INFO, 1, encode::group_info()),
            ];
            for (order, (name, address)) in links.iter().enumerate() {
                messages.push((kind::LINK, 0, encode::link(name, *address, order as u64)));
            }
            messages.extend(attribute_messages(attributes, objects)?);
            Ok(encode::object_header(&messages))
        };
        let mut group_addresses = vec![UNDEFINED; groups.len()];
        let mut group_headers = Vec::with_capacity(groups.len());
        for k in (0..groups.len()).rev() {
            let header = group_header(
                Some(k),
                &group_addresses,
                &groups[k].attributes,
                &objects[datasets.len() + 1 + k],
            )?;
            group_addresses[k] = at;
            at += header.len() as u64;
            group_headers.push(header);
        }
        let root_header = group_header(None, &group_addresses, &root, &objects[datasets.len()])?;
        let root_address = at;
        at += root_header.len() as u64;
        let heap_bytes = heap.encode(&placed, &|d| addresses[d]);
        for bytes in trees
            .iter()
            .chain([&heap_bytes])
            .chain(&headers)
            .chain(&group_headers)
            .chain([&root_header])
        {
            out.write_all(bytes).map_err(io)?;
        }
        out.seek(SeekFrom::Start(0)).map_err(io)?;
        out.write_all(&encode::superblock(root_address, at))
            .map_err(io)?;
        out.seek(SeekFrom::Start(at)).map_err(io)?;
        out.flush().map_err(io)?;
        Ok(at)
    }
}

/// The heap objects an attribute's elements point at (`None` for an empty one), added to
/// `heap`.
fn heap_objects(
    a: &Attribute,
    heap: &mut heap::Heap,
    datasets: usize,
) -> Result<Vec<Option<usize>>> {
    Ok(match &a.value {
        Value::Bytes(_) => Vec::new(),
        Value::Strings(s) => s
            .iter()
            .map(|s| (!s.is_empty()).then(|| heap.add(heap::Object::Bytes(s.as_bytes().to_vec()))))
            .collect(),
        Value::References(r) => r
            .iter()
            .map(|list| {
                if let Some(bad) = list.iter().find(|d| d.0 >= datasets) {
                    return Err(Error::CannotWrite(format!(
                        "attribute {:?} refers to dataset {} of {datasets}",
                        a.name, bad.0
                    )));
                }
                Ok((!list.is_empty()).then(|| {
                    heap.add(heap::Object::References(list.iter().map(|d| d.0).collect()))
                }))
            })
            .collect::<Result<_>>()?,
    })
}

/// Refuses what HDF5 cannot hold or this writer does not write.
fn check(name: &str, spec: &DatasetSpec) -> Result<()> {
    let bad = |why: String| Err(Error::CannotWrite(format!("dataset {name:?}: {why}")));
    if name.is_empty() || name.contains('/') || name == "." {
        return bad("a name must be non-empty and hold no '/'".into());
    }
    if !matches!(
        spec.ty,
        Type::Integer { .. } | Type::Float { .. } | Type::Text { .. }
    ) {
        return bad("variable-length elements are not written as datasets".into());
    }
    if spec.dims.len() > 32 {
        return bad(format!("{} dimensions (HDF5 holds 32)", spec.dims.len()));
    }
    if let Some(max) = &spec.max {
        if max.len() != spec.dims.len() {
            return bad("its maxima and its shape differ in rank".into());
        }
        if max
            .iter()
            .zip(&spec.dims)
            .any(|(m, d)| m.is_some_and(|m| m < *d))
        {
            return bad("a maximum below its dimension".into());
        }
    }
    let unlimited = spec
        .max
        .as_ref()
        .is_some_and(|m| m.iter().any(Option::is_none));
    match &spec.chunks {
        None if unlimited || spec.filters.any() => {
            bad("an unlimited dimension or a filter needs chunked storage".into())
        }
        None => Ok(()),
        Some(chunk) => {
            if chunk.len() != spec.dims.len() || spec.dims.is_empty() {
                return bad("a chunk shape must have the dataset's rank (at least 1)".into());
            }
            let bytes = chunk
                .iter()
                .try_fold(u64::from(spec.ty.size()), |n, &c| {
                    (c > 0 && u32::try_from(c).is_ok())
                        .then_some(n.checked_mul(c))
                        .flatten()
                })
                .filter(|&n| n < 1 << 32);
            if bytes.is_none() {
                return bad(format!(
                    "chunks of {chunk:?} elements (each must hold 1 to 4 GiB)"
                ));
            }
            Ok(())
        }
    }
}

/// A sink writing straight to the file, counting, refusing more than `limit` bytes.
struct Counted<'a, W: Write + ?Sized> {
    out: &'a mut W,
    written: u64,
    limit: u64,
}

impl<W: Write + ?Sized> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.written + buf.len() as u64 > self.limit {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "more bytes than the dataset holds",
            ));
        }
        self.out.write_all(buf)?;
        self.written += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
