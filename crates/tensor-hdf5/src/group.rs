//! A group's members: link messages in its header (compact new-style groups), or a symbol
//! table (old-style groups: a version 1 B-tree of symbol nodes, names in a local heap).
//! Dense new-style groups (a fractal heap and a version 2 B-tree) are named and refused.

use crate::cursor::{Cursor, Sizes};
use crate::error::{Error, Result};
use crate::message::{Link, Target, kind};
use crate::object_header::Message;

/// The most B-tree nodes and symbol nodes one group's table is walked through: a bound on
/// the work a looping or fanning-out table can ask for.
const MAX_NODES: usize = 1 << 16;

/// The members of the group whose header holds `messages`, in name order for a symbol
/// table, in creation (or header) order otherwise.
pub(crate) fn links(bytes: &[u8], messages: &[Message<'_>], sizes: Sizes) -> Result<Vec<Link>> {
    if let Some(m) = messages.iter().find(|m| m.kind == kind::SYMBOL_TABLE) {
        let mut c = Cursor {
            bytes: m.data,
            at: 0,
            offsets: sizes.offsets,
            lengths: sizes.lengths,
            what: "symbol table message",
        };
        let btree = c
            .address()?
            .ok_or_else(|| Error::malformed("symbol table message", m.at, "no B-tree"))?;
        let heap = c
            .address()?
            .ok_or_else(|| Error::malformed("symbol table message", m.at, "no local heap"))?;
        return symbol_table(bytes, btree, heap, sizes);
    }
    if let Some(m) = messages.iter().find(|m| m.kind == kind::LINK_INFO) {
        let mut c = Cursor {
            bytes: m.data,
            at: 0,
            offsets: sizes.offsets,
            lengths: sizes.lengths,
            what: "link info message",
        };
        let _version = c.u8()?;
        let flags = c.u8()?;
        if flags & 1 != 0 {
            c.skip(8)?;
        }
        if let Some(heap) = c.address()? {
            let index = c.address()?.ok_or_else(|| {
                Error::malformed("link info message", m.at, "a heap without a name index")
            })?;
            return dense(bytes, heap, index, sizes);
        }
    }
    let mut out: Vec<Link> = messages
        .iter()
        .filter(|m| m.kind == kind::LINK)
        .map(|m| Link::decode(m.data, m.at, sizes.offsets))
        .collect::<Result<_>>()?;
    out.sort_by_key(|l| l.order.unwrap_or(u64::MAX));
    Ok(out)
}

/// The members of a dense new-style group: link messages in a fractal heap, found through
/// the version 2 B-tree that indexes them by name (records: the name's hash, a heap ID).
fn dense(bytes: &[u8], heap: u64, index: u64, sizes: Sizes) -> Result<Vec<Link>> {
    let heap = crate::fractal_heap::Heap::open(bytes, heap, sizes)?;
    let id_len = usize::from(heap.id_len());
    let mut out = Vec::new();
    for record in crate::btree2::records(bytes, index, 5, sizes)? {
        let id = record.get(4..4 + id_len).ok_or_else(|| {
            Error::malformed("link name record", index, "shorter than its heap ID")
        })?;
        let message = heap.object(bytes, id, sizes)?;
        out.push(Link::decode(message, index, sizes.offsets)?);
    }
    out.sort_by(|a, b| a.order.cmp(&b.order).then_with(|| a.name.cmp(&b.name)));
    Ok(out)
}

/// The local heap's data segment: where member names are.
fn local_heap(bytes: &[u8], address: u64, sizes: Sizes) -> Result<&[u8]> {
    let mut c = sizes.cursor(bytes, address, "local heap")?;
    if c.take(4)? != b"HEAP" {
        return Err(Error::malformed(
            "local heap",
            c.offset() - 4,
            "no `HEAP` signature",
        ));
    }
    c.skip(4)?;
    let size = c.length()?;
    let _free = c.length()?;
    let data = c
        .address()?
        .ok_or_else(|| Error::malformed("local heap", address, "no data segment"))?;
    let mut d = sizes.cursor(bytes, data, "local heap data")?;
    d.take(size)
}

/// A NUL-terminated name at `offset` of a local heap's data.
fn heap_name(heap: &[u8], offset: u64) -> Result<String> {
    let start = usize::try_from(offset)
        .ok()
        .filter(|&o| o < heap.len())
        .ok_or_else(|| {
            Error::malformed("local heap", offset, "a name offset past the heap's data")
        })?;
    let end = heap[start..]
        .iter()
        .position(|&b| b == 0)
        .map_or(heap.len(), |n| start + n);
    Ok(std::str::from_utf8(&heap[start..end])
        .map_err(|e| {
            Error::malformed(
                "local heap",
                offset,
                format!("a name that is not UTF-8: {e}"),
            )
        })?
        .to_owned())
}

/// The members of an old-style group: every symbol node under its B-tree.
fn symbol_table(bytes: &[u8], btree: u64, heap: u64, sizes: Sizes) -> Result<Vec<Link>> {
    let names = local_heap(bytes, heap, sizes)?;
    let mut out = Vec::new();
    let mut stack = vec![btree];
    let mut visited = 0usize;
    while let Some(node) = stack.pop() {
        visited += 1;
        if visited > MAX_NODES {
            return Err(Error::malformed(
                "group B-tree",
                node,
                format!("more than {MAX_NODES} nodes"),
            ));
        }
        let mut c = sizes.cursor(bytes, node, "group B-tree node")?;
        let sig = c.take(4)?;
        if sig == b"SNOD" {
            let _version = c.u8()?;
            c.skip(1)?;
            let n = c.u16()?;
            c.check_count(u64::from(n), u64::from(sizes.offsets) * 2 + 24)?;
            for _ in 0..n {
                let name = c.length_or_offset()?;
                let header = c.address()?;
                c.skip(4 + 4 + 16)?;
                let Some(header) = header else { continue };
                out.push(Link {
                    name: heap_name(names, name)?,
                    target: Target::Hard(header),
                    order: None,
                });
            }
            continue;
        }
        if sig != b"TREE" {
            return Err(Error::malformed(
                "group B-tree node",
                node,
                "neither `TREE` nor `SNOD`",
            ));
        }
        let node_type = c.u8()?;
        if node_type != 0 {
            return Err(Error::malformed(
                "group B-tree node",
                node,
                format!("node type {node_type} in a group's tree"),
            ));
        }
        let _level = c.u8()?;
        let used = c.u16()?;
        let _left = c.address()?;
        let _right = c.address()?;
        c.check_count(
            u64::from(used),
            u64::from(sizes.lengths) + u64::from(sizes.offsets),
        )?;
        let _key = c.length()?;
        let mut children = Vec::with_capacity(usize::from(used));
        for _ in 0..used {
            if let Some(child) = c.address()? {
                children.push(child);
            }
            let _key = c.length()?;
        }
        // Walked in order: the last pushed is read first.
        stack.extend(children.into_iter().rev());
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}
