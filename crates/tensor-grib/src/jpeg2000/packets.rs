//! Tier 2 (T.800 Annex B.9–B.10): the packets of a tile, read in progression order, give
//! each code-block its coding passes and codeword bytes.

use super::Refusal;
use super::header::Order;
use super::layout::Layout;

/// What the packets gave one code-block.
#[derive(Clone, Debug, Default)]
pub(super) struct Contribution<'a> {
    pub included: bool,
    pub length_bits: u32,
    pub missing_planes: u32,
    pub passes: u32,
    pub segments: Vec<&'a [u8]>,
}

/// Reads the packet headers of a tile whose packets are `data`, one precinct per
/// resolution, and returns each code-block's contribution (in the layout's block order).
/// Every packet takes at least one byte: data that stops before the last packet is a cut
/// codestream. The standard lets a reader make what it can of one, but GRIB writers never
/// cut theirs, so it is refused as damaged rather than read as a field of made-up values.
pub(super) fn read<'a>(
    data: &'a [u8],
    layout: &Layout,
    order: &Order,
    progression_by_layer: bool,
) -> Result<Vec<Contribution<'a>>, Refusal> {
    let mut blocks = vec![Contribution::default(); layout.blocks.len()];
    let mut trees: Vec<(TagTree, TagTree)> = layout
        .bands
        .iter()
        .map(|b| {
            (
                TagTree::new(b.across, b.down),
                TagTree::new(b.across, b.down),
            )
        })
        .collect();
    // Empty resolutions have no packets. Every packet takes at least one byte, so the
    // loop ends with the data whatever the number of layers.
    let resolutions: Vec<usize> = (0..layout.resolutions.len())
        .filter(|&r| !layout.resolutions[r].area.is_empty())
        .collect();
    let layers = usize::from(order.layers);
    let mut reader = Packets { data, pos: 0 };
    let packets = resolutions.len() * layers;
    for k in 0..packets {
        if reader.pos >= data.len() {
            return Err(Refusal::malformed(format!(
                "the tile's data ends before its packet {} of {packets}",
                k + 1
            )));
        }
        let (r, l) = if progression_by_layer {
            (resolutions[k % resolutions.len()], k / resolutions.len())
        } else {
            (resolutions[k / layers], k % layers)
        };
        reader.packet(layout, r, l as u32, order, &mut blocks, &mut trees)?;
    }
    // The packets take the tile's data to its end: bytes left over were coded for another
    // layout (image or tile sizes changed in SIZ) or belong to nothing.
    if reader.pos != data.len() {
        return Err(Refusal::malformed(format!(
            "the tile's {packets} packets end at byte {} of its {} bytes",
            reader.pos,
            data.len()
        )));
    }
    Ok(blocks)
}

struct Packets<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Packets<'a> {
    fn packet(
        &mut self,
        layout: &Layout,
        r: usize,
        layer: u32,
        order: &Order,
        blocks: &mut [Contribution<'a>],
        trees: &mut [(TagTree, TagTree)],
    ) -> Result<(), Refusal> {
        let at = self.pos;
        if order.sop && self.data[self.pos..].starts_with(&[0xFF, 0x91]) {
            self.pos += 6;
        }
        let mut bits = Bits::at(self.data, self.pos);
        let mut body: Vec<(usize, usize)> = Vec::new();
        if bits.bit()? == 1 {
            for band_index in layout.resolutions[r].bands.clone() {
                let band = &layout.bands[band_index];
                let (inclusion, missing) = &mut trees[band_index];
                for i in 0..band.across * band.down {
                    let b = &mut blocks[band.first_block + i];
                    let included = if b.included {
                        bits.bit()? == 1
                    } else {
                        inclusion.decode(i, layer + 1, &mut bits)? <= layer
                    };
                    if !included {
                        continue;
                    }
                    if !b.included {
                        let mut planes = 0;
                        while missing.decode(i, planes + 1, &mut bits)? > planes {
                            planes += 1;
                            if planes > band.planes {
                                return Err(Refusal::malformed(format!(
                                    "a code-block at packet byte {at} misses more than \
                                     the band's {} bit-planes",
                                    band.planes
                                )));
                            }
                        }
                        b.included = true;
                        b.missing_planes = planes;
                        b.length_bits = 3;
                    }
                    let passes = bits.passes()?;
                    while bits.bit()? == 1 {
                        b.length_bits += 1;
                    }
                    let width = b.length_bits + passes.ilog2();
                    if width > 32 {
                        return Err(Refusal::malformed(format!(
                            "a codeword length of {width} bits in the packet at byte {at}"
                        )));
                    }
                    let length = bits.bits(width)? as usize;
                    b.passes += passes;
                    let most = 3 * band.planes.saturating_sub(b.missing_planes);
                    if b.passes > most.saturating_sub(2) {
                        return Err(Refusal::malformed(format!(
                            "a code-block with {} coding passes for {} bit-planes, \
                             packet at byte {at}",
                            b.passes,
                            band.planes.saturating_sub(b.missing_planes)
                        )));
                    }
                    body.push((band.first_block + i, length));
                }
            }
        }
        self.pos = bits.end();
        if order.eph && self.data[self.pos.min(self.data.len())..].starts_with(&[0xFF, 0x92]) {
            self.pos += 2;
        }
        for (block, length) in body {
            let end = self
                .pos
                .checked_add(length)
                .filter(|&e| e <= self.data.len())
                .ok_or_else(|| {
                    Refusal::malformed(format!("the packet at byte {at} runs past its tile's data"))
                })?;
            blocks[block].segments.push(&self.data[self.pos..end]);
            self.pos = end;
        }
        Ok(())
    }
}

