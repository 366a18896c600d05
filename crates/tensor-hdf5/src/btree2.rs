//! Version 2 B-trees (`BTHD`, `BTIN`, `BTLF`), walked to collect every record: how dense
//! groups index their links by name (record type 5) and dense attribute storage its
//! attributes (type 8). Checksums are verified; a node is visited at most once.

use crate::cursor::Sizes;
use crate::error::{Error, Result};
use crate::lookup3;

/// Signature, version, type and checksum: the bytes every node spends on itself.
const PREFIX: u64 = 10;

/// The most nodes one tree is walked through.
const MAX_NODES: usize = 1 << 16;

/// Bytes needed to encode `n` (HDF5's `H5VM_limit_enc_size`).
fn enc_size(n: u64) -> u8 {
    // floor(log2(n)) / 8 + 1, with log2(0) taken as 0.
    let log2 = n.max(1).ilog2();
    (log2 / 8 + 1) as u8
}

/// Per depth: how many records a node holds at most, and the widths of a child pointer's
/// record counts.
struct Levels {
    max_nrec_size: u8,
    /// For each depth d ≥ 1: the bytes of the cumulated record count a pointer to a node at
    /// depth d - 1 carries (none for d = 1).
    cum_size: Vec<u8>,
}

fn levels(node_size: u64, record_size: u64, depth: u16, offsets: u8) -> Levels {
    let leaf_max = node_size.saturating_sub(PREFIX) / record_size.max(1);
    let max_nrec_size = enc_size(leaf_max);
    // cum_max_nrec and its size, level by level.
    let mut cum_max = vec![leaf_max];
    let mut cum_size = vec![enc_size(leaf_max)];
    for d in 1..=u64::from(depth) {
        let pointer = u64::from(offsets)
            + u64::from(max_nrec_size)
            + if d > 1 {
                u64::from(cum_size[(d - 1) as usize])
            } else {
                0
            };
        let max = node_size.saturating_sub(PREFIX) / (record_size + pointer);
        let prev = cum_max[(d - 1) as usize];
        let cum = max
            .checked_add(1)
            .and_then(|m| m.checked_mul(prev))
            .and_then(|m| m.checked_add(max))
            .unwrap_or(u64::MAX);
        cum_max.push(cum);
        cum_size.push(enc_size(cum));
    }
    Levels {
        max_nrec_size,
        cum_size,
    }
}

/// Every record of the tree whose header is at `address`, each `record_size` bytes
/// borrowed from the file, in key order; the tree's record type must be `record_type`.
pub(crate) fn records(
    bytes: &[u8],
    address: u64,
    record_type: u8,
    sizes: Sizes,
) -> Result<Vec<&[u8]>> {
    let mut c = sizes.cursor(bytes, address, "version 2 B-tree header")?;
    let start = c.offset();
    if c.take(4)? != b"BTHD" {
        return Err(Error::malformed(
            "version 2 B-tree header",
            start,
            "no `BTHD` signature",
        ));
    }
    let _version = c.u8()?;
    let kind = c.u8()?;
    if kind != record_type {
        return Err(Error::malformed(
            "version 2 B-tree header",
            start,
            format!("record type {kind} where {record_type} belongs"),
        ));
    }
    let node_size = u64::from(c.u32()?);
    let record_size = u64::from(c.u16()?);
    let depth = c.u16()?;
    c.skip(2)?;
    let root = c.address()?;
    let root_records = c.u16()?;
    let _total = c.length()?;
    lookup3::verify(bytes, start, c.offset(), "version 2 B-tree header")?;
    if record_size == 0 || node_size <= PREFIX || depth > 64 {
        return Err(Error::malformed(
            "version 2 B-tree header",
            start,
            format!("nodes of {node_size} bytes, records of {record_size}, depth {depth}"),
        ));
    }
    let Some(root) = root else {
        return Ok(Vec::new());
    };
    let lv = levels(node_size, record_size, depth, sizes.offsets);
    let mut out = Vec::new();
    // (address, depth, records): walked depth first, left to right.
    let mut stack = vec![(root, depth, root_records)];
    let mut visited = 0usize;
    while let Some((node, d, n)) = stack.pop() {
        visited += 1;
        if visited > MAX_NODES {
            return Err(Error::malformed(
                "version 2 B-tree",
                node,
                format!("more than {MAX_NODES} nodes"),
            ));
        }
        let mut c = sizes.cursor(bytes, node, "version 2 B-tree node")?;
        let start = c.offset();
        let sig = c.take(4)?;
        let want: &[u8] = if d == 0 { b"BTLF" } else { b"BTIN" };
        if sig != want {
            return Err(Error::malformed(
                "version 2 B-tree node",
                start,
                format!("{sig:?} where {want:?} belongs"),
            ));
        }
        c.skip(2)?;
        c.check_count(u64::from(n), record_size)?;
        let mut recs = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            recs.push(c.take(record_size)?);
        }
        if d == 0 {
            lookup3::verify(bytes, start, c.offset(), "version 2 B-tree leaf")?;
            out.extend(recs);
            continue;
        }
        let mut children = Vec::with_capacity(usize::from(n) + 1);
        for _ in 0..=n {
            let child = c.address()?.ok_or_else(|| {
                Error::malformed(
                    "version 2 B-tree node",
                    start,
                    "a child at an undefined address",
                )
            })?;
            let count = c.uint(lv.max_nrec_size)?;
            if d > 1 {
                c.skip(u64::from(lv.cum_size[usize::from(d - 1)]))?;
            }
            let count = u16::try_from(count).map_err(|_| {
                Error::malformed(
                    "version 2 B-tree node",
                    start,
                    format!("a child of {count} records"),
                )
            })?;
            children.push((child, d - 1, count));
        }
        lookup3::verify(bytes, start, c.offset(), "version 2 B-tree node")?;
        // Records of an internal node sit between its children: kept in order by pushing a
        // marker-free interleave — children after their records' position is not needed for
        // listing, so records come first, then the children left to right.
        out.extend(recs);
        stack.extend(children.into_iter().rev());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::enc_size;

    #[test]
    fn encoded_sizes_are_hdf5s() {
        assert_eq!(enc_size(0), 1);
        assert_eq!(enc_size(255), 1);
        assert_eq!(enc_size(256), 2);
        assert_eq!(enc_size(65535), 2);
        assert_eq!(enc_size(65536), 3);
    }
}
