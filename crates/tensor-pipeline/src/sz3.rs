//! SZ3, as Tensogram stores it: one SZ3 stream of a one-dimensional field of float64 values
//! (through `tensogram-sz3`, the reference's own bindings to its bundled SZ3), under an
//! absolute, relative or PSNR error bound. The stream records its own configuration and
//! dimensions; the reader checks them against the values the object holds before anything
//! is decoded.
//!
//! As with zfp, the reference reads every payload as float64 values in the machine's byte
//! order and writes the decoded values in the descriptor's byte order; this reader does the
//! same, and the pipeline writes SZ3 for little-endian float64 only.

use crate::error::{Error, Result};
use crate::float64_field;

const CODEC: &str = "sz3";

/// The error bound (`sz3_error_bound_mode` and `sz3_error_bound`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// The largest absolute error (`abs`).
    Absolute(f64),
    /// The largest error relative to the value range (`rel`).
    Relative(f64),
    /// The peak signal-to-noise ratio to keep, in dB (`psnr`).
    Psnr(f64),
}

impl Bound {
    /// The name `sz3_error_bound_mode` gives it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Bound::Absolute(_) => "abs",
            Bound::Relative(_) => "rel",
            Bound::Psnr(_) => "psnr",
        }
    }

    /// Its value (`sz3_error_bound`).
    #[must_use]
    pub fn value(self) -> f64 {
        match self {
            Bound::Absolute(v) | Bound::Relative(v) | Bound::Psnr(v) => v,
        }
    }

    /// The bound `sz3_error_bound_mode` names, with `value`.
    #[must_use]
    pub fn parse(mode: &str, value: f64) -> Option<Bound> {
        Some(match mode {
            "abs" => Bound::Absolute(value),
            "rel" => Bound::Relative(value),
            "psnr" => Bound::Psnr(value),
            _ => return None,
        })
    }
}

#[cfg(feature = "sz3")]
fn failed(e: impl std::fmt::Debug) -> Error {
    Error::Corrupt {
        codec: CODEC,
        reason: format!("{e:?}"),
    }
}

/// Compresses `data`, float64 values in the machine's byte order, under `bound`.
pub fn compress(data: &[u8], bound: Bound) -> Result<Vec<u8>> {
    let values = float64_field::values(CODEC, data)?;
    if values.is_empty() {
        return Ok(Vec::new());
    }
    encode(&values, bound)
}

/// Decodes the stream `src` of `dst.len() / 8` float64 values into `dst`, each in
/// `big_endian` order or the machine's.
pub fn decompress_into(src: &[u8], dst: &mut [u8], big_endian: bool) -> Result<()> {
    let n = float64_field::count(CODEC, dst.len())?;
    if !float64_field::has_values(CODEC, src, n)? {
        return Ok(());
    }
    let mut values = tensor_core::buffer::try_filled(n, 0f64, "SZ3 values")?;
    decode(src, &mut values)?;
    float64_field::write(&values, dst, big_endian);
    Ok(())
}

#[cfg(feature = "sz3")]
fn encode(values: &[f64], bound: Bound) -> Result<Vec<u8>> {
    let data = tensogram_sz3::DimensionedData::<f64, _>::build(&values)
        .dim(values.len())
        .map_err(failed)?
        .finish()
        .map_err(failed)?;
    let bound = match bound {
        Bound::Absolute(v) => tensogram_sz3::ErrorBound::Absolute(v),
        Bound::Relative(v) => tensogram_sz3::ErrorBound::Relative(v),
        Bound::Psnr(v) => tensogram_sz3::ErrorBound::PSNR(v),
    };
    tensogram_sz3::compress(&data, bound).map_err(failed)
}

/// Decodes `src` into `values`, after checking that the stream's own dimensions are
/// `values`' count.
#[cfg(feature = "sz3")]
fn decode(src: &[u8], values: &mut [f64]) -> Result<()> {
    let n = values.len();
    let mut slice = values;
    let mut data = tensogram_sz3::DimensionedData::<f64, _>::build_mut(&mut slice)
        .dim(n)
        .map_err(failed)?
        .finish()
        .map_err(failed)?;
    tensogram_sz3::decompress_into_dimensioned(src, &mut data).map_err(failed)?;
    Ok(())
}

#[cfg(not(feature = "sz3"))]
fn encode(_: &[f64], _: Bound) -> Result<Vec<u8>> {
    Err(Error::not_built(CODEC))
}

#[cfg(not(feature = "sz3"))]
fn decode(_: &[u8], _: &mut [f64]) -> Result<()> {
    Err(Error::not_built(CODEC))
}

#[cfg(all(test, feature = "sz3"))]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_bound_holds_and_bad_streams_are_errors() {
        let data: Vec<u8> = (0..2000)
            .flat_map(|i| (250.0 + 20.0 * (f64::from(i) / 17.0).sin()).to_ne_bytes())
            .collect();
        let c = compress(&data, Bound::Absolute(1e-3)).unwrap();
        assert!(c.len() < data.len());
        let mut out = vec![0u8; data.len()];
        decompress_into(&c, &mut out, false).unwrap();
        for (a, b) in data.chunks(8).zip(out.chunks(8)) {
            let (a, b) = (
                f64::from_ne_bytes(a.try_into().unwrap()),
                f64::from_ne_bytes(b.try_into().unwrap()),
            );
            assert!((a - b).abs() <= 1e-3, "{a} against {b}");
        }
        assert!(decompress_into(&c, &mut vec![0u8; 8 * 1999], false).is_err());
        assert!(decompress_into(&c[..c.len() / 3], &mut out, false).is_err());
        assert!(decompress_into(b"not an SZ3 stream", &mut out, false).is_err());
    }
}
