//! The MQ arithmetic decoder of JPEG 2000 (ITU-T T.800 Annex C), with the nineteen
//! contexts the bit-plane coder uses.

/// Probability estimates: for each of the 47 states, the LPS probability `Qe`, the state
/// after an MPS, the state after an LPS, and whether an LPS swaps the MPS sense.
const STATES: [(u16, u8, u8, bool); 47] = [
    (0x5601, 1, 1, true),
    (0x3401, 2, 6, false),
    (0x1801, 3, 9, false),
    (0x0AC1, 4, 12, false),
    (0x0521, 5, 29, false),
    (0x0221, 38, 33, false),
    (0x5601, 7, 6, true),
    (0x5401, 8, 14, false),
    (0x4801, 9, 14, false),
    (0x3801, 10, 14, false),
    (0x3001, 11, 17, false),
    (0x2401, 12, 18, false),
    (0x1C01, 13, 20, false),
    (0x1601, 29, 21, false),
    (0x5601, 15, 14, true),
    (0x5401, 16, 14, false),
    (0x5101, 17, 15, false),
    (0x4801, 18, 16, false),
    (0x3801, 19, 17, false),
    (0x3401, 20, 18, false),
    (0x3001, 21, 19, false),
    (0x2801, 22, 19, false),
    (0x2401, 23, 20, false),
    (0x2201, 24, 21, false),
    (0x1C01, 25, 22, false),
    (0x1801, 26, 23, false),
    (0x1601, 27, 24, false),
    (0x1401, 28, 25, false),
    (0x1201, 29, 26, false),
    (0x1101, 30, 27, false),
    (0x0AC1, 31, 28, false),
    (0x09C1, 32, 29, false),
    (0x08A1, 33, 30, false),
    (0x0521, 34, 31, false),
    (0x0441, 35, 32, false),
    (0x02A1, 36, 33, false),
    (0x0221, 37, 34, false),
    (0x0141, 38, 35, false),
    (0x0111, 39, 36, false),
    (0x0085, 40, 37, false),
    (0x0049, 41, 38, false),
    (0x0025, 42, 39, false),
    (0x0015, 43, 40, false),
    (0x0009, 44, 41, false),
    (0x0005, 45, 42, false),
    (0x0001, 45, 43, false),
    (0x5601, 46, 46, false),
];

/// One entry per (state, MPS sense): `Qe`, and the packed context after an MPS and after
/// an LPS. A context is packed as `state << 1 | mps`.
struct Transition {
    qe: u32,
    after_mps: u8,
    after_lps: u8,
}

const TRANSITIONS: [Transition; 94] = {
    let mut t = [const {
        Transition {
            qe: 0,
            after_mps: 0,
            after_lps: 0,
        }
    }; 94];
    let mut i = 0;
    while i < 94 {
        let (qe, nmps, nlps, switch) = STATES[i >> 1];
        let mps = (i & 1) as u8;
        let lps_mps = if switch { mps ^ 1 } else { mps };
        t[i] = Transition {
            qe: qe as u32,
            after_mps: (nmps << 1) | mps,
            after_lps: (nlps << 1) | lps_mps,
        };
        i += 1;
    }
    t
};

/// Context numbers: nine for zero coding (0–8), five for signs (9–13), three for magnitude
/// refinement (14–16), the run-length context and the uniform context.
pub(super) const RUN_LENGTH: usize = 17;
pub(super) const UNIFORM: usize = 18;
pub(super) const CONTEXTS: usize = 19;

/// The contexts' states at the start of a code-block (and after each pass, when contexts
/// are reset): state 0 everywhere except zero coding with no significant neighbour (4), run
/// length (3) and uniform (46).
pub(super) fn initial_contexts() -> [u8; CONTEXTS] {
    let mut c = [0u8; CONTEXTS];
    c[0] = 4 << 1;
    c[RUN_LENGTH] = 3 << 1;
    c[UNIFORM] = 46 << 1;
    c
}

