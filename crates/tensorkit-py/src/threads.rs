//! How many threads a call decodes on, as Python asks for it with `threads=`.

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
