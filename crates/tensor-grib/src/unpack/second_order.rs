//! Second-order packing (GRIB 1's grid second-order, GRIB 2's template 5.50002): groups of
//! values with their own widths and references, spatially differenced.
#![allow(clippy::many_single_char_names)]

use crate::bits::BitReader;
use crate::context::At;
use crate::error::Result;
use crate::field::SecondOrder;
use crate::formula::Formula;

/// Second-order packing, general extended (GRIB 2 template 5.50002 and GRIB 1): group
/// widths, lengths and first-order values (each byte-aligned), then the groups' values;
/// then up to third-order differencing is undone, as ecCodes does.
pub(super) fn second_order(c: &SecondOrder, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    let n = out.len();
    let order = usize::from(c.order);
    let bad = |what: String| at.malformed(format!("second-order packing: {what}"));
    let short = |what: &str| {
        at.truncated(
            format!("second-order packing's {what}"),
            format!("the data section has {} bytes", data.len()),
        )
    };
    if c.width_bits > 63 || c.length_bits > 63 || c.first_order_bits > 63 {
        return Err(bad("a descriptor wider than 63 bits".into()));
    }
    // Each group holds at least one value: more groups than values is damage, and would
    // cost time out of proportion to the message (groups described in 0 bits each).
    if c.groups > n as u64 {
        return Err(bad(format!("{} groups for {n} packed values", c.groups)));
    }
    let total_bits = data.len() as u64 * 8;
    let part = |bits_each: u32, what: &str| {
        c.groups
            .checked_mul(u64::from(bits_each))
            .filter(|&b| b <= total_bits)
            .map(|b| b.div_ceil(8) as usize)
            .ok_or_else(|| short(what))
    };
    let widths_len = part(c.width_bits, "group widths")?;
    let lengths_len = part(c.length_bits, "group lengths")?;
    let firsts_len = part(c.first_order_bits, "first-order values")?;
    let values_at = widths_len + lengths_len + firsts_len;
    if values_at > data.len() {
        return Err(short("group descriptions"));
    }
    let mut widths = BitReader::new(&data[..widths_len]);
    let mut lengths = BitReader::new(&data[widths_len..widths_len + lengths_len]);
    let mut firsts = BitReader::new(&data[widths_len + lengths_len..values_at]);
    let mut vals = BitReader::new(&data[values_at..]);
    if n < order {
        return Err(bad(format!(
            "{n} values, fewer than the differencing order {order}"
        )));
    }
    // The integers are built in the output's own memory (as i64), then turned into values
    // in place: no buffer of their own.
    let x: &mut [i64] = bytemuck::cast_slice_mut(out);
    x[..order].copy_from_slice(&c.spd[..order]);
    let mut filled = order;
    for g in 0..c.groups {
        let width = widths
            .read(c.width_bits)
            .ok_or_else(|| short("group widths"))?;
        let len = lengths
            .read(c.length_bits)
            .ok_or_else(|| short("group lengths"))?;
        let first = firsts
            .read(c.first_order_bits)
            .ok_or_else(|| short("first-order values"))? as i64;
        if width > 63 {
            return Err(bad(format!("group {g} is {width} bits wide")));
        }
        if len > (n - filled) as u64 {
            return Err(bad(format!(
                "the groups hold more than the {n} packed values"
            )));
        }
        for _ in 0..len {
            let v = vals
                .read(width as u32)
                .ok_or_else(|| short("packed values"))? as i64;
            x[filled] = v.wrapping_add(first);
            filled += 1;
        }
    }
    if filled != n {
        return Err(bad(format!(
            "the groups hold {filled} values, not the {n} packed"
        )));
    }
    let bias = c.spd[order];
    match order {
        1 => {
            let mut y = x[0];
            for v in &mut x[1..] {
                y = y.wrapping_add(v.wrapping_add(bias));
                *v = y;
            }
        }
        2 => {
            let (mut y, mut z) = (x[1].wrapping_sub(x[0]), x[1]);
            for v in &mut x[2..] {
                y = y.wrapping_add(v.wrapping_add(bias));
                z = z.wrapping_add(y);
                *v = z;
            }
        }
        3 => {
            let mut y = x[2].wrapping_sub(x[1]);
            let mut z = y.wrapping_sub(x[1].wrapping_sub(x[0]));
            let mut w = x[2];
            for v in &mut x[3..] {
                z = z.wrapping_add(v.wrapping_add(bias));
                y = y.wrapping_add(z);
                w = w.wrapping_add(y);
                *v = w;
            }
        }
        _ => {}
    }
    let f = Formula::of(&c.simple);
    for o in out.iter_mut() {
        let v = o.to_bits() as i64;
        *o = f.value(v as f64);
    }
    Ok(())
}
