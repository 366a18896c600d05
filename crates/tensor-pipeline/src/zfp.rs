//! zfp, as Tensogram stores it: one headerless zfp stream of a 1-D field of float64 values
//! (zfp 1.0, the `zfp-sys-cc` crate's bindings to its bundled C source), in one of zfp's three
//! modes: fixed rate (bits per value, blocks not aligned), fixed precision (bit planes) or
//! fixed accuracy (an absolute error tolerance). The stream records none of this: the
//! reader needs the mode and the value count from the descriptor.
//!
//! The reference reads every payload as float64 values in the machine's order, whatever the
//! dtype and byte order say, and writes the decoded values in the descriptor's byte order.
//! This reader does the same (so it reads what the reference wrote, float32 payloads as pairs
//! of float32 taken for one float64 included); the pipeline writes zfp for little-endian
//! float64 only, the one case both read as the values they are.

use crate::error::Result;
use crate::float64_field;

const CODEC: &str = "zfp";

/// zfp's mode and its parameter (`zfp_mode` and `zfp_rate`, `zfp_precision` or
/// `zfp_tolerance`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Bits per value.
    FixedRate(f64),
    /// Uncompressed bit planes kept.
    FixedPrecision(u32),
    /// The largest absolute error.
    FixedAccuracy(f64),
}

impl Mode {
    /// Checks the mode's parameter: a rate of more than 0 and at most 64 bits per value, a
    /// precision of 1 to 64 bit planes, a finite tolerance of at least 0. Anything else
    /// would have zfp size its stream by a number no float64 stream needs (a rate of 1e9
    /// asked for 2.9 GB to decode 24 values).
    pub fn check(self) -> Result<Mode> {
        let fine = match self {
            Mode::FixedRate(r) => r > 0.0 && r <= 64.0,
            Mode::FixedPrecision(p) => (1..=64).contains(&p),
            Mode::FixedAccuracy(t) => t.is_finite() && t >= 0.0,
        };
        if fine {
            Ok(self)
        } else {
            Err(crate::error::Error::Corrupt {
                codec: CODEC,
                reason: format!(
                    "{} {} is out of range (rate 0 to 64 bits per value, precision 1 to 64 \
                     bit planes, a finite tolerance of at least 0)",
                    self.name(),
                    match self {
                        Mode::FixedRate(r) | Mode::FixedAccuracy(r) => r.to_string(),
                        Mode::FixedPrecision(p) => p.to_string(),
                    }
                ),
            })
        }
    }

    /// The name `zfp_mode` gives it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mode::FixedRate(_) => "fixed_rate",
            Mode::FixedPrecision(_) => "fixed_precision",
            Mode::FixedAccuracy(_) => "fixed_accuracy",
        }
    }
}

#[cfg(feature = "zfp")]
fn failed(what: impl Into<String>) -> crate::error::Error {
    crate::error::Error::Corrupt {
        codec: CODEC,
        reason: what.into(),
    }
}

/// Compresses `data`, float64 values in the machine's byte order, in `mode`.
pub fn compress(data: &[u8], mode: Mode) -> Result<Vec<u8>> {
    let values = float64_field::values(CODEC, data)?;
    if values.is_empty() {
        return Ok(Vec::new());
    }
    ffi::compress(&values, mode.check()?)
}

/// Decodes the stream `src` of `dst.len() / 8` float64 values into `dst`, each in
/// `big_endian` order or the machine's.
pub fn decompress_into(src: &[u8], mode: Mode, dst: &mut [u8], big_endian: bool) -> Result<()> {
    let n = float64_field::count(CODEC, dst.len())?;
    if !float64_field::has_values(CODEC, src, n)? {
        return Ok(());
    }
    let mode = mode.check()?;
    let mut values = tensor_core::buffer::try_filled(n, 0f64, "zfp values")?;
    ffi::decompress(src, mode, &mut values)?;
    float64_field::write(&values, dst, big_endian);
    Ok(())
}

#[cfg(feature = "zfp")]
#[allow(unsafe_code)]
mod ffi {
    //! The calls into zfp. Every pointer handed to zfp points into a Rust buffer that lives
    //! until after the zfp objects using it are freed, and every length given is that
    //! buffer's length.

    use super::{Mode, failed};
    use crate::error::Result;
    use std::ffi::c_void;
    use zfp_sys_cc as z;

    /// zfp's stream, field and bit stream, freed together.
    struct Session {
        zfp: *mut z::zfp_stream,
        field: *mut z::zfp_field,
        stream: *mut z::bitstream,
    }

