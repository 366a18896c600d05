//! Complex packing (`grid_complex`, template 5.2) and complex packing with spatial
//! differencing of order 1 or 2 (`grid_complex_spatial_differencing`, 5.3), as ecCodes packs
//! them (its `data_g22order_packing`, after wgrib2): the integers split into groups of
//! similar values by the same merging passes, so that the groups — and so every key and byte
//! — are ecCodes' own. Missing points go in the bitmap, never in the groups.

use super::sections::section;
use crate::error::{Error, Result};

/// The scaling of a complex-packed field: `X = ⌊(v · 10^D − R) · 2^−E + 0.5⌋`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scaling {
    /// `R`, in the scaled units (before rounding to the single stored).
    pub(crate) reference: f64,
    /// `E`.
    pub(crate) binary_scale_factor: i32,
    /// `D`.
    pub(crate) decimal_scale_factor: i32,
}

/// The scaling ecCodes chooses for `values` at `wanted` bits (its default, "ECMWF style":
/// no decimal scaling, `R` the minimum, `E` so that the range takes `wanted` bits; ecCodes
/// packs at most 23 bits this way).
pub(crate) fn scaling(values: &[f64], wanted: u32) -> Result<Scaling> {
    let wanted = i32::try_from(wanted.min(23)).unwrap_or(23);
    let (min, max) = super::simple::range(values)?;
    let range = max - min;
    let mut e = 0;
    if range != 0.0 {
        e = exponent(range) - wanted;
        let scaled = ((max - min) * 2f64.powi(-e) + 0.5).floor();
        if exponent(scaled) != wanted {
            e += 1;
        }
    }
    Ok(Scaling {
        reference: min,
        binary_scale_factor: e,
        decimal_scale_factor: 0,
    })
}

/// The scaling of a field that was complex-packed with `kept` (its scale factors): the
/// minimum, scaled, as the reference, as ecCodes takes it.
pub(crate) fn kept_scaling(values: &[f64], kept: &crate::field::Simple) -> Result<Scaling> {
    let (min, _) = super::simple::range(values)?;
    let d = kept.decimal_scale_factor;
    Ok(Scaling {
        reference: if d == 0 {
            min
        } else {
            min * super::simple::power(i64::from(d), 10.0)
        },
        binary_scale_factor: kept.binary_scale_factor,
        decimal_scale_factor: d,
    })
}

/// C's `frexp` exponent: `x = f · 2^e` with `0.5 ≤ |f| < 1` (0 for 0).
fn exponent(x: f64) -> i32 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let bits = x.abs().to_bits();
    let biased = i32::try_from((bits >> 52) & 0x7ff).unwrap_or(0);
    if biased == 0 {
        // Subnormal: scale into the normal range first.
        return exponent(x * 2f64.powi(64)) - 64;
    }
    biased - 1022
}

/// Bits needed for `i` (ecCodes' `find_nbits`).
fn nbits(i: i64) -> i64 {
    64 - i64::from(u64::try_from(i).unwrap_or(0).leading_zeros())
}

/// `x` as the IEEE single ecCodes stores it (`grib_ieee_to_long`): the mantissa rounded half
/// up, magnitudes below the smallest normal single to a signed zero.
pub(crate) fn eccodes_single(x: f64) -> Result<f32> {
    let negative = x < 0.0;
    let a = x.abs();
    if a < f64::from(f32::MIN_POSITIVE) {
        return Ok(if negative { -0.0 } else { 0.0 });
    }
    if !a.is_finite() || a > f64::from(f32::MAX) {
        return Err(Error::Write {
            what: format!("{x} cannot be a GRIB 2 reference value (an IEEE single)"),
        });
    }
    let mut e = exponent(a) - 24;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a mantissa of 24 bits, positive"
    )]
    let mut m = (a * 2f64.powi(-e) + 0.5).floor() as u32;
    if m > 0xff_ffff {
        e += 1;
        m = 0x80_0000;
    }
    let biased = u32::try_from(e + 24 - 1 + 127).map_err(|_| Error::Write {
        what: format!("{x} cannot be a GRIB 2 reference value (an IEEE single)"),
    })?;
    Ok(f32::from_bits(
        (u32::from(negative) << 31) | (biased << 23) | (m & 0x7f_ffff),
    ))
}

/// A run of consecutive integers, one group to be.
#[derive(Clone, Copy, Debug)]
struct Run {
    mn: i64,
    mx: i64,
    missing: bool,
    i0: usize,
    i1: usize,
    head: Option<usize>,
    tail: Option<usize>,
}

