//! Chunked storage written: each chunk through its filters (shuffle, deflate, Fletcher-32,
//! in that order, as netCDF-C applies them), and the version 1 B-tree (node type 1) that
//! indexes the chunks.

use super::encode::{UNDEFINED, put_u32, put_u64};
use super::spec::Filters;
use std::io::Write;

impl Filters {
    /// `chunk` (elements of `width` bytes) through the filters.
    pub(super) fn apply(&self, chunk: Vec<u8>, width: usize) -> std::io::Result<Vec<u8>> {
        let mut data = if self.shuffle && width > 1 {
            shuffle(&chunk, width)
        } else {
            chunk
        };
        if let Some(level) = self.deflate {
            let mut z = flate2::write::ZlibEncoder::new(
                Vec::with_capacity(data.len() / 2),
                flate2::Compression::new(level),
            );
            z.write_all(&data)?;
            data = z.finish()?;
        }
        if self.fletcher32 {
            let sum = crate::data::fletcher32_of(&data);
            data.extend_from_slice(&sum.to_le_bytes());
        }
        Ok(data)
    }
}

/// HDF5's shuffle: byte `b` of element `i` at `b * n + i`; bytes past the last whole
/// element stay at the end.
fn shuffle(data: &[u8], width: usize) -> Vec<u8> {
    let n = data.len() / width;
    let mut out = vec![0u8; data.len()];
    for (i, element) in data.chunks_exact(width).enumerate() {
        for (b, &byte) in element.iter().enumerate() {
            out[b * n + i] = byte;
        }
    }
    out[n * width..].copy_from_slice(&data[n * width..]);
    out
}

/// A chunk written: where its first element is (in elements, per dimension), where its
/// bytes are and how many there are.
#[derive(Clone, Debug)]
pub(super) struct Stored {
    pub offsets: Vec<u64>,
    pub address: u64,
    pub size: u32,
}

/// A version 1 B-tree node holds up to 2K children; HDF5 reads chunk B-trees with K = 32
/// (files with a version 2 or 3 superblock have no other) and reads every node at its full
/// size.
const CHILDREN: usize = 64;

/// The bytes of a chunk B-tree node whose keys are `rank + 1` offsets.
pub(super) fn node_len(rank: usize) -> u64 {
    let key = 8 + 8 * (rank as u64 + 1);
    24 + CHILDREN as u64 * 8 + (CHILDREN as u64 + 1) * key
}

/// One key: the chunk's stored size, its filter mask (nothing skipped) and its offsets,
/// with the element's byte offset (0) last.
fn key(out: &mut Vec<u8>, size: u32, offsets: &[u64]) {
    put_u32(out, size);
    put_u32(out, 0);
    for &o in offsets {
        put_u64(out, o);
    }
    put_u64(out, 0);
}

/// The B-tree indexing `chunks` (in C order of their offsets, at least one) of `chunk`
/// elements, written from `start` on. Returns its bytes and the root's address.
pub(super) fn btree(chunks: &[Stored], chunk: &[u64], start: u64) -> (Vec<u8>, u64) {
    let rank = chunk.len();
    let len = node_len(rank);
    // The key past the last chunk: its offsets moved on by a chunk in every dimension.
    let last = &chunks[chunks.len() - 1];
    let end: Vec<u64> = last.offsets.iter().zip(chunk).map(|(o, c)| o + c).collect();
    // Each level: (first key's size and offsets, address) of each node or chunk.
    let mut level: Vec<(u32, Vec<u64>, u64)> = chunks
        .iter()
        .map(|c| (c.size, c.offsets.clone(), c.address))
        .collect();
    let mut out = Vec::new();
    let mut at = start;
    let mut depth = 0u8;
    loop {
        let nodes = level.len().div_ceil(CHILDREN);
        let first_node = at;
        let mut above = Vec::with_capacity(nodes);
        for (n, children) in level.chunks(CHILDREN).enumerate() {
            let node_start = out.len();
            out.extend_from_slice(b"TREE");
            out.push(1);
            out.push(depth);
            out.extend_from_slice(&(children.len() as u16).to_le_bytes());
            let sibling = |k: usize| first_node + k as u64 * len;
            put_u64(&mut out, if n == 0 { UNDEFINED } else { sibling(n - 1) });
            put_u64(
                &mut out,
                if n + 1 == nodes {
                    UNDEFINED
                } else {
                    sibling(n + 1)
                },
            );
            for (size, offsets, address) in children {
                key(&mut out, *size, offsets);
                put_u64(&mut out, *address);
            }
            match level.get((n + 1) * CHILDREN) {
                Some((size, offsets, _)) => key(&mut out, *size, offsets),
                None => key(&mut out, 0, &end),
            }
            out.resize(node_start + len as usize, 0);
            above.push((children[0].0, children[0].1.clone(), sibling(n)));
        }
        at += nodes as u64 * len;
        if nodes == 1 {
            return (out, first_node);
        }
        level = above;
        depth += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_is_what_the_reader_undoes() {
        let data: Vec<u8> = (0..23).collect();
        let shuffled = shuffle(&data, 4);
        assert_eq!(&shuffled[..5], &[0, 4, 8, 12, 16]);
        assert_eq!(&shuffled[20..], &[20, 21, 22]);
        assert_eq!(crate::data::unshuffle(&shuffled, 4), data);
    }

    #[test]
    fn a_tree_of_many_chunks_grows_levels_whose_nodes_are_read_at_full_size() {
        let chunks: Vec<Stored> = (0..200u64)
            .map(|i| Stored {
                offsets: vec![i * 2],
                address: 1000 + i,
                size: 8,
            })
            .collect();
        let (bytes, root) = btree(&chunks, &[2], 4096);
        let len = node_len(1);
        // 4 leaves and a root above them.
        assert_eq!(bytes.len() as u64, 5 * len);
        assert_eq!(root, 4096 + 4 * len);
        let root_node = &bytes[(4 * len) as usize..];
        assert_eq!(&root_node[..6], b"TREE\x01\x01");
        assert_eq!(u16::from_le_bytes([root_node[6], root_node[7]]), 4);
    }
}