    impl Drop for Session {
        fn drop(&mut self) {
            // SAFETY: each pointer is null or was returned by the matching zfp constructor
            // and is freed exactly once, here.
            unsafe {
                if !self.field.is_null() {
                    z::zfp_field_free(self.field);
                }
                if !self.zfp.is_null() {
                    z::zfp_stream_close(self.zfp);
                }
                if !self.stream.is_null() {
                    z::stream_close(self.stream);
                }
            }
        }
    }

    /// A zfp stream over `values` (a 1-D double field) in `mode`, without a bit stream yet.
    fn session(values: *mut f64, n: usize, mode: Mode) -> Result<Session> {
        // SAFETY: `values` points to `n` doubles that outlive the session (the callers'
        // buffers); zfp only records the pointer here.
        let field =
            unsafe { z::zfp_field_1d(values.cast::<c_void>(), z::zfp_type_zfp_type_double, n) };
        // SAFETY: a null bit stream is allowed; one is attached before any coding.
        let zfp = unsafe { z::zfp_stream_open(std::ptr::null_mut()) };
        let s = Session {
            zfp,
            field,
            stream: std::ptr::null_mut(),
        };
        if field.is_null() || zfp.is_null() {
            return Err(failed("zfp could not allocate its stream"));
        }
        // SAFETY: `zfp` is a live stream.
        unsafe {
            match mode {
                Mode::FixedRate(rate) => {
                    z::zfp_stream_set_rate(zfp, rate, z::zfp_type_zfp_type_double, 1, 0);
                }
                Mode::FixedPrecision(p) => {
                    z::zfp_stream_set_precision(zfp, p);
                }
                Mode::FixedAccuracy(t) => {
                    z::zfp_stream_set_accuracy(zfp, t);
                }
            }
        }
        Ok(s)
    }

    /// The most bytes the session's stream can take.
    fn maximum(s: &Session) -> usize {
        // SAFETY: both pointers are live (checked when the session was made).
        unsafe { z::zfp_stream_maximum_size(s.zfp, s.field) }
    }

    /// Attaches `buf` as the session's bit stream, rewound.
    fn attach(s: &mut Session, buf: &mut [u8]) -> Result<()> {
        // SAFETY: `buf` outlives the session (declared before it by every caller) and its
        // length is given.
        s.stream = unsafe { z::stream_open(buf.as_mut_ptr().cast::<c_void>(), buf.len()) };
        if s.stream.is_null() {
            return Err(failed("zfp could not open its bit stream"));
        }
        // SAFETY: live stream and bit stream.
        unsafe {
            z::zfp_stream_set_bit_stream(s.zfp, s.stream);
            z::zfp_stream_rewind(s.zfp);
        }
        Ok(())
    }

    pub(super) fn compress(values: &[f64], mode: Mode) -> Result<Vec<u8>> {
        // zfp takes a mutable pointer but only reads the field when compressing.
        let mut input = values.to_vec();
        let mut out;
        let used = {
            let mut s = session(input.as_mut_ptr(), input.len(), mode)?;
            out = tensor_core::buffer::try_filled(maximum(&s), 0u8, "a zfp stream")?;
            attach(&mut s, &mut out)?;
            // SAFETY: the session's field and bit stream point into `input` and `out`, both
            // alive for the call.
            unsafe { z::zfp_compress(s.zfp, s.field) }
        };
        if used == 0 {
            return Err(failed("zfp could not compress the values"));
        }
        out.truncate(used);
        Ok(out)
    }

    pub(super) fn decompress(src: &[u8], mode: Mode, values: &mut [f64]) -> Result<()> {
        let n = values.len();
        let mut padded;
        let (done, used) = {
            let mut s = session(values.as_mut_ptr(), n, mode)?;
            let max = maximum(&s);
            if max == 0 || src.len() > max {
                return Err(failed(format!(
                    "a stream of {} bytes cannot hold {n} values in this mode (at most {max} bytes)",
                    src.len()
                )));
            }
            // The stream padded to the most the values can take: zfp reads whole words and
            // never past what `n` values in this mode can use.
            padded = tensor_core::buffer::try_filled(max, 0u8, "a zfp stream")?;
            padded[..src.len()].copy_from_slice(src);
            attach(&mut s, &mut padded)?;
            // SAFETY: the field holds `n` doubles of `values`; the bit stream is `padded`,
            // both alive for the call.
            let done = unsafe { z::zfp_decompress(s.zfp, s.field) };
            // SAFETY: a live stream.
            (done, unsafe { z::zfp_stream_compressed_size(s.zfp) })
        };
        if done == 0 {
            return Err(failed("the stream does not decode"));
        }
        // zfp writes and reads whole 64-bit words: a sound stream ends with the last word it
        // read. One that ends before was cut (zfp read the zeros padding it); one that runs
        // on holds bytes no value accounts for.
        if used != src.len() {
            return Err(failed(format!(
                "the stream is {} bytes; its {n} values take {used}",
                src.len()
            )));
        }
        Ok(())
    }
}

