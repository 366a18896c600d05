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

/// A copy of `src` in a new vector, or [`Error::OutOfMemory`]; large copies land on huge
/// pages (see [`try_reserve`]), which is what makes them run at memory speed.
///
/// ```
/// assert_eq!(tensor_core::buffer::try_copied(&[1u8, 2, 3], "example")?, [1, 2, 3]);
/// # Ok::<(), tensor_core::Error>(())
/// ```
pub fn try_copied<T: Copy + Send + Sync>(src: &[T], what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    try_reserve(&mut v, src.len(), what)?;
    append(&mut v, src);
    Ok(v)
}

/// A copy of `src` in a new vector, on huge pages when large, like [`try_copied`] — for
/// data already in memory, where a refusal aborts as `to_vec` does.
#[must_use]
pub fn copied<T: Copy + Send + Sync>(src: &[T]) -> Vec<T> {
    let mut v = Vec::with_capacity(src.len());
    advise_spare(&mut v);
    append(&mut v, src);
    v
}

/// Bytes from which a copy is split over every core (feature `parallel`): copying out of a
/// memory map, or into new memory, is mostly page faults, which the cores take in parallel.
pub const PARALLEL_COPY: usize = 16 << 20;

/// Pieces a parallel copy is cut into.
#[cfg(feature = "parallel")]
const PIECE: usize = 8 << 20;

/// Copies `src` into `dst`, which must be as long, on every core when large (feature
/// `parallel`).
///
/// # Panics
/// When the lengths differ, as `copy_from_slice` does.
pub fn copy(dst: &mut [u8], src: &[u8]) {
    #[cfg(feature = "parallel")]
    if src.len() >= PARALLEL_COPY {
        use rayon::prelude::*;
        assert_eq!(
            dst.len(),
            src.len(),
            "copy between buffers of different lengths"
        );
        dst.par_chunks_mut(PIECE)
            .zip(src.par_chunks(PIECE))
            .for_each(|(d, s)| d.copy_from_slice(s));
        return;
    }
    dst.copy_from_slice(src);
}

/// Copies `src`, elements of `width` bytes stored in `from`, into `dst` in `to`, on every
/// core when large (feature `parallel`): [`copy`] with the elements' bytes reversed where
/// the orders differ. `dst` must be as long as `src`, `width` 1, 2, 4 or 8 dividing it.
pub fn convert(
    dst: &mut [u8],
    src: &[u8],
    from: crate::ByteOrder,
    to: crate::ByteOrder,
    width: usize,
) -> crate::Result<()> {
    if from == to || width <= 1 {
        if dst.len() != src.len() {
            return Err(crate::Error::InvalidArgument(format!(
                "a copy between buffers of {} and {} bytes",
                src.len(),
                dst.len()
            )));
        }
        copy(dst, src);
        return Ok(());
    }
    #[cfg(feature = "parallel")]
    if src.len() >= PARALLEL_COPY && dst.len() == src.len() && src.len().is_multiple_of(width) {
        use rayon::prelude::*;
        // Pieces of whole elements: PIECE is a multiple of every width.
        return dst
            .par_chunks_mut(PIECE)
            .zip(src.par_chunks(PIECE))
            .try_for_each(|(d, s)| crate::byte_order::swap_copy(s, d, width));
    }
    crate::byte_order::swap_copy(src, dst, width)
}

/// Appends `src` to `v`, whose spare capacity must hold it, on every core when large.
#[allow(unsafe_code)]
fn append<T: Copy + Send + Sync>(v: &mut Vec<T>, src: &[T]) {
    #[cfg(feature = "parallel")]
    if v.capacity() - v.len() >= src.len() && size_of_val(src) >= PARALLEL_COPY {
        use rayon::prelude::*;
        let len = v.len();
        let piece = (PIECE / size_of::<T>().max(1)).max(1);
        v.spare_capacity_mut()[..src.len()]
            .par_chunks_mut(piece)
            .zip(src.par_chunks(piece))
            .for_each(|(d, s)| {
                d.write_copy_of_slice(s);
            });
        // SAFETY: the `src.len()` elements after the first `len` were all written just
        // above (the pieces cover the range exactly), and they lie within the capacity.
        unsafe { v.set_len(len + src.len()) };
        return;
    }
    v.extend_from_slice(src);
}