/// Missing integers (none here: missing points go in the bitmap, so `has_undef` is 0).
const UNDEF: i64 = i64::MAX;

fn size_of(s: &Run, ref_bits: i64, width_bits: i64, undef: i64) -> i64 {
    if s.mn == UNDEF {
        return ref_bits + width_bits;
    }
    let n = (s.i1 - s.i0 + 1) as i64;
    if s.mn == s.mx {
        return if s.missing {
            n * undef + ref_bits + width_bits
        } else {
            ref_bits + width_bits
        };
    }
    nbits(s.mx - s.mn + undef) * n + ref_bits + width_bits
}

#[allow(clippy::too_many_arguments, reason = "ecCodes' sizeofsection2")]
fn size_of_merged(
    mn: i64,
    mx: i64,
    n: i64,
    ref_bits: i64,
    width_bits: i64,
    missing: bool,
    undef: i64,
) -> i64 {
    if mn == UNDEF {
        return ref_bits + width_bits;
    }
    if mn == mx {
        return if missing {
            n * undef + ref_bits + width_bits
        } else {
            ref_bits + width_bits
        };
    }
    nbits(mx - mn + undef) * n + ref_bits + width_bits
}

/// The runs from the first, linked by `tail`, and their size in bytes.
fn size_all(runs: &[Run], ref_bits: i64, width_bits: i64, undef: i64) -> i64 {
    let mut bits = 0;
    let mut at = Some(0);
    while let Some(i) = at {
        bits += size_of(&runs[i], ref_bits, width_bits, undef);
        at = runs[i].tail;
    }
    (bits + 7) / 8
}

/// The smallest or largest of `v[i0..=i1]` that is not missing (`UNDEF` when all are).
fn extreme(v: &[i64], i0: usize, i1: usize, largest: bool) -> i64 {
    let mut k = UNDEF;
    let mut first = true;
    for &x in &v[i0..=i1] {
        if x != UNDEF {
            if first {
                k = x;
                first = false;
            } else if largest {
                k = k.max(x);
            } else {
                k = k.min(x);
            }
        }
    }
    k
}

fn move_one_left(runs: &mut [Run], s: usize, v: &[i64]) {
    let t = runs[s].tail.unwrap_or(s);
    runs[s].i1 += 1;
    runs[t].i0 += 1;
    let val = v[runs[s].i1];
    joined(&mut runs[s], val);
    if runs[t].i0 > runs[t].i1 {
        runs[s].tail = runs[t].tail;
        if let Some(n) = runs[s].tail {
            runs[n].head = Some(s);
        }
        return;
    }
    left(&mut runs[t], val, v);
}

/// A run's statistics with `val` joined to it.
fn joined(r: &mut Run, val: i64) {
    if val == UNDEF {
        r.missing = true;
    } else {
        r.mx = r.mx.max(val);
        r.mn = r.mn.min(val);
    }
}

/// A run's statistics once `val` has left it (counted again only where `val` was an extreme).
fn left(r: &mut Run, val: i64, v: &[i64]) {
    let (i0, i1) = (r.i0, r.i1);
    if val == UNDEF {
        if !v[i0..=i1].contains(&UNDEF) {
            r.missing = false;
        }
    } else if val == r.mx {
        r.mx = extreme(v, i0, i1, true);
    } else if val == r.mn {
        r.mn = extreme(v, i0, i1, false);
    }
}

fn move_one_right(runs: &mut [Run], s: usize, v: &[i64]) {
    let t = runs[s].tail.unwrap_or(s);
    runs[s].i1 = runs[s].i1.wrapping_sub(1);
    runs[t].i0 -= 1;
    let val = v[runs[t].i0];
    joined(&mut runs[t], val);
    if runs[s].i1 == usize::MAX || runs[s].i0 > runs[s].i1 {
        // `s` is empty: it becomes `t`, its statistics counted again — the minimum as
        // ecCodes counts it, which takes the maximum where a value is not below it.
        runs[s].i0 = runs[t].i0;
        runs[s].i1 = runs[t].i1;
        runs[s].tail = runs[t].tail;
        runs[s].mx = UNDEF;
        runs[s].mn = UNDEF;
        runs[s].missing = false;
        let mut first = true;
        for &x in &v[runs[s].i0..=runs[s].i1] {
            if x == UNDEF {
                runs[s].missing = true;
            } else if first {
                runs[s].mx = x;
                runs[s].mn = x;
                first = false;
            } else {
                runs[s].mx = runs[s].mx.max(x);
                runs[s].mn = if runs[s].mn < x { runs[s].mx } else { x };
            }
        }
        return;
    }
    left(&mut runs[s], val, v);
}