#[cfg(not(feature = "zfp"))]
mod ffi {
    use super::Mode;
    use crate::error::{Error, Result};

    pub(super) fn compress(_: &[f64], _: Mode) -> Result<Vec<u8>> {
        Err(Error::not_built(super::CODEC))
    }

    pub(super) fn decompress(_: &[u8], _: Mode, _: &mut [f64]) -> Result<()> {
        Err(Error::not_built(super::CODEC))
    }
}

#[cfg(all(test, feature = "zfp"))]
mod tests {
    use super::*;

    fn field(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| (250.0 + 20.0 * (i as f64 / 17.0).sin()).to_ne_bytes())
            .collect()
    }

    #[test]
    fn every_mode_round_trips_within_its_bound() {
        let data = field(1000);
        for (mode, bound) in [
            (Mode::FixedAccuracy(1e-3), 1e-3),
            (Mode::FixedPrecision(40), 1e-6),
            (Mode::FixedRate(32.0), 1e-4),
        ] {
            let c = compress(&data, mode).unwrap();
            assert!(c.len() < data.len(), "{mode:?}");
            let mut out = vec![0u8; data.len()];
            decompress_into(&c, mode, &mut out, false).unwrap();
            for (a, b) in data.chunks(8).zip(out.chunks(8)) {
                let (a, b) = (
                    f64::from_ne_bytes(a.try_into().unwrap()),
                    f64::from_ne_bytes(b.try_into().unwrap()),
                );
                assert!((a - b).abs() <= bound, "{mode:?}: {a} against {b}");
            }
        }
    }

    #[test]
    fn streams_that_do_not_fit_are_errors() {
        let data = field(64);
        let c = compress(&data, Mode::FixedRate(16.0)).unwrap();
        let mut out = vec![0u8; 8 * 8];
        assert!(decompress_into(&c, Mode::FixedRate(16.0), &mut out, false).is_err());
        assert!(decompress_into(&[], Mode::FixedRate(16.0), &mut out, false).is_err());
        assert!(decompress_into(&c, Mode::FixedRate(16.0), &mut [0u8; 12], false).is_err());
        let mut ok = vec![0u8; data.len()];
        assert!(decompress_into(&c, Mode::FixedRate(16.0), &mut ok, false).is_ok());
        // Cut anywhere, or with bytes after it, a stream is an error (zfp pads with zeros
        // and decoded a cut one as if whole).
        for cut in 0..c.len() {
            assert!(decompress_into(&c[..cut], Mode::FixedRate(16.0), &mut ok, false).is_err());
        }
        let longer = [c.clone(), vec![0; 8]].concat();
        assert!(decompress_into(&longer, Mode::FixedRate(16.0), &mut ok, false).is_err());
        for mode in [Mode::FixedAccuracy(1e-3), Mode::FixedPrecision(30)] {
            let c = compress(&field(1000), mode).unwrap();
            let mut out = vec![0u8; 8000];
            decompress_into(&c, mode, &mut out, false).unwrap();
            assert!(decompress_into(&c[..c.len() - 9], mode, &mut out, false).is_err());
            assert!(decompress_into(&c[..16], mode, &mut out, false).is_err());
        }
    }

    #[test]
    fn parameters_out_of_range_are_refused_before_zfp_sizes_anything() {
        let c = compress(&field(24), Mode::FixedRate(16.0)).unwrap();
        let mut out = vec![0u8; 24 * 8];
        for mode in [
            Mode::FixedRate(1e9),
            Mode::FixedRate(-5.0),
            Mode::FixedRate(f64::NAN),
            Mode::FixedPrecision(0),
            Mode::FixedPrecision(65),
            Mode::FixedAccuracy(f64::INFINITY),
            Mode::FixedAccuracy(-1.0),
        ] {
            let e = decompress_into(&c, mode, &mut out, false).unwrap_err();
            assert!(e.to_string().contains("out of range"), "{mode:?}: {e}");
            assert!(compress(&field(24), mode).is_err(), "{mode:?}");
        }
    }
}
