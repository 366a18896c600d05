//! Output buffers for large decodes.
//!
//! On this kind of machine, writing to freshly allocated 4 KiB pages runs at about 2 GB/s —
//! the page faults, not the copy, are the cost. [`LargeBuffer`] backs large sizes with an
//! anonymous mapping advised to use transparent huge pages (Linux), which faults 512 times
//! less often; decoding into one runs several times faster than into a new `Vec`.

use crate::error::{Error, Result};

/// A vector of `len` copies of `value`, or [`Error::OutOfMemory`] when the allocator (or
/// the process's address-space limit) refuses the memory — never an abort. Every buffer
/// whose size comes from a file goes through this (or [`LargeBuffer`]) after the size has
/// been checked against the [`Limits`](crate::Limits).
///
/// ```
/// let v = tensor_core::buffer::try_filled(4, 0u8, "example")?;
/// assert_eq!(v, [0; 4]);
/// assert!(tensor_core::buffer::try_filled(usize::MAX / 2, 0u64, "example").is_err());
/// # Ok::<(), tensor_core::Error>(())
/// ```
pub fn try_filled<T: Clone>(len: usize, value: T, what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    try_reserve(&mut v, len, what)?;
    v.resize(len, value);
    Ok(v)
}

/// Reserves room for `additional` more elements in `v`, or [`Error::OutOfMemory`].
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &'static str) -> Result<()> {
    v.try_reserve_exact(additional)
        .map_err(|_| Error::OutOfMemory {
            what,
            bytes: (additional as u64).saturating_mul(size_of::<T>() as u64),
        })
}

/// Sizes from which a mapping with huge pages is used; below, a plain heap vector.
pub const HUGE_THRESHOLD: usize = 2 << 20;

/// A zero-initialised, writable byte buffer, backed by huge pages when it is large.
#[derive(Debug)]
pub struct LargeBuffer {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Heap(Vec<u8>),
    Mapped(memmap2::MmapMut),
}

impl LargeBuffer {
    /// A buffer of `len` zero bytes; [`Error::OutOfMemory`] when the system refuses it.
    pub fn zeroed(len: usize) -> Result<Self> {
        if len < HUGE_THRESHOLD {
            return Ok(LargeBuffer {
                inner: Inner::Heap(try_filled(len, 0, "an output buffer")?),
            });
        }
        let map = memmap2::MmapMut::map_anon(len).map_err(|_| Error::OutOfMemory {
            what: "an output buffer",
            bytes: len as u64,
        })?;
        #[cfg(target_os = "linux")]
        {
            // Only advice: if huge pages are unavailable the buffer still works.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        Ok(LargeBuffer {
            inner: Inner::Mapped(map),
        })
    }

    /// The buffer's length.
    #[must_use]
    pub fn len(&self) -> usize {
        self.as_ref().len()
    }

    /// Whether the buffer is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl AsRef<[u8]> for LargeBuffer {
    fn as_ref(&self) -> &[u8] {
        match &self.inner {
            Inner::Heap(v) => v,
            Inner::Mapped(m) => m,
        }
    }
}

impl std::ops::Deref for LargeBuffer {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_ref()
    }
}

impl std::ops::DerefMut for LargeBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.inner {
            Inner::Heap(v) => v,
            Inner::Mapped(m) => m,
        }
    }
}

/// Fills a caller's buffer of known size from runs handed out one after another (a
/// decoder's chunks): a run past the end, or too few bytes by [`finish`](Self::finish), is
/// an [`Error::InvalidArgument`] naming `what` — the buffer is never left partly written
/// without an error.
///
/// ```
/// let mut buf = [0u8; 4];
/// let mut fill = tensor_core::buffer::Filler::new(&mut buf, "tensor \"t\"");
/// fill.put(&[1, 2])?;
/// fill.put(&[3, 4])?;
/// fill.finish()?;
/// assert_eq!(buf, [1, 2, 3, 4]);
/// # Ok::<(), tensor_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Filler<'d, 'w> {
    dst: &'d mut [u8],
    at: usize,
    what: &'w str,
}

impl<'d, 'w> Filler<'d, 'w> {
    /// A filler of `dst` for the data `what` names (in errors).
    pub fn new(dst: &'d mut [u8], what: &'w str) -> Self {
        Filler { dst, at: 0, what }
    }

    /// Copies `run` after what came before.
    pub fn put(&mut self, run: &[u8]) -> Result<()> {
        let end = self.at + run.len();
        let len = self.dst.len();
        let slot = self.dst.get_mut(self.at..end).ok_or_else(|| {
            Error::InvalidArgument(format!("{} decoded past its {len} bytes", self.what))
        })?;
        slot.copy_from_slice(run);
        self.at = end;
        Ok(())
    }

    /// Checks that every byte of the buffer was filled.
    pub fn finish(self) -> Result<()> {
        if self.at == self.dst.len() {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "{} decoded to {} of its {} bytes",
                self.what,
                self.at,
                self.dst.len()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filler_refuses_too_many_bytes_and_too_few() {
        let mut buf = [0u8; 3];
        let mut f = Filler::new(&mut buf, "tensor \"t\"");
        f.put(&[1, 2]).unwrap();
        let e = f.put(&[3, 4]).unwrap_err();
        assert!(
            e.to_string()
                .contains("tensor \"t\" decoded past its 3 bytes"),
            "{e}"
        );
        let e = f.finish().unwrap_err();
        assert!(e.to_string().contains("decoded to 2 of its 3 bytes"), "{e}");
    }

    #[test]
    fn refused_memory_is_an_error_not_an_abort() {
        let e = try_filled(usize::MAX / 4, 0u32, "a test buffer").unwrap_err();
        assert_eq!(
            crate::Kinded::kind(&e),
            crate::ErrorKind::LimitExceeded,
            "{e}"
        );
        assert!(e.to_string().contains("a test buffer"), "{e}");
        assert!(LargeBuffer::zeroed(usize::MAX / 2).is_err());
    }

    #[test]
    fn small_and_large_buffers_are_zeroed_and_writable() {
        for len in [0, 10, HUGE_THRESHOLD, HUGE_THRESHOLD + 12345] {
            let mut b = LargeBuffer::zeroed(len).unwrap();
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            if len > 0 {
                b[len - 1] = 7;
                assert_eq!(b[len - 1], 7);
            }
        }
    }
}
