//! Reading a large map's entries on two cores at once.
//!
//! A CBOR map says how many entries it has, not where each one starts, so the second half
//! of a map cannot be found without walking the first. The second core guesses instead: it
//! tries to read an entry at each byte past the middle until one reads, and walks on from
//! there. The first core walks from the start as usual and stops when it lands exactly on
//! that guess, which proves it an entry boundary; if it steps over the guess instead, the
//! guess was wrong, the second core's work is dropped and the first reads to the end. Either
//! way the entries, the errors and the encoding flags are those of one walk in one piece:
//! the second half's work counts only when the first half's walk confirms where it starts.

use super::{Decoder, Error};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Below this many bytes after its head, a map is read on one core.
const SPLIT_BYTES: usize = 64 << 10;
/// How far past the middle the second core looks for an entry to start at.
const SEARCH_BYTES: usize = 16 << 10;

/// The most entries room is made for before any is read.
const RESERVED: usize = 4096;

/// What the two halves tell each other while they run.
struct Meeting {
    /// Where the second half starts (`usize::MAX` until it knows).
    start: AtomicUsize,
    /// How many entries the second half must read, once the first half has confirmed its
    /// start (`usize::MAX` until then).
    need: AtomicUsize,
    /// The second half's work will not be used: the first half stepped over its start, or
    /// read the whole map.
    unused: AtomicBool,
}

/// How the first half ended.
enum FirstHalf {
    /// It read every entry.
    Whole,
    /// It stopped where the second half starts, that being an entry boundary.
    Met,
}

/// What the second half read: the extent of its first key (where it started), its entries,
/// and where each ended with the decoder's encoding flags then.
struct SecondHalf<T> {
    first_key: (usize, usize),
    entries: Vec<T>,
    ends: Vec<(usize, [bool; 3])>,
}

impl Decoder<'_> {
    /// The values `entry` makes of the entries of the map of definite length that comes
    /// next, in order; `None`, having read nothing, when the next item is anything else.
    /// `entry` is called with the decoder at an entry's key and must read the key and its
    /// value, as with [`for_each_entry`](Self::for_each_entry); it must not depend on
    /// anything but the bytes it reads, since it is also tried at places that turn out not
    /// to be entries.
    ///
    /// With the `parallel` feature and more than one [thread](crate::tee::threads), a large
    /// map (64 KiB or more) is read in two halves at once; the result, errors included, and
    /// the [encoding flags](Self::was_deterministic) are the same as when it is read in one
    /// piece.
    pub fn collect_entries<T, E>(
        &mut self,
        entry: impl Fn(&mut Self) -> Result<T, E> + Sync,
    ) -> Result<Option<Vec<T>>, E>
    where
        T: Send,
        E: From<Error> + Send,
    {
        let n = match self.peek()? {
            h if h.major != 5 => return Ok(None),
            super::Head { arg: Some(n), .. } => n,
            _ => return Ok(None),
        };
        self.head()?;
        let n = self.count(n, 2)?;
        // `count` bounds `n` by the bytes left; the reservation is bounded further, for
        // entries that take far more room decoded than encoded.
        let mut out = Vec::with_capacity(n.min(RESERVED));
        let mut last = None;
        if crate::tee::threads() < 2 || self.remaining() < SPLIT_BYTES {
            self.read_entries(n, &mut out, &mut last, None, &entry)?;
            return Ok(Some(out));
        }
        let meeting = Meeting {
            start: AtomicUsize::new(usize::MAX),
            need: AtomicUsize::new(usize::MAX),
            unused: AtomicBool::new(false),
        };
        let (buf, middle) = (self.buf, self.pos + self.remaining() / 2);
        // A `Mutex`, not a `OnceLock`: entries need only be `Send`.
        let second = std::sync::Mutex::new(None);
        // The first half on this thread, at once; the second on another core.
        let first = crate::tee::beside(
            || {
                let r = self.read_entries(n, &mut out, &mut last, Some(&meeting), &entry);
                if !matches!(r, Ok(FirstHalf::Met)) {
                    meeting.unused.store(true, Ordering::Release);
                }
                r
            },
            || {
                let half = second_half(buf, middle, n, &meeting, &entry);
                *second
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = half;
            },
        );
        let second = second
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let FirstHalf::Met = first? {
            // The second half's entries up to the map's end, with where the last of them
            // ends, when they start where the first half stopped.
            let rest = n - out.len();
            let usable = second
                .filter(|s| last.is_some() && s.first_key.0 == self.pos)
                .and_then(|s| Some((*s.ends.get(rest.checked_sub(1)?)?, s)));
            if let Some(((end, flags), mut s)) = usable {
                self.note_order(s.first_key, &mut last);
                self.pos = end;
                // Moved in one piece: entries may be large.
                s.entries.truncate(rest);
                out.append(&mut s.entries);
                self.canonical &= flags[0];
                self.sorted &= flags[1];
                self.short_floats &= flags[2];
            } else {
                // The second half failed (or gave up) before the map's end: read on here,
                // meeting whatever stopped it in its place.
                self.read_entries(n, &mut out, &mut last, None, &entry)?;
            }
        }
        Ok(Some(out))
    }

    /// Reads entries into `out` until it holds `n`, noting key order (`last` is the previous
    /// key's extent). With a `meeting`, stops early where the second half starts, if the
    /// walk lands there.
    fn read_entries<T, E: From<Error>>(
        &mut self,
        n: usize,
        out: &mut Vec<T>,
        last: &mut Option<(usize, usize)>,
        meeting: Option<&Meeting>,
        entry: &impl Fn(&mut Self) -> Result<T, E>,
    ) -> Result<FirstHalf, E> {
        let mut meeting = meeting;
        while out.len() < n {
            if let Some(m) = meeting {
                let start = m.start.load(Ordering::Acquire);
                if start == self.pos {
                    m.need.store(n - out.len(), Ordering::Release);
                    return Ok(FirstHalf::Met);
                }
                if start < self.pos {
                    // Stepped over it: not an entry boundary, or found too late to help.
                    m.unused.store(true, Ordering::Release);
                    meeting = None;
                }
            }
            self.note_key(0, last)?;
            out.push(entry(self)?);
        }
        Ok(FirstHalf::Whole)
    }

    fn flags(&self) -> [bool; 3] {
        [self.canonical, self.sorted, self.short_floats]
    }
}