/// The bits of a run's values: none when all are missing, one when constant with some
/// missing.
fn run_bits(s: &Run, undef: i64) -> i64 {
    if s.mn == UNDEF {
        0
    } else if s.mn == s.mx {
        i64::from(s.missing)
    } else {
        nbits(s.mx - s.mn + undef)
    }
}

fn exchange(runs: &mut [Run], v: &[i64], undef: i64, len_max: usize) {
    let mut s = 0;
    while let Some(t) = runs[s].tail {
        let (bs, bt) = (run_bits(&runs[s], undef), run_bits(&runs[t], undef));
        if bs == bt {
            s = t;
            continue;
        }
        let (val0, val1) = (v[runs[s].i1], v[runs[t].i0]);
        if runs[s].missing || runs[t].missing {
            s = t;
            continue;
        }
        if bs < bt && val1 == UNDEF {
            if runs[s].i1 - runs[s].i0 < len_max && runs[s].mx != runs[s].mn {
                move_one_left(runs, s, v);
            } else {
                s = t;
            }
            continue;
        }
        if bs > bt && val0 == UNDEF {
            if runs[t].i1 - runs[t].i0 < len_max && runs[t].mn != runs[t].mx {
                move_one_right(runs, s, v);
            } else {
                s = t;
            }
            continue;
        }
        if bs < bt && runs[s].i1 - runs[s].i0 < len_max && val1 >= runs[s].mn && val1 <= runs[s].mx
        {
            move_one_left(runs, s, v);
        } else if bs > bt
            && runs[t].i1 - runs[t].i0 < len_max
            && val0 >= runs[t].mn
            && val0 <= runs[t].mx
        {
            move_one_right(runs, s, v);
        } else {
            s = t;
        }
    }
}

/// The range of two runs merged.
fn merged_range(a: &Run, b: &Run) -> (i64, i64) {
    if b.mn == UNDEF {
        (a.mn, a.mx)
    } else if a.mn == UNDEF {
        (b.mn, b.mx)
    } else {
        (a.mn.min(b.mn), a.mx.max(b.mx))
    }
}

/// What [`merge`] weighs a merge of two runs with.
struct Sizes {
    ref_bits: i64,
    width_bits: i64,
    undef: i64,
    param: i64,
    len_max: usize,
}

impl Sizes {
    /// The bits saved by merging run `a` with the run after it, `b`, and the merged range,
    /// when the two fit one group (not too long, a range within `param`); −1 otherwise.
    /// `size_a` and `size_b` keep each run's size once counted (0: not yet).
    fn saving(
        &self,
        runs: &[Run],
        a: usize,
        b: usize,
        size_a: &mut i64,
        size_b: &mut i64,
    ) -> (i64, i64, i64) {
        if runs[b].i1 - runs[a].i0 >= self.len_max {
            return (-1, 0, 0);
        }
        let (min, max) = merged_range(&runs[a], &runs[b]);
        if max - min > self.param {
            return (-1, min, max);
        }
        let (refs, widths, undef) = (self.ref_bits, self.width_bits, self.undef);
        if *size_a == 0 {
            *size_a = size_of(&runs[a], refs, widths, undef);
        }
        if *size_b == 0 {
            *size_b = size_of(&runs[b], refs, widths, undef);
        }
        let merged = size_of_merged(
            min,
            max,
            (runs[b].i1 - runs[a].i0 + 1) as i64,
            refs,
            widths,
            runs[a].missing || runs[b].missing,
            undef,
        );
        (*size_a + *size_b - merged, min, max)
    }
}

