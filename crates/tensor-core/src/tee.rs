//! Two passes over the same bytes at once: a digest computed on one core while the same
//! bytes go to the file (or through a check) on another, so a writer that must hash what it
//! writes costs the time of the slower of the two rather than of both.

use std::io::Write;

/// How many threads work can be shared among: those of rayon's current pool with the
/// `parallel` feature, otherwise 1.
#[must_use]
pub fn threads() -> usize {
    #[cfg(feature = "parallel")]
    return rayon::current_num_threads().max(1);
    #[cfg(not(feature = "parallel"))]
    1
}

/// Runs `main` on this thread and `beside` on another core at the same time, with the
/// `parallel` feature and more than one [thread](threads); otherwise `beside` first,
/// then `main`. `main` need not be `Send` (it may hold a `&mut dyn Write`):
/// `beside` hands its result back through what it captures.
pub fn beside<M, R, B>(main: M, beside: B) -> R
where
    M: FnOnce() -> R,
    B: FnOnce() + Send,
{
    #[cfg(feature = "parallel")]
    if threads() > 1 {
        return rayon::in_place_scope(|s| {
            s.spawn(|_| beside());
            main()
        });
    }
    beside();
    main()
}

/// The piece each side handles at a time: large enough that handing work between cores is
/// free, small enough that both stay busy (and the piece stays in cache between them).
pub const CHUNK: usize = 4 << 20;

/// Inputs shorter than this are handed to `also` and then written on one core: passing
/// them to another would cost more than it saves.
pub const BESIDE_FROM: usize = 256 << 10;

/// Writes all of `bytes` to `out` and hands the same bytes to `also`, in order, in pieces of
/// at most [`CHUNK`]. With the `parallel` feature and more than one thread in rayon's pool,
/// each piece of [`BESIDE_FROM`] bytes or more goes to `also` on another core while it is
/// being written (writers that stream a tensor in runs of [`CHUNK`] call this once per run);
/// otherwise one after the other. `also` sees every byte exactly once whether the write
/// succeeds or not, up to the piece that failed.
pub fn write(
    out: &mut dyn Write,
    bytes: &[u8],
    also: &mut (dyn FnMut(&[u8]) + Send),
) -> std::io::Result<()> {
    if bytes.len() < BESIDE_FROM {
        also(bytes);
        return out.write_all(bytes);
    }
    for piece in bytes.chunks(CHUNK) {
        beside(|| out.write_all(piece), || also(piece))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_written_and_seen_once_in_order() {
        for len in [
            0,
            1,
            BESIDE_FROM - 1,
            BESIDE_FROM,
            CHUNK - 1,
            CHUNK,
            CHUNK + 1,
            3 * CHUNK + 5,
        ] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut out = Vec::new();
            let mut seen = Vec::new();
            write(&mut out, &bytes, &mut |p| seen.extend_from_slice(p)).unwrap();
            assert_eq!(out, bytes, "written, {len} bytes");
            assert_eq!(seen, bytes, "seen, {len} bytes");
        }
    }

    #[test]
    fn beside_runs_both_and_returns_main() {
        let mut seen = 0u64;
        let sum = beside(
            || (1..=100u64).sum::<u64>(),
            || seen = (1..=10u64).product(),
        );
        assert_eq!((sum, seen), (5050, 3_628_800));
    }

    #[test]
    fn a_failed_write_is_reported() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let bytes = vec![7u8; 2 * CHUNK + 1];
        let err = write(&mut Full, &bytes, &mut |_| {}).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
    }
}
