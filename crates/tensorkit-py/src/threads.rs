//! How many threads a call decodes or reads on, as Python asks for it with `threads=`.

use rayon::prelude::*;

/// Runs `each` over `items` on `threads` threads (0: rayon's pool of every core; 1: this
/// thread), and collects the results in order; the first error wins.
pub(crate) fn map_each<T, R, E>(
    items: &[T],
    threads: usize,
    each: impl Fn(&T) -> Result<R, E> + Sync + Send,
) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send + From<tensor_core::Error>,
{
    match threads {
        1 => items.iter().map(each).collect(),
        _ if items.len() < 2 => items.iter().map(each).collect(),
        0 => items.par_iter().map(each).collect(),
        n => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| {
                E::from(tensor_core::Error::InvalidArgument(format!(
                    "starting {n} threads: {e}"
                )))
            })?
            .install(|| items.par_iter().map(each).collect()),
    }
}

/// Reads in flight for [`striped`] when Python leaves `threads` at 0: enough to keep a fast
/// SSD or a network file system busy, whatever the core count.
const READS_IN_FLIGHT: usize = 8;

/// Pieces [`striped`] cuts a buffer into, at most this long: small enough that the reads
/// of one large buffer spread over every thread.
const STRIPE: usize = 4 << 20;

/// Fills `out` by calling `read(at, part)` for each part of it (`at`: the part's offset in
/// `out`), the parts no longer than [`STRIPE`] and read on `threads` threads at once (0:
/// [`READS_IN_FLIGHT`]); the first error wins.
pub(crate) fn striped<E: Send>(
    out: &mut [u8],
    threads: usize,
    read: impl Fn(usize, &mut [u8]) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let threads = if threads == 0 {
        READS_IN_FLIGHT
    } else {
        threads
    };
    let stripe = out.len().div_ceil(threads).clamp(1, STRIPE);
    let parts: Vec<(usize, &mut [u8])> = out
        .chunks_mut(stripe)
        .enumerate()
        .map(|(i, part)| (i * stripe, part))
        .collect();
    if threads == 1 || parts.len() < 2 {
        return parts.into_iter().try_for_each(|(at, part)| read(at, part));
    }
    let threads = threads.min(parts.len());
    let queue = std::sync::Mutex::new(parts.into_iter());
    let next = || {
        queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .next()
    };
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    while let Some((at, part)) = next() {
                        read(at, part)?;
                    }
                    Ok(())
                })
            })
            .collect();
        // The scope joins every worker before it returns, the first error or not.
        workers.into_iter().try_for_each(|w| {
            w.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::striped;

    #[test]
    fn striped_reads_fill_every_byte_in_place() {
        let source: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        for threads in [0, 1, 3, 16] {
            let mut out = vec![0u8; source.len()];
            striped(&mut out, threads, |at, part: &mut [u8]| {
                part.copy_from_slice(&source[at..at + part.len()]);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(out, source, "threads {threads}");
        }
        let mut empty = [];
        striped(&mut empty, 4, |_, _| Err::<(), &str>("never called")).unwrap();
    }

    #[test]
    fn a_failed_read_is_the_error() {
        let mut out = vec![0u8; 100];
        let got = striped(&mut out, 4, |at, _| if at >= 50 { Err(at) } else { Ok(()) });
        assert!(got.is_err());
    }
}