fn merge(runs: &mut [Run], ref_bits: i64, width_bits: i64, undef: i64, param: i64, len_max: usize) {
    let (mut size_h, mut size_m, mut size_t) = (0i64, 0i64, 0i64);
    let mut h = 0usize;
    while let Some(m) = runs[h].tail {
        let t = runs[m].tail;
        let sizes = Sizes {
            ref_bits,
            width_bits,
            undef,
            param,
            len_max,
        };
        let (saving_hm, min0, max0) = sizes.saving(runs, h, m, &mut size_h, &mut size_m);
        let (saving_mt, min1, max1) = match t {
            Some(t) => sizes.saving(runs, m, t, &mut size_m, &mut size_t),
            None => (-1, 0, 0),
        };
        if saving_hm >= saving_mt && saving_hm >= 0 {
            absorb(runs, h, m, (min0, max0));
            if let Some(p) = runs[h].head {
                h = p;
            }
            (size_h, size_m, size_t) = (0, 0, 0);
        } else if saving_mt >= saving_hm && saving_mt >= 0 {
            absorb(runs, m, t.unwrap_or(m), (min1, max1));
            (size_h, size_m, size_t) = (0, 0, 0);
        } else {
            h = m;
            size_h = size_m;
            size_m = size_t;
            size_t = 0;
        }
    }
}

/// Run `a` takes in the run after it, `b`, whose values span `range` with its own.
fn absorb(runs: &mut [Run], a: usize, b: usize, range: (i64, i64)) {
    runs[a].i1 = runs[b].i1;
    runs[a].tail = runs[b].tail;
    (runs[a].mn, runs[a].mx) = range;
    runs[a].missing = runs[a].missing || runs[b].missing;
    if let Some(n) = runs[a].tail {
        runs[n].head = Some(a);
    }
}

/// A writer of bits, most significant first, as ecCodes' `add_bitstream`.
struct Bits {
    out: Vec<u8>,
    reg: u64,
    held: u32,
}

impl Bits {
    fn add(&mut self, value: i64, n: u32) {
        if n == 0 {
            return;
        }
        #[allow(
            clippy::cast_sign_loss,
            reason = "the low n bits, as C's mask takes them"
        )]
        let v = (value as u64) & ((1u64 << n) - 1);
        self.reg = (self.reg << n) | v;
        self.held += n;
        while self.held >= 8 {
            self.held -= 8;
            #[allow(clippy::cast_possible_truncation, reason = "one byte")]
            self.out.push((self.reg >> self.held) as u8);
        }
        self.reg &= (1u64 << self.held) - 1;
    }

    fn finish(&mut self) {
        if self.held > 0 {
            #[allow(clippy::cast_possible_truncation, reason = "one byte")]
            self.out.push((self.reg << (8 - self.held)) as u8);
            self.held = 0;
            self.reg = 0;
        }
    }
}