/// The decoder's registers over one code-block's codeword segment. Past the end of the
/// segment it reads 0xFF bytes, which act as a marker: the decoder is fed 1 bits, as the
/// standard's decoder is.
pub(super) struct Mq<'a> {
    data: &'a [u8],
    pos: usize,
    a: u32,
    c: u32,
    ct: u32,
    starved: u32,
}

impl<'a> Mq<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        let mut mq = Mq {
            data,
            pos: 0,
            a: 0x8000,
            c: u32::from(data.first().copied().unwrap_or(0xFF)) << 16,
            ct: 0,
            starved: 0,
        };
        mq.byte_in();
        mq.c = mq.c.wrapping_shl(7);
        mq.ct = mq.ct.saturating_sub(7);
        mq
    }

    #[inline]
    fn byte(&self, at: usize) -> u32 {
        u32::from(self.data.get(at).copied().unwrap_or(0xFF))
    }

    #[inline]
    fn byte_in(&mut self) {
        if self.byte(self.pos) == 0xFF {
            let next = self.byte(self.pos + 1);
            if next > 0x8F {
                if self.pos + 1 >= self.data.len() {
                    self.starved = self.starved.saturating_add(1);
                }
                self.c = self.c.wrapping_add(0xFF00);
                self.ct = 8;
            } else {
                self.pos += 1;
                self.c = self.c.wrapping_add(next << 9);
                self.ct = 7;
            }
        } else {
            self.pos += 1;
            self.c = self.c.wrapping_add(self.byte(self.pos) << 8);
            self.ct = 8;
        }
    }

    #[inline]
    fn renormalize(&mut self) {
        loop {
            if self.ct == 0 {
                self.byte_in();
            }
            self.a <<= 1;
            self.c = self.c.wrapping_shl(1);
            self.ct -= 1;
            if self.a & 0x8000 != 0 {
                break;
            }
        }
    }

    /// How many times the decoder wanted a byte past the end of its segment (and was fed
    /// ones).
    pub(super) fn starved(&self) -> u32 {
        self.starved
    }

    /// Decodes one binary decision in context `cx` of `contexts`.
    #[inline]
    pub(super) fn decode(&mut self, contexts: &mut [u8; CONTEXTS], cx: usize) -> u32 {
        let state = &mut contexts[cx];
        let t = &TRANSITIONS[usize::from(*state)];
        let mps = u32::from(*state & 1);
        self.a = self.a.wrapping_sub(t.qe);
        if (self.c >> 16) < t.qe {
            let d = if self.a < t.qe {
                *state = t.after_mps;
                mps
            } else {
                *state = t.after_lps;
                mps ^ 1
            };
            self.a = t.qe;
            self.renormalize();
            d
        } else {
            self.c = self.c.wrapping_sub(t.qe << 16);
            if self.a & 0x8000 == 0 {
                let d = if self.a < t.qe {
                    *state = t.after_lps;
                    mps ^ 1
                } else {
                    *state = t.after_mps;
                    mps
                };
                self.renormalize();
                d
            } else {
                mps
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_that_switches_flips_the_mps_on_an_lps() {
        // State 0 switches; state 1 does not.
        assert_eq!(TRANSITIONS[0].after_lps, (1 << 1) | 1);
        assert_eq!(TRANSITIONS[1].after_lps, 1 << 1);
        assert_eq!(TRANSITIONS[2].after_lps, 6 << 1);
        assert_eq!(TRANSITIONS[3].after_mps, (2 << 1) | 1);
    }

    #[test]
    fn past_the_end_the_decoder_is_fed_ones_and_never_stops() {
        let mut contexts = initial_contexts();
        let mut mq = Mq::new(&[]);
        for _ in 0..10_000 {
            let d = mq.decode(&mut contexts, UNIFORM);
            assert!(d <= 1);
        }
        assert_eq!(mq.pos, 0);
    }
}
