//! Complex packing (templates 5.2 and 5.3): groups with their own references and widths,
//! with or without spatial differencing.
#![allow(clippy::many_single_char_names)]

use crate::bits::BitReader;
use crate::context::At;
use crate::error::Result;
use crate::field::Complex;
use crate::formula::Formula;

/// Complex packing, with or without spatial differencing (templates 5.2, 5.3, data
/// template 7.2/7.3), as ecCodes decodes it.
pub(super) fn complex(c: &Complex, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    const MISSING: i64 = i64::MAX;
    let p = &c.simple;
    let n = out.len();
    if c.groups == 0 {
        out.fill(p.reference_value);
        return Ok(());
    }
    let bad = |what: &str| at.malformed(format!("complex packing: {what}"));
    let short = |what: &str| {
        at.truncated(
            format!("complex packing's {what}"),
            format!("the data section has {} bytes", data.len()),
        )
    };
    let bits = p.bits_per_value;
    if bits > 63 || c.width_bits > 63 || c.length_bits > 63 {
        return Err(bad("a width of more than 63 bits"));
    }
    // Each group holds at least one value: more groups than values is damage, and would
    // cost time out of proportion to the message (groups described in 0 bits each).
    if c.groups > n as u64 {
        return Err(bad(&format!("{} groups for {n} packed values", c.groups)));
    }
    // Every part must fit in the data section before anything is read.
    let extra_bits = if c.order > 0 {
        u64::from(c.order + 1) * u64::from(c.descriptor_octets) * 8
    } else {
        0
    };
    let total_bits = data.len() as u64 * 8;
    let part = |bits_each: u32| {
        c.groups
            .checked_mul(u64::from(bits_each))
            .filter(|&b| b <= total_bits)
    };
    let refs_bits = part(bits)
        .and_then(|b| b.checked_add(extra_bits))
        .ok_or_else(|| short("group references"))?;
    let widths_bits = part(c.width_bits).ok_or_else(|| short("group widths"))?;
    let lengths_bits = part(c.length_bits).ok_or_else(|| short("group lengths"))?;
    let refs_at = 0usize;
    let widths_at = refs_at + refs_bits.div_ceil(8) as usize;
    let lengths_at = widths_at + widths_bits.div_ceil(8) as usize;
    let values_at = lengths_at + lengths_bits.div_ceil(8) as usize;
    if values_at > data.len() {
        return Err(short("group descriptions"));
    }
    let mut refs = BitReader::new(&data[refs_at..widths_at]);
    let mut widths = BitReader::new(&data[widths_at..lengths_at]);
    let mut lengths = BitReader::new(&data[lengths_at..values_at]);
    let mut vals = BitReader::new(&data[values_at..]);
    let mut extras = [0u64; 2];
    let mut minimum = 0i64;
    if c.order > 0 {
        let w = u32::from(c.descriptor_octets) * 8;
        for e in extras.iter_mut().take(usize::from(c.order)) {
            *e = refs.read(w).ok_or_else(|| short("extra descriptors"))?;
        }
        minimum = refs
            .read_signed(w)
            .ok_or_else(|| short("extra descriptors"))?;
    }
    // The integers are built in the output's own memory (as i64), then turned into values
    // in place: no buffer of their own.
    let ints: &mut [i64] = bytemuck::cast_slice_mut(out);
    let mut filled = 0usize;
    for g in 0..c.groups {
        let group_ref = refs.read(bits).ok_or_else(|| short("group references"))?;
        let scaled_len = lengths
            .read(c.length_bits)
            .ok_or_else(|| short("group lengths"))?;
        let width = widths
            .read(c.width_bits)
            .ok_or_else(|| short("group widths"))?
            + u64::from(c.width_reference);
        let len = if g == c.groups - 1 {
            c.last_length
        } else {
            scaled_len
                .checked_mul(c.length_increment)
                .and_then(|l| l.checked_add(c.length_reference))
                .ok_or_else(|| bad("a group length overflows"))?
        };
        if width > 63 {
            return Err(bad(&format!("group {g} is {width} bits wide")));
        }
        if len > (n - filled) as u64 {
            return Err(bad(&format!(
                "the groups hold more than the {n} packed values"
            )));
        }
        let width = width as u32;
        let primary = if width == 0 {
            (1u64 << bits) - 1
        } else {
            (1u64 << width) - 1
        };
        let run = &mut ints[filled..filled + len as usize];
        filled += run.len();
        if c.missing_management == 0 {
            for slot in run {
                let x = vals.read(width).ok_or_else(|| short("packed values"))?;
                *slot = group_ref.wrapping_add(x) as i64;
            }
            continue;
        }
        for slot in run {
            let x = vals.read(width).ok_or_else(|| short("packed values"))?;
            let missing = match c.missing_management {
                1 if width == 0 => group_ref == primary,
                1 => x == primary,
                2 if width == 0 => group_ref == primary || group_ref == primary - 1,
                2 => x == primary || x == primary - 1,
                _ => false,
            };
            *slot = if missing {
                MISSING
            } else {
                group_ref.wrapping_add(x) as i64
            };
        }
    }
    if filled != n {
        return Err(bad(&format!(
            "the groups hold {filled} values, not the {n} packed"
        )));
    }
    if c.order > 0 {
        undifference(ints, c.order, minimum, extras, MISSING);
    }
    let f = Formula::of(p);
    for o in out.iter_mut() {
        let x = o.to_bits() as i64;
        *o = if x == MISSING {
            f64::NAN
        } else {
            f.value(x as f64)
        };
    }
    Ok(())
}

/// Undoes first- or second-order spatial differencing over the values that are not missing.
pub(super) fn undifference(v: &mut [i64], order: u8, bias: i64, extras: [u64; 2], missing: i64) {
    let mut present = v.iter_mut().filter(|x| **x != missing);
    let (mut penultimate, mut last) = (extras[0] as i64, extras[0] as i64);
    if let Some(first) = present.next() {
        *first = extras[0] as i64;
    }
    if order == 2
        && let Some(second) = present.next()
    {
        *second = extras[1] as i64;
        last = extras[1] as i64;
    }
    for x in present {
        if order == 1 {
            *x = x.wrapping_add(last).wrapping_add(bias);
        } else {
            *x = x
                .wrapping_add(bias)
                .wrapping_add(last.wrapping_mul(2))
                .wrapping_sub(penultimate);
            penultimate = last;
        }
        last = *x;
    }
}
