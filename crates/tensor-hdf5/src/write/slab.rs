//! The sink a chunked dataset's elements are written into: it gathers a slab — as many
//! outermost rows as a chunk spans, every other dimension whole — cuts it into chunks
//! (padded with the fill value past the dataset's edges), filters them (on every core with
//! the `parallel` feature) and writes them, in C order of their offsets.

use super::chunks::Stored;
use super::fail::{io, overflow};
use super::spec::{DatasetSpec, Filters};
use crate::error::{Error, Result};
use std::io::Write;

pub(super) struct Slabs<'a, W: Write + ?Sized> {
    out: &'a mut W,
    at: u64,
    dims: Vec<u64>,
    chunk: Vec<u64>,
    width: usize,
    filters: Filters,
    fill: Vec<u8>,
    /// Bytes per outermost index.
    row: usize,
    buffer: Vec<u8>,
    /// The outermost index the buffer starts at.
    first_row: u64,
    stored: Vec<Stored>,
    written: u64,
    total: u64,
}

impl<'a, W: Write + ?Sized> Slabs<'a, W> {
    pub(super) fn new(spec: &DatasetSpec, chunk: &[u64], out: &'a mut W, at: u64) -> Result<Self> {
        let width = spec.ty.size() as usize;
        let row = spec.dims[1..]
            .iter()
            .try_fold(width as u64, |n, &d| n.checked_mul(d))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or(overflow("HDF5 dataset row"))?;
        let total = (row as u64)
            .checked_mul(spec.dims[0])
            .ok_or(overflow("HDF5 dataset size"))?;
        let fill = match &spec.fill {
            Some(f) if f.len() == width => f.clone(),
            _ => vec![0; width],
        };
        Ok(Slabs {
            out,
            at,
            dims: spec.dims.clone(),
            chunk: chunk.to_vec(),
            width,
            filters: spec.filters,
            fill,
            row,
            buffer: Vec::new(),
            first_row: 0,
            stored: Vec::new(),
            written: 0,
            total,
        })
    }

    fn slab_len(&self) -> usize {
        // chunk[0] rows, or the rows left.
        let rows = self.chunk[0].min(self.dims[0] - self.first_row);
        self.row * rows as usize
    }

    /// Cuts the buffered rows into chunks and writes them.
    fn flush_slab(&mut self) -> Result<()> {
        let rows = (self.buffer.len() / self.row.max(1)) as u64;
        let mut slab_dims = self.dims.clone();
        slab_dims[0] = rows;
        // Every chunk position over the inner dimensions, in C order.
        let counts: Vec<u64> = self.dims[1..]
            .iter()
            .zip(&self.chunk[1..])
            .map(|(d, c)| d.div_ceil(*c))
            .collect();
        let positions: u64 = counts.iter().product();
        let origins: Vec<Vec<u64>> = (0..positions)
            .map(|mut p| {
                let mut origin = vec![0u64; self.dims.len()];
                for i in (0..counts.len()).rev() {
                    origin[i + 1] = (p % counts[i]) * self.chunk[i + 1];
                    p /= counts[i];
                }
                origin
            })
            .collect();
        let cut = |origin: &Vec<u64>| -> std::io::Result<Vec<u8>> {
            let bytes = extract(
                &self.buffer,
                &slab_dims,
                origin,
                &self.chunk,
                self.width,
                &self.fill,
            );
            self.filters.apply(bytes, self.width)
        };
        #[cfg(feature = "parallel")]
        let filtered: Vec<std::io::Result<Vec<u8>>> = {
            use rayon::prelude::*;
            origins.par_iter().map(cut).collect()
        };
        #[cfg(not(feature = "parallel"))]
        let filtered: Vec<std::io::Result<Vec<u8>>> = origins.iter().map(cut).collect();
        for (mut origin, bytes) in origins.into_iter().zip(filtered) {
            let bytes = bytes.map_err(io)?;
            let size = u32::try_from(bytes.len())
                .map_err(|_| Error::CannotWrite("a filtered chunk of 4 GiB or more".into()))?;
            self.out.write_all(&bytes).map_err(io)?;
            origin[0] = self.first_row;
            self.stored.push(Stored {
                offsets: origin,
                address: self.at,
                size,
            });
            self.at += u64::from(size);
        }
        self.first_row += rows;
        self.buffer.clear();
        Ok(())
    }

    /// The chunks written, where the file now ends, and how many bytes were given.
    pub(super) fn finish(mut self) -> Result<(Vec<Stored>, u64, u64)> {
        if !self.buffer.is_empty() {
            self.flush_slab()?;
        }
        Ok((self.stored, self.at, self.written))
    }
}

impl<W: Write + ?Sized> Write for Slabs<'_, W> {
    fn write(&mut self, mut buf: &[u8]) -> std::io::Result<usize> {
        let given = buf.len();
        if self.written + given as u64 > self.total {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "more bytes than the dataset holds",
            ));
        }
        while !buf.is_empty() {
            let room = self.slab_len() - self.buffer.len();
            let take = room.min(buf.len());
            if self.buffer.capacity() == 0 {
                self.buffer.reserve_exact(self.slab_len());
            }
            self.buffer.extend_from_slice(&buf[..take]);
            buf = &buf[take..];
            if self.buffer.len() == self.slab_len() {
                self.flush_slab().map_err(std::io::Error::other)?;
            }
        }
        self.written += given as u64;
        Ok(given)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The chunk of `chunk` elements at `origin` in the C-ordered `slab` of `dims`, elements
/// past the slab's edges `fill`.
fn extract(
    slab: &[u8],
    dims: &[u64],
    origin: &[u64],
    chunk: &[u64],
    width: usize,
    fill: &[u8],
) -> Vec<u8> {
    let elements: u64 = chunk.iter().product();
    let mut out: Vec<u8> = fill
        .iter()
        .copied()
        .cycle()
        .take(elements as usize * width)
        .collect();
    let last = dims.len() - 1;
    let run = chunk[last].min(dims[last].saturating_sub(origin[last])) as usize * width;
    let stride = |shape: &[u64], i: usize| shape[i + 1..].iter().product::<u64>();
    let mut k = vec![0u64; last];
    loop {
        if (0..last).all(|i| origin[i] + k[i] < dims[i]) {
            let src: u64 = (0..last)
                .map(|i| (origin[i] + k[i]) * stride(dims, i))
                .sum::<u64>()
                + origin[last];
            let dst: u64 = (0..last).map(|i| k[i] * stride(chunk, i)).sum();
            let (src, dst) = (src as usize * width, dst as usize * width);
            out[dst..dst + run].copy_from_slice(&slab[src..src + run]);
        }
        // The next index over the chunk's outer dimensions.
        let mut i = last;
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            k[i] += 1;
            if k[i] < chunk[i] {
                break;
            }
            k[i] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::extract;

    #[test]
    fn a_chunk_past_the_edges_is_padded_with_the_fill() {
        // A 3 x 3 slab of bytes 0..9; the 2 x 2 chunk at (2, 2) holds only element 8.
        let slab: Vec<u8> = (0..9).collect();
        assert_eq!(
            extract(&slab, &[3, 3], &[0, 0], &[2, 2], 1, &[0xff]),
            [0, 1, 3, 4]
        );
        assert_eq!(
            extract(&slab, &[3, 3], &[2, 2], &[2, 2], 1, &[0xff]),
            [8, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            extract(&slab, &[3, 3], &[0, 2], &[2, 2], 1, &[0xff]),
            [2, 0xff, 5, 0xff]
        );
        assert_eq!(extract(&slab[..3], &[3], &[2], &[2], 1, &[7]), [2, 7]);
    }
}
