//! Tier 1: one code-block's bit-planes, decoded from its MQ-coded passes (T.800 Annex D).
//!
//! Each coefficient carries a flag word: the significance of its eight neighbours (bits
//! 0–7), the signs of its four direct neighbours (bits 8–11), and its own state (bits
//! 12–15). A coefficient that becomes significant tells its neighbours at once, so every
//! context is a table lookup.

use super::mq::{self, Mq, RUN_LENGTH, UNIFORM};

const N: u16 = 0x01;
const S: u16 = 0x02;
const W: u16 = 0x04;
const E: u16 = 0x08;
const NW: u16 = 0x10;
const NE: u16 = 0x20;
const SW: u16 = 0x40;
const SE: u16 = 0x80;
const NEIGHBOURS: u16 = 0xFF;
const N_NEG: u16 = 0x100;
const S_NEG: u16 = 0x200;
const W_NEG: u16 = 0x400;
const E_NEG: u16 = 0x800;
const SIGNIFICANT: u16 = 0x1000;
const VISITED: u16 = 0x2000;
const REFINED: u16 = 0x4000;
const NEGATIVE: u16 = 0x8000;

/// Code-block style bits (COD's `SPcod`) this decoder follows. Selective arithmetic coding
/// bypass (0x01), termination on each pass (0x04) and high-throughput blocks (0x40) change
/// how the codeword segments are cut, and are left to the general decoder.
pub(super) const RESET_CONTEXTS: u8 = 0x02;
pub(super) const VERTICALLY_CAUSAL: u8 = 0x08;
pub(super) const SEGMENTATION_SYMBOLS: u8 = 0x20;
pub(super) const UNSUPPORTED_STYLES: u8 = 0x01 | 0x04 | 0x40 | 0x80;

/// The orientation of a sub-band, which selects the zero-coding table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Orientation {
    Ll,
    Hl,
    Lh,
    Hh,
}

/// Zero-coding contexts (Table D.1) for every neighbourhood, per orientation: LL and LH
/// count horizontal neighbours first, HL vertical ones, HH diagonals.
const ZERO_CODING: [[u8; 256]; 3] = {
    let mut t = [[0u8; 256]; 3];
    let mut f = 0;
    while f < 256 {
        let h = bit(f, W) + bit(f, E);
        let v = bit(f, N) + bit(f, S);
        let d = bit(f, NW) + bit(f, NE) + bit(f, SW) + bit(f, SE);
        t[0][f] = low_pass_context(h, v, d);
        t[1][f] = low_pass_context(v, h, d);
        let hv = h + v;
        t[2][f] = match d {
            0 => match hv {
                0 => 0,
                1 => 1,
                _ => 2,
            },
            1 => match hv {
                0 => 3,
                1 => 4,
                _ => 5,
            },
            2 => {
                if hv == 0 {
                    6
                } else {
                    7
                }
            }
            _ => 8,
        };
        f += 1;
    }
    t
};

const fn bit(f: usize, mask: u16) -> u8 {
    (f & mask as usize != 0) as u8
}

/// A neighbour's contribution to a sign context: +1 significant and positive, −1
/// significant and negative, 0 insignificant.
const fn contribution(i: usize, sig: u16, neg: u16) -> i32 {
    if i & sig as usize == 0 {
        0
    } else if i & (neg >> 4) as usize != 0 {
        -1
    } else {
        1
    }
}

const fn clamp_unit(x: i32) -> i32 {
    if x > 1 {
        1
    } else if x < -1 {
        -1
    } else {
        x
    }
}

const fn low_pass_context(h: u8, v: u8, d: u8) -> u8 {
    match h {
        0 => match v {
            0 => match d {
                0 => 0,
                1 => 1,
                _ => 2,
            },
            1 => 3,
            _ => 4,
        },
        1 => {
            if v > 0 {
                7
            } else if d > 0 {
                6
            } else {
                5
            }
        }
        _ => 8,
    }
}

