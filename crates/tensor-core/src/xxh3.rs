//! XXH3-64 (seed 0): Tensogram's frame hash, and zTensor 2's manifest hash and checksum.
//!
//! The vector kernel is chosen when the CPU is known, at run time — AVX2 where the CPU has
//! it, SSE2 or NEON otherwise — through `twox-hash` (see docs/decisions/0007): a build for
//! baseline x86-64 still hashes at AVX2 speed on the machines that have it.
//!
//! ```
//! use tensor_core::xxh3::{Xxh3, xxh3_64};
//!
//! let mut running = Xxh3::new();
//! running.update(b"hello ");
//! running.update(b"world");
//! assert_eq!(running.digest(), xxh3_64(b"hello world"));
//! assert_eq!(xxh3_64(b"hello world"), 0xd447_b1ea_40e6_988b);
//! ```

use std::hash::Hasher;
use twox_hash::XxHash3_64;

/// The XXH3-64 of `bytes`.
#[must_use]
pub fn xxh3_64(bytes: &[u8]) -> u64 {
    XxHash3_64::oneshot(bytes)
}

/// A running XXH3-64: fed in pieces, the same digest as [`xxh3_64`] of their concatenation.
pub struct Xxh3(XxHash3_64);

impl Xxh3 {
    /// An empty hash.
    #[must_use]
    pub fn new() -> Self {
        Xxh3(XxHash3_64::new())
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    /// The digest of everything added so far (more may still be added).
    #[must_use]
    pub fn digest(&self) -> u64 {
        self.0.finish()
    }
}

impl Default for Xxh3 {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Xxh3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Xxh3").field(&self.digest()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed, non-repeating byte pattern.
    fn bytes(n: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()[3]
            })
            .collect()
    }

    #[test]
    fn digests_are_the_references() {
        // `tensogram.compute_hash` (0.24) and the `xxhash` Python package (xxh3_64, seed 0)
        // agree on these, for every input length class: empty, 1–3, 4–8, 9–16, 17–128,
        // 129–240, past one stripe, a whole block (1024 bytes of stripes) and many blocks.
        let expected: [(usize, u64); 9] = [
            (0, 0x2d06_8005_38d3_94c2),
            (3, 0x0c52_69e8_33a3_0602),
            (8, 0x084a_ab75_ae81_e7a7),
            (16, 0x9477_8465_a6da_c544),
            (100, 0x574d_c12d_771d_74af),
            (200, 0x5817_63dd_440c_d280),
            (1000, 0x7085_b066_9116_b2b1),
            (5000, 0x1cd8_6a2e_8e6f_930a),
            (1_000_000, 0x8ab0_4967_98e7_9b24),
        ];
        for (n, want) in expected {
            assert_eq!(xxh3_64(&bytes(n)), want, "{n} bytes");
        }
    }

    #[test]
    fn pieces_hash_as_the_whole() {
        let data = bytes(300_000);
        for cut in [0, 1, 63, 64, 239, 240, 241, 1024, 4096, 299_999] {
            let mut h = Xxh3::new();
            h.update(&data[..cut]);
            h.update(&data[cut..]);
            assert_eq!(h.digest(), xxh3_64(&data), "cut at {cut}");
        }
    }
}