/// The packet header's bits: after a 0xFF byte, the next byte carries only seven.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    byte: u8,
    left: u8,
}

impl<'a> Bits<'a> {
    fn at(data: &'a [u8], pos: usize) -> Self {
        Bits {
            data,
            pos,
            byte: 0,
            left: 0,
        }
    }

    fn bit(&mut self) -> Result<u32, Refusal> {
        if self.left == 0 {
            let stuffed = self.byte == 0xFF;
            self.byte = *self
                .data
                .get(self.pos)
                .ok_or_else(|| Refusal::malformed("a packet header runs past its tile's data"))?;
            self.pos += 1;
            self.left = if stuffed { 7 } else { 8 };
        }
        self.left -= 1;
        Ok(u32::from(self.byte >> self.left) & 1)
    }

    fn bits(&mut self, n: u32) -> Result<u32, Refusal> {
        let mut v = 0u32;
        for _ in 0..n {
            v = (v << 1) | self.bit()?;
        }
        Ok(v)
    }

    /// The number of coding passes (Table B.4).
    fn passes(&mut self) -> Result<u32, Refusal> {
        if self.bit()? == 0 {
            return Ok(1);
        }
        if self.bit()? == 0 {
            return Ok(2);
        }
        let v = self.bits(2)?;
        if v < 3 {
            return Ok(3 + v);
        }
        let v = self.bits(5)?;
        if v < 31 {
            return Ok(6 + v);
        }
        Ok(37 + self.bits(7)?)
    }

    /// Where the packet body starts: the header ends on a byte boundary, and a header
    /// whose last byte is 0xFF is followed by one more (stuffed) byte.
    fn end(&self) -> usize {
        if self.byte == 0xFF && self.pos > 0 {
            self.pos + 1
        } else {
            self.pos
        }
    }
}

/// A tag tree (T.800 B.10.2): a quad-tree of minima over a grid of code-blocks, decoded
/// lazily against rising thresholds.
struct TagTree {
    /// Per node: the lower bound known so far, and the value once known.
    low: Vec<u32>,
    value: Vec<u32>,
    /// Each level's width and first node; level 0 holds the leaves.
    levels: Vec<(usize, usize)>,
}

impl TagTree {
    fn new(width: usize, height: usize) -> Self {
        let mut levels = Vec::new();
        let (mut w, mut h, mut n) = (width.max(1), height.max(1), 0);
        loop {
            levels.push((w, n));
            n += w * h;
            if w == 1 && h == 1 {
                break;
            }
            w = w.div_ceil(2);
            h = h.div_ceil(2);
        }
        TagTree {
            low: vec![0; n],
            value: vec![u32::MAX; n],
            levels,
        }
    }

    /// Decodes leaf `leaf` until its value is known or is at least `threshold`; returns the
    /// value if known, else `threshold`.
    fn decode(&mut self, leaf: usize, threshold: u32, bits: &mut Bits<'_>) -> Result<u32, Refusal> {
        let (w0, _) = self.levels[0];
        let (mut x, mut y) = (leaf % w0, leaf / w0);
        let mut path = [0usize; 40];
        for (depth, &(w, first)) in self.levels.iter().enumerate() {
            path[depth] = first + y * w + x;
            x /= 2;
            y /= 2;
        }
        let mut low = 0;
        for &node in path[..self.levels.len()].iter().rev() {
            low = low.max(self.low[node]);
            while low < threshold && low < self.value[node] {
                if bits.bit()? == 1 {
                    self.value[node] = low;
                } else {
                    low += 1;
                }
            }
            self.low[node] = low;
        }
        let leaf_node = path[0];
        Ok(if self.value[leaf_node] < threshold {
            self.value[leaf_node]
        } else {
            threshold
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_tree_reuses_what_its_parents_told() {
        // Leaves (1, 2) under a root of 1. Leaf 0: root "0 1", leaf "1"; leaf 1 starts
        // from the root's 1: "0 1".
        let data = [0b0110_1000u8];
        let mut bits = Bits::at(&data, 0);
        let mut tree = TagTree::new(2, 1);
        assert_eq!(tree.decode(0, 10, &mut bits).unwrap(), 1);
        assert_eq!(tree.decode(1, 10, &mut bits).unwrap(), 2);
        // Known values cost no more bits; an unknown leaf below a threshold reports it.
        assert_eq!(tree.decode(0, 10, &mut bits).unwrap(), 1);
        let mut fresh = TagTree::new(1, 1);
        let zero = [0u8];
        let mut bits = Bits::at(&zero, 0);
        assert_eq!(fresh.decode(0, 3, &mut bits).unwrap(), 3);
    }

    #[test]
    fn pass_counts_follow_table_b4() {
        let cases: [(&[u8], u32); 5] = [
            (&[0b0000_0000], 1),
            (&[0b1000_0000], 2),
            (&[0b1110_0000], 5),
            (&[0b1111_0000, 0b0000_0000], 6),
            (&[0b1111_1111, 0b0111_1111, 0b1000_0000], 164),
        ];
        for (data, expected) in cases {
            let mut bits = Bits::at(data, 0);
            assert_eq!(bits.passes().unwrap(), expected, "{data:?}");
        }
    }
}