/// Sign contexts (Table D.3) and the bit each decoded sign is combined with (exclusive
/// or), indexed by the four direct neighbours' significance (bits 0–3) and signs (4–7).
const SIGN_CODING: [(u8, u8); 256] = {
    let mut t = [(0u8, 0u8); 256];
    let mut i = 0;
    while i < 256 {
        let h = clamp_unit(contribution(i, W, W_NEG) + contribution(i, E, E_NEG));
        let v = clamp_unit(contribution(i, N, N_NEG) + contribution(i, S, S_NEG));
        t[i] = match (h, v) {
            (1, 1) => (13, 0),
            (1, 0) => (12, 0),
            (1, _) => (11, 0),
            (0, 1) => (10, 0),
            (0, 0) => (9, 0),
            (0, _) => (10, 1),
            (_, 1) => (11, 1),
            (_, 0) => (12, 1),
            _ => (13, 1),
        };
        i += 1;
    }
    t
};

/// What tier 2 found for one code-block.
pub(super) struct Coded<'a> {
    pub width: usize,
    pub height: usize,
    pub orientation: Orientation,
    /// Magnitude bit-planes of the band (`Mb`) less the missing most significant ones.
    pub planes: u32,
    /// Coding passes included, the first a cleanup pass.
    pub passes: u32,
    pub style: u8,
    pub data: &'a [u8],
}

/// Decodes a code-block into `out` (`width × height`, row-major): each coefficient is its
/// sign times twice its magnitude, plus one half step of the last bit-plane decoded for it
/// (the mid-point reconstruction of T.800 E.1.1.2, as OpenJPEG computes it). Malformed when
/// the passes need more of the segment than it holds.
pub(super) fn decode(block: &Coded<'_>, out: &mut [i32]) -> Result<(), super::Refusal> {
    let (w, h) = (block.width, block.height);
    out.fill(0);
    if block.passes == 0 || block.planes == 0 || w == 0 || h == 0 {
        return Ok(());
    }
    let stride = w + 2;
    let mut flags = vec![0u16; stride * (h + 2)];
    let mut cx = mq::initial_contexts();
    let mut mq = Mq::new(block.data);
    let zc = &ZERO_CODING[match block.orientation {
        Orientation::Ll | Orientation::Lh => 0,
        Orientation::Hl => 1,
        Orientation::Hh => 2,
    }];
    let causal = block.style & VERTICALLY_CAUSAL != 0;
    let mut coder = Coder {
        w,
        h,
        stride,
        flags: &mut flags,
        out,
        zc,
        causal,
    };
    let mut plane = block.planes - 1;
    for pass in 0..block.passes {
        // Pass 0 is the first plane's cleanup; then significance, refinement, cleanup.
        let kind = if pass == 0 { 2 } else { (pass - 1) % 3 };
        if pass > 0 && kind == 0 {
            if plane == 0 {
                break;
            }
            plane -= 1;
        }
        match kind {
            0 => coder.significance(&mut mq, &mut cx, plane),
            1 => coder.refinement(&mut mq, &mut cx, plane),
            _ => {
                coder.cleanup(&mut mq, &mut cx, plane);
                if block.style & SEGMENTATION_SYMBOLS != 0 {
                    for _ in 0..4 {
                        mq.decode(&mut cx, UNIFORM);
                    }
                }
            }
        }
        if block.style & RESET_CONTEXTS != 0 {
            cx = mq::initial_contexts();
        }
    }
    // The encoder's flush leaves every byte its passes need: the decoder, which keeps two
    // bytes ahead, reads at most two past the segment (OpenJPEG's code-blocks, lossy layers
    // included, never more). A block that needs more was coded for another size (SIZ
    // changed under its packets) or its segment was damaged; the margin allows writers that
    // terminate otherwise.
    if mq.starved() > MOST_READ_PAST_THE_SEGMENT {
        return Err(super::Refusal::malformed(format!(
            "a {w}×{h} code-block's {} passes need {} bytes more than its {}-byte segment \
             holds",
            block.passes,
            mq.starved(),
            block.data.len()
        )));
    }
    Ok(())
}