/// The second half: finds the first place at or after `from` where an entry reads, and reads
/// the entries that follow that one, until the first half says how many it needs (at most
/// `n - 1`) or that none will be used, or one fails to read. `None` if no entry reads within
/// [`SEARCH_BYTES`].
///
/// The entry found is only a probe: a place inside an entry can read as a shorter entry that
/// ends where a real one starts (a text value followed by a map, say), so the second half
/// starts after it, where a wrong guess has most likely met the real sequence again.
fn second_half<'a, T, E>(
    buf: &'a [u8],
    from: usize,
    n: usize,
    meeting: &Meeting,
    entry: &impl Fn(&mut Decoder<'a>) -> Result<T, E>,
) -> Option<SecondHalf<T>> {
    let unused = || meeting.unused.load(Ordering::Acquire);
    let mut start = None;
    for probe in from..buf.len().min(from + SEARCH_BYTES) {
        if unused() {
            return None;
        }
        let mut d = Decoder::at(buf, probe);
        if d.key_end(0).is_ok() && entry(&mut d).is_ok() {
            start = Some(d.pos);
            break;
        }
    }
    // Fresh encoding flags: the probe's count for nothing.
    let mut d = Decoder::at(buf, start?);
    meeting.start.store(d.pos, Ordering::Release);
    // About half the entries are this half's: room for a few more, so that it rarely grows.
    let room = (n / 2 + n / 16).min(RESERVED);
    let (mut entries, mut ends) = (Vec::with_capacity(room), Vec::with_capacity(room));
    let (mut first_key, mut last) = (None, None);
    while entries.len() < meeting.need.load(Ordering::Acquire).min(n - 1) && !unused() {
        if d.note_key(0, &mut last).is_err() {
            break;
        }
        first_key = first_key.or(last);
        match entry(&mut d) {
            Ok(value) => {
                entries.push(value);
                ends.push((d.pos, d.flags()));
            }
            Err(_) => break,
        }
    }
    Some(SecondHalf {
        first_key: first_key?,
        entries,
        ends,
    })
}

#[cfg(test)]
mod tests {
    use crate::Error;
    use crate::cbor::{Decoder, Encoder, Value};
    use proptest::prelude::*;

    /// What an entry reads as here: a text key and a map, as a manifest's objects are.
    fn entry(d: &mut Decoder<'_>) -> Result<(String, Value), Error> {
        let key = d.text()?.into_owned();
        let value = d.value()?;
        if !matches!(value, Value::Map(_)) {
            return Err(d.error("an entry's value must be a map"));
        }
        Ok((key, value))
    }

