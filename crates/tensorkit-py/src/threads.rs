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

/// Fills each of `outs` by calling `read(i, at, part)` for each part of `outs[i]` (`at`:
/// the part's offset in it), the parts no longer than [`STRIPE`] and read on `threads`
/// threads at once (0: [`READS_IN_FLIGHT`]); the first error wins.
pub(crate) fn striped<E: Send>(
    outs: Vec<&mut [u8]>,
    threads: usize,
    read: impl Fn(usize, usize, &mut [u8]) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let threads = if threads == 0 {
        READS_IN_FLIGHT
    } else {
        threads
    };
    let total: usize = outs.iter().map(|o| o.len()).sum();
    let stripe = total.div_ceil(threads).clamp(1, STRIPE);
    let parts: Vec<(usize, usize, &mut [u8])> = outs
        .into_iter()
        .enumerate()
        .flat_map(|(i, out)| {
            out.chunks_mut(stripe)
                .enumerate()
                .map(move |(j, part)| (i, j * stripe, part))
        })
        .collect();
    if threads == 1 || parts.len() < 2 {
        return parts
            .into_iter()
            .try_for_each(|(i, at, part)| read(i, at, part));
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
                    while let Some((i, at, part)) = next() {
                        read(i, at, part)?;
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
            let (a, b) = out.split_at_mut(3001);
            striped(vec![a, b], threads, |i, at, part: &mut [u8]| {
                let at = at + if i == 0 { 0 } else { 3001 };
                part.copy_from_slice(&source[at..at + part.len()]);
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(out, source, "threads {threads}");
        }
        let mut empty = [];
        striped(vec![&mut empty], 4, |_, _, _| {
            Err::<(), &str>("never called")
        })
        .unwrap();
    }

    #[test]
    fn a_failed_read_is_the_error() {
        let mut out = vec![0u8; 100];
        let got = striped(
            vec![&mut out],
            4,
            |_, at, _| if at >= 50 { Err(at) } else { Ok(()) },
        );
        assert!(got.is_err());
    }
}
