//! The sections a field's packing is written in: 5 (data representation) and 7 (data).

use super::simple::pack;
use crate::error::{Error, Result};
use crate::field::Simple;

/// A section: its length (4 octets), its number, then `body`.
fn section(number: u8, body: &[u8]) -> Vec<u8> {
    let mut s = Vec::with_capacity(5 + body.len());
    s.extend_from_slice(&((5 + body.len()) as u32).to_be_bytes());
    s.push(number);
    s.extend_from_slice(body);
    s
}

/// A signed integer of 16 bits in GRIB's sign-and-magnitude form.
fn signed16(v: i32) -> Result<[u8; 2]> {
    let magnitude = u16::try_from(v.unsigned_abs())
        .ok()
        .filter(|m| *m < 0x8000)
        .ok_or_else(|| Error::Write {
            what: format!("scale factor {v} does not fit GRIB's 16 bits"),
        })?;
    Ok((magnitude | if v < 0 { 0x8000 } else { 0 }).to_be_bytes())
}

/// The number of packed values, as section 5 states it (4 octets).
fn count(values: &[f64]) -> Result<[u8; 4]> {
    u32::try_from(values.len())
        .map(u32::to_be_bytes)
        .map_err(|_| Error::Write {
            what: format!("{} values do not fit one GRIB 2 field", values.len()),
        })
}

/// Template 5.0 (`grid_simple`) and its data.
pub(super) fn simple(values: &[f64], p: &Simple, original_type: u8) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut body = Vec::with_capacity(16);
    body.extend_from_slice(&count(values)?);
    body.extend_from_slice(&0u16.to_be_bytes());
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the reference is an IEEE single already"
    )]
    body.extend_from_slice(&(p.reference_value as f32).to_be_bytes());
    body.extend_from_slice(&signed16(p.binary_scale_factor)?);
    body.extend_from_slice(&signed16(p.decimal_scale_factor)?);
    body.push(u8::try_from(p.bits_per_value).unwrap_or(u8::MAX));
    body.push(original_type);
    Ok((section(5, &body), section(7, &pack(values, p)?)))
}

/// Template 5.4 (`grid_ieee`) and its data: big-endian floats of `bits` (32 or 64) bits.
pub(super) fn ieee(values: &[f64], bits: u32) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut body = Vec::with_capacity(7);
    body.extend_from_slice(&count(values)?);
    body.extend_from_slice(&4u16.to_be_bytes());
    body.push(if bits == 32 { 1 } else { 2 });
    let mut data = Vec::with_capacity(values.len() * (bits as usize / 8));
    for &v in values {
        if bits == 32 {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "32-bit IEEE packing rounds to singles, as ecCodes does"
            )]
            data.extend_from_slice(&(v as f32).to_be_bytes());
        } else {
            data.extend_from_slice(&v.to_be_bytes());
        }
    }
    Ok((section(5, &body), section(7, &data)))
}