    /// Everything a walk tells: the entries or the error, where it stopped, and the flags.
    fn outcome(
        d: &Decoder<'_>,
        r: &Result<Option<Vec<(String, Value)>>, Error>,
    ) -> (String, usize, [bool; 3]) {
        (format!("{r:?}"), d.position(), d.flags())
    }

    /// The same map read in one piece, entry by entry.
    fn in_one_piece(bytes: &[u8]) -> (String, usize, [bool; 3]) {
        let mut d = Decoder::new(bytes);
        let mut out = Vec::new();
        let r = d
            .for_each_entry(|d| -> Result<(), Error> {
                out.push(entry(d)?);
                Ok(())
            })
            .map(|is_map| is_map.then_some(out));
        outcome(&d, &r)
    }

    /// A map of `n` entries well over the size that is split, in deterministic order unless
    /// `swap` says which neighbours trade places; the values hold text that reads as entries
    /// itself (a key and a map), to trap a second half that starts in the wrong place.
    fn manifest(n: usize, swap: Option<usize>, text: &str) -> Vec<u8> {
        let mut keys: Vec<String> = (0..n).map(|i| format!("object.{i:06}")).collect();
        if let Some(i) = swap {
            keys.swap(i % n, (i + 1) % n);
        }
        let mut e = Encoder::new();
        e.map(n);
        for (i, k) in keys.iter().enumerate() {
            e.text(k);
            e.map(3);
            e.text("a");
            e.uint(i as u64 * 4099);
            e.text("s");
            e.text(text);
            e.text("v");
            e.array(2);
            e.float(0.5);
            e.text("\u{65}parts");
        }
        // Something after the map, as a manifest has its attributes.
        e.text("attributes");
        e.out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Split or not, and wherever the bytes are damaged, a map reads to the same entries,
        /// error, position and flags as in one piece.
        #[test]
        fn a_split_read_is_a_read_in_one_piece(
            n in 2500usize..5000,
            swap in proptest::option::of(0usize..5000),
            damage in proptest::option::of((0.0f64..1.0, any::<u8>())),
            text in "(eparts\u{a1}|[a-z]{0,12}|\u{e9}){0,6}",
        ) {
            let mut bytes = manifest(n, swap, &text);
            prop_assert!(bytes.len() > super::SPLIT_BYTES);
            if let Some((at, byte)) = damage {
                let last = bytes.len() - 1;
                bytes[((at * last as f64) as usize).min(last)] = byte;
            }
            let mut d = Decoder::new(&bytes);
            let r = d.collect_entries(entry);
            prop_assert_eq!(outcome(&d, &r), in_one_piece(&bytes));
        }
    }

    /// Keys out of order where the halves meet: the second half starts one entry past the
    /// first that starts after the middle, so one of these swaps straddles the seam.
    #[test]
    fn keys_out_of_order_at_the_seam_are_seen() {
        let n = 4000;
        for swap in n / 2 - 4..n / 2 + 4 {
            let bytes = manifest(n, Some(swap), "");
            for _ in 0..4 {
                let mut d = Decoder::new(&bytes);
                let r = d.collect_entries(entry);
                assert!(!d.keys_were_sorted(), "swap at {swap}");
                assert_eq!(outcome(&d, &r), in_one_piece(&bytes));
            }
        }
    }

    /// The second core's entries are used, not read again: entries read on another thread
    /// reach the result (tried a few times, as that thread may be busy elsewhere).
    #[test]
    fn the_second_half_is_used_when_there_is_a_second_core() {
        if crate::tee::threads() < 2 {
            return;
        }
        let bytes = manifest(20_000, None, "some text");
        let here = std::thread::current().id();
        let used = (0..50).any(|_| {
            let mut d = Decoder::new(&bytes);
            let entries = d
                .collect_entries(|d| entry(d).map(|e| (e, std::thread::current().id())))
                .unwrap()
                .unwrap();
            assert_eq!(entries.len(), 20_000);
            assert_eq!(d.remaining(), "attributes".len() + 1);
            entries.iter().any(|(_, thread)| *thread != here)
        });
        assert!(used, "no entry read on the second core was used");
    }

    #[test]
    fn only_a_definite_map_is_collected() {
        let mut e = Encoder::new();
        e.indefinite_map();
        e.brk();
        for bytes in [&e.out[..], &[0x80][..]] {
            let mut d = Decoder::new(bytes);
            assert!(matches!(d.collect_entries(entry), Ok(None)));
            assert_eq!(d.position(), 0);
        }
    }
}