/// The most bytes past a code-block's segment a sound block's passes read: two, the
/// decoder's look-ahead, and two to spare.
const MOST_READ_PAST_THE_SEGMENT: u32 = 4;

struct Coder<'f> {
    w: usize,
    h: usize,
    stride: usize,
    flags: &'f mut [u16],
    out: &'f mut [i32],
    zc: &'static [u8; 256],
    causal: bool,
}

impl Coder<'_> {
    /// The flag index of coefficient (x, y): the grid has a border of one cell.
    #[inline]
    fn at(&self, x: usize, y: usize) -> usize {
        (y + 1) * self.stride + x + 1
    }

    /// Decodes the sign of the coefficient at flag index `i` (row `y`, output index `o`),
    /// makes it significant at `plane` and tells its neighbours.
    #[inline]
    fn become_significant(
        &mut self,
        mq: &mut Mq<'_>,
        cx: &mut [u8; mq::CONTEXTS],
        at: usize,
        row: usize,
        index: usize,
        plane: u32,
    ) {
        let f = self.flags[at];
        let (context, flip) = SIGN_CODING[usize::from((f & 0x0F) | ((f >> 4) & 0xF0))];
        let negative = mq.decode(cx, usize::from(context)) ^ u32::from(flip) != 0;
        let magnitude = (3i32) << plane;
        self.out[index] = if negative { -magnitude } else { magnitude };
        self.flags[at] |= SIGNIFICANT | if negative { NEGATIVE } else { 0 };
        let s = self.stride;
        let (n_neg, s_neg, w_neg, e_neg) = if negative {
            (N_NEG, S_NEG, W_NEG, E_NEG)
        } else {
            (0, 0, 0, 0)
        };
        // In vertically causal mode a stripe's last row does not see the next stripe: the
        // first row of a stripe does not tell the row above it.
        if !(self.causal && row.is_multiple_of(4)) {
            self.flags[at - s] |= S | s_neg;
            self.flags[at - s - 1] |= SE;
            self.flags[at - s + 1] |= SW;
        }
        self.flags[at + s] |= N | n_neg;
        self.flags[at + s - 1] |= NE;
        self.flags[at + s + 1] |= NW;
        self.flags[at - 1] |= E | e_neg;
        self.flags[at + 1] |= W | w_neg;
    }

    /// Visits every coefficient in the passes' scan order: stripes of four rows, column by
    /// column within a stripe, top to bottom within a column.
    #[inline]
    fn scan(&mut self, mut visit: impl FnMut(&mut Self, usize, usize)) {
        for y0 in (0..self.h).step_by(4) {
            let y1 = (y0 + 4).min(self.h);
            for x in 0..self.w {
                for y in y0..y1 {
                    visit(self, x, y);
                }
            }
        }
    }

    fn significance(&mut self, mq: &mut Mq<'_>, cx: &mut [u8; mq::CONTEXTS], plane: u32) {
        self.scan(|c, x, y| {
            let i = c.at(x, y);
            let f = c.flags[i];
            let n = f & NEIGHBOURS;
            if f & (SIGNIFICANT | VISITED) != 0 || n == 0 {
                return;
            }
            if mq.decode(cx, usize::from(c.zc[usize::from(n)])) != 0 {
                c.become_significant(mq, cx, i, y, y * c.w + x, plane);
            }
            c.flags[i] |= VISITED;
        });
    }

    fn refinement(&mut self, mq: &mut Mq<'_>, cx: &mut [u8; mq::CONTEXTS], plane: u32) {
        let half = 1i32 << plane;
        self.scan(|c, x, y| {
            let i = c.at(x, y);
            let f = c.flags[i];
            if f & (SIGNIFICANT | VISITED) != SIGNIFICANT {
                return;
            }
            let context = if f & REFINED != 0 {
                16
            } else if f & NEIGHBOURS != 0 {
                15
            } else {
                14
            };
            let bit = mq.decode(cx, context);
            let o = y * c.w + x;
            let step = if bit != 0 { half } else { -half };
            let v = c.out[o];
            c.out[o] = if v < 0 { v - step } else { v + step };
            c.flags[i] |= REFINED;
        });
    }

    fn cleanup(&mut self, mq: &mut Mq<'_>, cx: &mut [u8; mq::CONTEXTS], plane: u32) {
        for y0 in (0..self.h).step_by(4) {
            let y1 = (y0 + 4).min(self.h);
            for x in 0..self.w {
                let mut y = y0;
                if y1 == y0 + 4 && (y0..y1).all(|y| self.quiet(x, y)) {
                    if mq.decode(cx, RUN_LENGTH) == 0 {
                        continue;
                    }
                    let first = (mq.decode(cx, UNIFORM) << 1) | mq.decode(cx, UNIFORM);
                    y = y0 + first as usize;
                    let i = self.at(x, y);
                    self.become_significant(mq, cx, i, y, y * self.w + x, plane);
                    y += 1;
                }
                for y in y..y1 {
                    let i = self.at(x, y);
                    let f = self.flags[i];
                    if f & (SIGNIFICANT | VISITED) != 0 {
                        continue;
                    }
                    let n = f & NEIGHBOURS;
                    if mq.decode(cx, usize::from(self.zc[usize::from(n)])) != 0 {
                        self.become_significant(mq, cx, i, y, y * self.w + x, plane);
                    }
                }
                for y in y0..y1 {
                    let i = self.at(x, y);
                    self.flags[i] &= !VISITED;
                }
            }
        }
    }

    /// Whether coefficient (x, y) is insignificant, unvisited and has no significant
    /// neighbour: four such in a column are coded as one run.
    #[inline]
    fn quiet(&self, x: usize, y: usize) -> bool {
        let f = self.flags[self.at(x, y)];
        f & (SIGNIFICANT | VISITED | NEIGHBOURS) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_coding_tables_follow_the_standard() {
        // LL/LH: two horizontal neighbours → 8; one horizontal and one vertical → 7.
        assert_eq!(ZERO_CODING[0][usize::from(W | E)], 8);
        assert_eq!(ZERO_CODING[0][usize::from(W | N)], 7);
        assert_eq!(ZERO_CODING[0][usize::from(N | S)], 4);
        assert_eq!(ZERO_CODING[0][usize::from(NW)], 1);
        // HL swaps the roles of horizontal and vertical neighbours.
        assert_eq!(ZERO_CODING[1][usize::from(N | S)], 8);
        assert_eq!(ZERO_CODING[1][usize::from(W | E)], 4);
        // HH looks at diagonals first.
        assert_eq!(ZERO_CODING[2][usize::from(NW | NE | SW)], 8);
        assert_eq!(ZERO_CODING[2][usize::from(NW | NE)], 6);
        assert_eq!(ZERO_CODING[2][usize::from(NW | NE | W)], 7);
        assert_eq!(ZERO_CODING[2][usize::from(W | E)], 2);
    }

    #[test]
    fn sign_contexts_follow_the_standard() {
        let index = |f: u16| usize::from((f & 0x0F) | ((f >> 4) & 0xF0));
        assert_eq!(SIGN_CODING[0], (9, 0));
        assert_eq!(SIGN_CODING[index(W)], (12, 0));
        assert_eq!(SIGN_CODING[index(W | W_NEG)], (12, 1));
        assert_eq!(SIGN_CODING[index(N | N_NEG)], (10, 1));
        assert_eq!(SIGN_CODING[index(W | E | E_NEG)], (9, 0));
        assert_eq!(SIGN_CODING[index(W | N | N_NEG)], (11, 0));
        assert_eq!(SIGN_CODING[index(W | W_NEG | N)], (11, 1));
    }

    #[test]
    fn a_block_without_passes_is_zero() {
        let mut out = vec![7; 16];
        let block = Coded {
            width: 4,
            height: 4,
            orientation: Orientation::Ll,
            planes: 8,
            passes: 0,
            style: 0,
            data: &[],
        };
        decode(&block, &mut out).unwrap();
        assert!(out.iter().all(|&v| v == 0));
    }
}