/// Sections 5 and 7 of `values` (the points present) complex-packed with `scaling`, with
/// spatial differencing of `order` (0: template 5.2; 1 or 2: 5.3), as ecCodes packs them.
/// `secondary` is the secondary missing value substitute section 5 keeps.
#[allow(
    clippy::similar_names,
    clippy::many_single_char_names,
    clippy::too_many_lines,
    reason = "ecCodes' names and steps, so that the two read side by side"
)]
pub(crate) fn pack(
    values: &[f64],
    scaling: &Scaling,
    order: u8,
    secondary: [u8; 4],
) -> Result<(Vec<u8>, Vec<u8>)> {
    let n = values.len();
    let decimal = super::simple::power(i64::from(scaling.decimal_scale_factor), 10.0);
    let scale = 2f64.powi(-scaling.binary_scale_factor);
    let mut v: Vec<i64> = Vec::with_capacity(n);
    for &x in values {
        let x = if scaling.decimal_scale_factor == 0 {
            x
        } else {
            x * decimal
        };
        let q = ((x - scaling.reference) * scale + 0.5).floor();
        if !q.is_finite() || q >= f64::from(1u32 << 31) {
            return Err(Error::Write {
                what: format!(
                    "{x} does not fit complex packing with reference {} and binary scale {}",
                    scaling.reference, scaling.binary_scale_factor
                ),
            });
        }
        #[allow(clippy::cast_possible_truncation, reason = "checked to fit an int")]
        v.push((q as i64).max(0));
    }
    let (mut vmn, mut vmx) = (0i64, 0i64);
    let (mut extra0, mut extra1) = (0i64, 0i64);
    match order {
        2 if n >= 1 => {
            extra0 = v[0];
            v[0] = 0;
            let mut penultimate = extra0;
            if n >= 2 {
                extra1 = v[1];
                v[1] = 0;
                let mut last = extra1;
                for x in &mut v[2..] {
                    let here = *x;
                    *x = here - 2 * last + penultimate;
                    penultimate = last;
                    last = here;
                    vmn = vmn.min(*x);
                    vmx = vmx.max(*x);
                }
            }
        }
        1 if n >= 1 => {
            extra0 = v[0];
            v[0] = 0;
            let mut last = extra0;
            for x in &mut v[1..] {
                let here = *x;
                *x = here - last;
                last = here;
                vmn = vmn.min(*x);
                vmx = vmx.max(*x);
            }
        }
        _ => {
            if let (Some(&lo), Some(&hi)) = (v.iter().min(), v.iter().max()) {
                (vmn, vmx) = (lo, hi);
            }
        }
    }
    for x in &mut v {
        *x -= vmn;
    }
    vmx -= vmn;
    let undef = 0i64;
    let vbits = nbits(vmx + undef);
    let est_group_width = 6i64;
    let mut len_max = 127usize;
    let mut len_bits = 7i64;

    // Runs of equal values, each at most `len_max` long.
    let mut runs: Vec<Run> = Vec::new();
    for (i, &x) in v.iter().enumerate() {
        match runs.last_mut() {
            Some(r) if i - r.i0 < len_max && x == r.mn => r.i1 = i,
            _ => runs.push(Run {
                mn: x,
                mx: x,
                missing: false,
                i0: i,
                i1: i,
                head: None,
                tail: None,
            }),
        }
    }
    let count = runs.len();
    for i in 1..count {
        runs[i].head = Some(i - 1);
        runs[i - 1].tail = Some(i);
    }
    if runs.is_empty() {
        return Err(Error::Write {
            what: "complex packing of a field with no values".into(),
        });
    }
    let mut k = 1i64;
    while k < vmx / 2 {
        merge(
            &mut runs,
            vbits,
            len_bits + est_group_width,
            undef,
            k,
            len_max,
        );
        k = 2 * k + 1 + undef;
    }
    let mut j = size_all(&runs, vbits, len_bits + est_group_width, undef);
    let mut j0 = j + 1;
    while j < j0 && len_bits < 25 {
        j0 = j;
        len_bits += 1;
        len_max = 2 * len_max + 1;
        let backup = runs.clone();
        merge(
            &mut runs,
            vbits,
            len_bits + est_group_width,
            undef,
            k,
            len_max,
        );
        j = size_all(&runs, vbits, len_bits + est_group_width, undef);
        if j > j0 {
            runs = backup;
            len_bits -= 1;
            len_max = (len_max - 1) / 2;
        }
    }
    exchange(&mut runs, &v, undef, len_max);
    merge(
        &mut runs,
        vbits,
        len_bits + est_group_width,
        undef,
        vmx,
        len_max,
    );

    let mut octets = 0i64;
    if order > 0 {
        let mut k = if vmn >= 0 {
            nbits(vmn) + 1
        } else {
            nbits(-vmn) + 1
        };
        k = k.max(nbits(extra0) + 1);
        if order == 2 {
            k = k.max(nbits(extra1) + 1);
        }
        octets = (k + 7) / 8;
    }

    let mut groups: Vec<Run> = Vec::new();
    let mut at = Some(0);
    while let Some(i) = at {
        groups.push(runs[i]);
        at = runs[i].tail;
    }
    let lens: Vec<i64> = groups.iter().map(|g| (g.i1 - g.i0 + 1) as i64).collect();
    let widths: Vec<i64> = groups
        .iter()
        .map(|g| {
            if g.mn == UNDEF {
                0
            } else if g.mn == g.mx {
                i64::from(g.missing)
            } else {
                nbits(g.mx - g.mn + undef)
            }
        })
        .collect();
    let ngroups = groups.len();
    let len_last = lens[ngroups - 1];
    let (glenmn, glenmx) = (
        *lens.iter().min().unwrap_or(&0),
        *lens.iter().max().unwrap_or(&0),
    );
    let (gwidmn, gwidmx) = (
        *widths.iter().min().unwrap_or(&0),
        *widths.iter().max().unwrap_or(&0),
    );
    let grefmx = groups
        .iter()
        .filter(|g| g.mn != UNDEF)
        .map(|g| g.mn)
        .max()
        .unwrap_or(0)
        .max(0);
    let bits_per_value = nbits(grefmx + undef);
    let width_bits = nbits(gwidmx - gwidmn + undef);
    let length_bits = nbits(glenmx - glenmn);

    let too_big = |what: &str| Error::Write {
        what: format!("complex packing: {what} does not fit its octets"),
    };
    let mut body = Vec::with_capacity(44);
    body.extend_from_slice(
        &u32::try_from(n)
            .map_err(|_| too_big("the number of values"))?
            .to_be_bytes(),
    );
    body.extend_from_slice(&(if order == 0 { 2u16 } else { 3u16 }).to_be_bytes());
    body.extend_from_slice(&eccodes_single(scaling.reference)?.to_be_bytes());
    body.extend_from_slice(&super::sections::signed16(scaling.binary_scale_factor)?);
    body.extend_from_slice(&super::sections::signed16(scaling.decimal_scale_factor)?);
    body.push(u8::try_from(bits_per_value).map_err(|_| too_big("bits per value"))?);
    body.push(0); // typeOfOriginalFieldValues: floats
    body.push(1); // groupSplittingMethodUsed
    body.push(0); // missingValueManagementUsed: the bitmap holds them
    #[allow(clippy::cast_possible_truncation, reason = "9.999e20 as C's float")]
    body.extend_from_slice(&eccodes_single(f64::from(9.999e20_f64 as f32))?.to_be_bytes());
    body.extend_from_slice(&secondary);
    body.extend_from_slice(
        &u32::try_from(ngroups)
            .map_err(|_| too_big("the number of groups"))?
            .to_be_bytes(),
    );
    body.push(u8::try_from(gwidmn).map_err(|_| too_big("the group width reference"))?);
    body.push(u8::try_from(width_bits).map_err(|_| too_big("the group width bits"))?);
    body.extend_from_slice(
        &u32::try_from(glenmn)
            .map_err(|_| too_big("the group length reference"))?
            .to_be_bytes(),
    );
    body.push(1); // lengthIncrementForTheGroupLengths
    body.extend_from_slice(
        &u32::try_from(len_last)
            .map_err(|_| too_big("the last group's length"))?
            .to_be_bytes(),
    );
    body.push(u8::try_from(length_bits).map_err(|_| too_big("the group length bits"))?);
    if order > 0 {
        body.push(order);
        body.push(u8::try_from(octets).map_err(|_| too_big("the extra descriptors"))?);
    }

    let mut bits = Bits {
        out: Vec::new(),
        reg: 0,
        held: 0,
    };
    let too_wide = |b: i64| -> Result<u32> {
        u32::try_from(b)
            .ok()
            .filter(|&b| b <= 32)
            .ok_or_else(|| Error::Write {
                what: format!("complex packing needs {b} bits where ecCodes packs at most 25"),
            })
    };
    if order > 0 {
        let wide = too_wide(8 * octets)?;
        bits.add(extra0, wide);
        if order == 2 {
            bits.add(extra1, wide);
        }
        let m = if vmn < 0 {
            -vmn | (1 << (8 * octets - 1))
        } else {
            vmn
        };
        bits.add(m, wide);
        bits.finish();
    }
    let b = too_wide(bits_per_value)?;
    for g in &groups {
        bits.add(if g.mn == UNDEF { -1 } else { g.mn }, b);
    }
    bits.finish();
    let b = too_wide(width_bits)?;
    for w in &widths {
        bits.add(w - gwidmn, b);
    }
    bits.finish();
    let b = too_wide(length_bits)?;
    for l in &lens {
        bits.add(l - glenmn, b);
    }
    bits.finish();
    for (g, &w) in groups.iter().zip(&widths) {
        if w > 0 {
            let b = too_wide(w)?;
            for &x in &v[g.i0..=g.i1] {
                bits.add(if x == UNDEF { -1 } else { x - g.mn }, b);
            }
        }
    }
    bits.finish();
    Ok((section(5, &body), section(7, &bits.out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singles_round_half_up_and_small_values_underflow_to_zero() {
        assert_eq!(eccodes_single(1.0).unwrap(), 1.0);
        assert_eq!(eccodes_single(-280.5).unwrap(), -280.5);
        assert_eq!(eccodes_single(1e-40).unwrap().to_bits(), 0);
        assert_eq!(eccodes_single(-1e-40).unwrap().to_bits(), 0x8000_0000);
        // Halfway between two singles: up, where `as f32` rounds to even.
        let below = f64::from(1.0f32);
        let above = f64::from(1.0f32.next_up());
        assert_eq!(
            f64::from(eccodes_single(f64::midpoint(below, above)).unwrap()),
            above
        );
        assert!(eccodes_single(1e300).is_err());
    }

    #[test]
    fn frexp_exponents() {
        assert_eq!(exponent(1.0), 1);
        assert_eq!(exponent(0.5), 0);
        assert_eq!(exponent(4095.0), 12);
        assert_eq!(exponent(4096.0), 13);
        assert_eq!(exponent(0.0), 0);
    }
}
