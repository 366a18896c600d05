//! The global heap: where variable-length values (strings, lists of object references)
//! live, each attribute element pointing at its object by the collection's address and the
//! object's index. Objects are placed in collections of at most 1 MiB (one larger object
//! gets a collection of its own) and 65535 objects.

use super::encode::{put_u16, put_u32, put_u64};

/// An object's contents: bytes, or object references to datasets resolved when their
/// headers have addresses.
#[derive(Clone, Debug)]
pub(super) enum Object {
    Bytes(Vec<u8>),
    References(Vec<usize>),
}

impl Object {
    fn len(&self) -> u64 {
        match self {
            Object::Bytes(b) => b.len() as u64,
            Object::References(r) => 8 * r.len() as u64,
        }
    }
}

/// A collection's header (signature, version, reserved, size) and an object's header
/// (index, reference count, reserved, size).
const HEADER: u64 = 16;

/// The smallest collection HDF5 makes.
const MIN_COLLECTION: u64 = 4096;

/// Where collections close.
const MAX_COLLECTION: u64 = 1 << 20;

/// The heap being built.
#[derive(Debug, Default)]
pub(super) struct Heap {
    objects: Vec<Object>,
}

/// Where the heap's objects went, once placed.
#[derive(Debug, Default)]
pub(super) struct Placed {
    /// For each object: its collection's address and its index in it.
    pub ids: Vec<(u64, u32)>,
    /// Each collection: its first object, its object count and its size.
    collections: Vec<(usize, usize, u64)>,
    /// The heap's length in the file.
    pub len: u64,
}

fn padded(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

impl Heap {
    /// Adds `object`; its number is the return value.
    pub(super) fn add(&mut self, object: Object) -> usize {
        self.objects.push(object);
        self.objects.len() - 1
    }

    /// Places every object in collections from `start` on.
    pub(super) fn place(&self, start: u64) -> Placed {
        let mut placed = Placed::default();
        let mut at = start;
        let mut first = 0;
        let mut used = HEADER;
        let close = |placed: &mut Placed, at: &mut u64, first: usize, end: usize, used: u64| {
            let size = if used + HEADER <= MIN_COLLECTION {
                MIN_COLLECTION
            } else {
                used
            };
            placed.collections.push((first, end - first, size));
            *at += size;
        };
        for (i, o) in self.objects.iter().enumerate() {
            let need = HEADER + padded(o.len());
            if i > first && (used + need > MAX_COLLECTION || i - first == usize::from(u16::MAX)) {
                close(&mut placed, &mut at, first, i, used);
                first = i;
                used = HEADER;
            }
            used += need;
            placed.ids.push((at, (i - first + 1) as u32));
        }
        if first < self.objects.len() {
            close(&mut placed, &mut at, first, self.objects.len(), used);
        }
        placed.len = at - start;
        placed
    }

    /// The collections' bytes, references resolved by `address`.
    pub(super) fn encode(&self, placed: &Placed, address: &dyn Fn(usize) -> u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(usize::try_from(placed.len).unwrap_or(0));
        for &(first, count, size) in &placed.collections {
            let start = out.len();
            out.extend_from_slice(b"GCOL");
            out.extend_from_slice(&[1, 0, 0, 0]);
            put_u64(&mut out, size);
            for (k, o) in self.objects[first..first + count].iter().enumerate() {
                put_u16(&mut out, (k + 1) as u16);
                put_u16(&mut out, 1);
                put_u32(&mut out, 0);
                put_u64(&mut out, o.len());
                match o {
                    Object::Bytes(b) => out.extend_from_slice(b),
                    Object::References(r) => {
                        for &d in r {
                            put_u64(&mut out, address(d));
                        }
                    }
                }
                out.resize(out.len() + (padded(o.len()) - o.len()) as usize, 0);
            }
            let used = (out.len() - start) as u64;
            if used < size {
                // The free space, as object 0 (its size counting its own header).
                put_u16(&mut out, 0);
                put_u16(&mut out, 0);
                put_u32(&mut out, 0);
                put_u64(&mut out, size - used);
                out.resize(start + size as usize, 0);
            }
        }
        out
    }
}
