//! A rectangle of a grid: tiles, resolutions, bands and code-blocks are each one.

/// A rectangle [x0, x1) × [y0, y1) on some grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rect {
    pub x0: u32,
    pub y0: u32,
    pub x1: u32,
    pub y1: u32,
}

impl Rect {
    pub(super) fn width(&self) -> usize {
        (self.x1 - self.x0) as usize
    }

    pub(super) fn height(&self) -> usize {
        (self.y1 - self.y0) as usize
    }

    pub(super) fn is_empty(&self) -> bool {
        self.x0 >= self.x1 || self.y0 >= self.y1
    }

    /// This rectangle scaled down by 2^`shift`, rounding outwards as T.800 B.5 does for
    /// resolutions (`ceil` of both corners), after moving it back by `offset`·2^(shift−1).
    pub(super) fn reduced(&self, shift: u32, offset: (u32, u32)) -> Rect {
        let reduce = |v: u32, o: u32| -> u32 {
            let moved = i64::from(v)
                - if shift == 0 {
                    0
                } else {
                    i64::from(o) << (shift - 1)
                };
            // Ceiling division by a power of two: the shift of a negative floors.
            let d = 1i64 << shift;
            (((moved + d - 1) >> shift).max(0)) as u32
        };
        Rect {
            x0: reduce(self.x0, offset.0),
            y0: reduce(self.y0, offset.1),
            x1: reduce(self.x1, offset.0),
            y1: reduce(self.y1, offset.1),
        }
    }
}