/// Reserves room for `additional` more elements in `v`, or [`Error::OutOfMemory`].
///
/// A reservation of [`HUGE_THRESHOLD`] bytes or more is advised to use transparent huge
/// pages before anything is written to it (Linux): the first writes then fault 2 MiB at a
/// time instead of 4 KiB, three to four times faster on this kind of machine. Only advice:
/// where huge pages are unavailable nothing changes.
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &'static str) -> Result<()> {
    v.try_reserve_exact(additional)
        .map_err(|_| Error::OutOfMemory {
            what,
            bytes: (additional as u64).saturating_mul(size_of::<T>() as u64),
        })?;
    advise_spare(v);
    Ok(())
}

/// Advises huge pages for `v`'s spare capacity, before anything is written to it.
fn advise_spare<T>(v: &mut Vec<T>) {
    let spare = v.spare_capacity_mut();
    advise_huge_pages(spare.as_mut_ptr().cast::<u8>(), size_of_val(spare));
}

/// Advises the kernel to back the whole 2 MiB pages inside `len` bytes from `start` with
/// transparent huge pages.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge_pages(start: *mut u8, len: usize) {
    const HUGE_PAGE: usize = 2 << 20;
    if len < HUGE_THRESHOLD {
        return;
    }
    let first = start.align_offset(HUGE_PAGE);
    let Some(whole) = len
        .checked_sub(first)
        .map(|rest| rest / HUGE_PAGE * HUGE_PAGE)
    else {
        return;
    };
    if whole == 0 {
        return;
    }
    // SAFETY: the range lies inside one live allocation the caller holds exclusively (a
    // vector's spare capacity), and MADV_HUGEPAGE only changes how the kernel backs the
    // pages, never their contents, so no Rust value can observe it. A refusal is ignored.
    let _ = unsafe {
        rustix::mm::madvise(
            start.add(first).cast(),
            whole,
            rustix::mm::Advice::LinuxHugepage,
        )
    };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *mut u8, _len: usize) {}

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
    fn copies_of_every_size_are_exact() {
        // Below and above the huge-page and parallel thresholds, at odd lengths.
        for len in [0, 7, HUGE_THRESHOLD + 3, PARALLEL_COPY + 4097] {
            let src: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            assert_eq!(try_copied(&src, "a test copy").unwrap(), src);
            assert_eq!(copied(&src), src);
            let mut dst = vec![0u8; len];
            copy(&mut dst, &src);
            assert_eq!(dst, src);
            let wide: Vec<u64> = (0..len as u64 / 8).collect();
            assert_eq!(try_copied(&wide, "a test copy").unwrap(), wide);
        }
        let e = try_copied(&[0u64; 0][..], "empty").unwrap();
        assert!(e.is_empty());
    }

    #[test]
    fn conversions_of_every_size_swap_each_element() {
        use crate::ByteOrder::{Big, Little};
        for len in [0, 8, 4096, PARALLEL_COPY + 4096] {
            let src: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            for width in [1, 2, 4, 8] {
                let mut dst = vec![0u8; len];
                convert(&mut dst, &src, Big, Little, width).unwrap();
                let mut want = src.clone();
                crate::byte_order::swap_in_place(&mut want, width).unwrap();
                assert_eq!(dst, want, "{len} bytes of width {width}");
                convert(&mut dst, &src, Little, Little, width).unwrap();
                assert_eq!(dst, src);
            }
        }
        assert!(convert(&mut [0u8; 4], &[0u8; 6], Big, Little, 2).is_err());
        assert!(convert(&mut [0u8; 6], &[0u8; 6], Big, Little, 4).is_err());
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
