//! Cut and damaged copies of the fixtures: an error or a result, never a panic, and never
//! more memory than the limits allow.

use crate::eccodes::files;
use libtest_mimic::Trial;
use tensor_core::Limits;
use tensor_grib::Grib;

fn read_all(bytes: &[u8]) {
    let limits = Limits::default().with_max_total_bytes(64 << 20);
    if let Ok(g) = Grib::open_with(bytes, &limits.into()) {
        for i in 0..g.fields().len() {
            let _ = g.values(i, &limits);
            let _ = g.fields()[i].present(bytes);
        }
    }
}

/// The sections of the GRIB 2 message at the start of `msg`: (number, offset, length).
pub(crate) fn sections(msg: &[u8]) -> Vec<(u8, usize, usize)> {
    let total = u64::from_be_bytes(msg[8..16].try_into().unwrap()) as usize;
    let mut out = Vec::new();
    let mut at = 16;
    while at + 5 <= total && &msg[at..at + 4] != b"7777" {
        let len = u32::from_be_bytes(msg[at..at + 4].try_into().unwrap()) as usize;
        out.push((msg[at + 4], at, len));
        at += len;
    }
    out
}

/// The messages of a GRIB 2 file, as byte ranges.
pub(crate) fn messages(file: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 16 <= file.len() {
        let len = u64::from_be_bytes(file[at + 8..at + 16].try_into().unwrap()) as usize;
        out.push(at..at + len);
        at += len;
    }
    out
}

/// `simple.grib2`'s constant field (0 bits per value, no payload) patched to claim 2^27
/// points on a 16384 × 8192 grid: a message of under 200 bytes asking for 1 GiB of values is
/// refused as `limit_exceeded` before anything is decoded, even where the machine's memory
/// would allow it; the field as written still decodes.
fn a_constant_field_cannot_claim_gigabytes() -> Result<(), libtest_mimic::Failed> {
    use tensor_core::{ErrorKind, Kinded};
    let file = std::fs::read(tensor_testkit::testdata().join("grib/reference/simple.grib2"))?;
    let msg = messages(&file)
        .into_iter()
        .map(|r| file[r].to_vec())
        .find(|m| {
            sections(m)
                .iter()
                .any(|&(n, at, _)| n == 5 && m[at + 19] == 0)
        })
        .ok_or("simple.grib2 has no constant field")?;
    let limits = Limits::default().with_max_total_bytes(64 << 30);
    let g = Grib::open_with(&msg, &limits.into())?;
    let values = g.values(0, &limits)?;
    if values.windows(2).any(|w| w[0] != w[1]) {
        return Err("the constant field is not constant".into());
    }
    let mut patched = msg.clone();
    for (n, at, _) in sections(&msg) {
        match n {
            3 => {
                patched[at + 6..at + 10].copy_from_slice(&(1u32 << 27).to_be_bytes());
                patched[at + 30..at + 34].copy_from_slice(&(1u32 << 14).to_be_bytes());
                patched[at + 34..at + 38].copy_from_slice(&(1u32 << 13).to_be_bytes());
            }
            5 => patched[at + 5..at + 9].copy_from_slice(&(1u32 << 27).to_be_bytes()),
            _ => {}
        }
    }
    let g = Grib::open_with(&patched, &limits.into())?;
    if g.fields()[0].points != 1 << 27 {
        return Err(format!("the patch did not take: {} points", g.fields()[0].points).into());
    }
    let e = g.values(0, &limits).unwrap_err();
    if e.kind() != ErrorKind::LimitExceeded {
        return Err(format!("2^27 points from {} bytes: {e}", patched.len()).into());
    }
    Ok(())
}

/// `complex.grib2`'s first field (template 5.2 or 5.3) patched to claim 2^32 - 1 groups
/// whose references, widths and lengths take 0 bits each: a malformed error at once, not a
/// loop over four billion empty groups.
fn groups_beyond_the_values_are_refused_at_once() -> Result<(), libtest_mimic::Failed> {
    use tensor_core::{ErrorKind, Kinded};
    let file = std::fs::read(tensor_testkit::testdata().join("grib/reference/complex.grib2"))?;
    let range = messages(&file).into_iter().next().ok_or("no message")?;
    let mut msg = file[range].to_vec();
    let (_, at, _) = sections(&msg)
        .into_iter()
        .find(|&(n, _, _)| n == 5)
        .ok_or("no section 5")?;
    // Section 5's octets, numbered from 0: the template's fields at their octets - 1.
    let t = at;
    msg[t + 19] = 0; // bits per value
    msg[t + 31..t + 35].copy_from_slice(&u32::MAX.to_be_bytes());
    msg[t + 36] = 0; // bits per group width
    msg[t + 46] = 0; // bits per scaled group length
    let limits = Limits::default();
    let g = Grib::open_with(&msg, &limits.into())?;
    let e = g.values(0, &limits).unwrap_err();
    if e.kind() != ErrorKind::Malformed || !e.to_string().contains("groups") {
        return Err(format!("{e}").into());
    }
    Ok(())
}

/// Counts that disagree: a GRIB 2 `numberOfDataPoints` one more than Ni × Nj (it was read
/// as a vector of that length), and a GRIB 1 grid one column narrower than its data
/// section's values (the extra values were ignored): both malformed.
fn counts_that_disagree_are_refused() -> Result<(), libtest_mimic::Failed> {
    use tensor_core::{ErrorKind, Kinded};
    let limits = Limits::default();
    let kind = |bytes: &[u8]| match Grib::open_with(bytes, &limits.into()) {
        Err(e) => Some(e.kind()),
        Ok(g) => g.values(0, &limits).err().map(|e| e.kind()),
    };
    let file = std::fs::read(tensor_testkit::testdata().join("grib/reference/simple.grib2"))?;
    let mut msg = file[messages(&file).into_iter().next().ok_or("no message")?].to_vec();
    let (_, at, _) = sections(&msg)
        .into_iter()
        .find(|&(n, _, _)| n == 3)
        .ok_or("no 3")?;
    let points = u32::from_be_bytes(msg[at + 6..at + 10].try_into()?);
    msg[at + 6..at + 10].copy_from_slice(&(points + 1).to_be_bytes());
    if kind(&msg) != Some(ErrorKind::Malformed) {
        return Err("GRIB 2: numberOfDataPoints off by one was read".into());
    }
    let file = std::fs::read(tensor_testkit::testdata().join("grib/reference/grib1_simple.grib1"))?;
    let mut patched = 0;
    let mut at = 0;
    while at + 8 <= file.len() {
        let len = (usize::from(file[at + 4]) << 16)
            | (usize::from(file[at + 5]) << 8)
            | usize::from(file[at + 6]);
        let mut msg = file[at..at + len].to_vec();
        at += len;
        let pds_len =
            (usize::from(msg[8]) << 16) | (usize::from(msg[9]) << 8) | usize::from(msg[10]);
        let flags = msg[8 + 7];
        if flags & 0x80 == 0 || flags & 0x40 != 0 {
            continue; // no grid section, or a bitmap
        }
        let gds = 8 + pds_len;
        let ni = u16::from_be_bytes([msg[gds + 6], msg[gds + 7]]);
        msg[gds + 6..gds + 8].copy_from_slice(&(ni - 1).to_be_bytes());
        if kind(&msg) != Some(ErrorKind::Malformed) {
            return Err("GRIB 1: a data section holding more values than the grid was read".into());
        }
        patched += 1;
    }
    if patched == 0 {
        return Err("grib1_simple.grib1 has no message without a bitmap".into());
    }
    Ok(())
}

/// A GRIB 1 grid description whose type octet says another grid type (a regular lat/lon
/// grid's description called polar stereographic, Gaussian, Lambert or Mercator) is
/// refused, never read as that type.
fn a_grid_description_of_another_type_is_refused() -> Result<(), libtest_mimic::Failed> {
    use tensor_core::{ErrorKind, Kinded};
    let limits = Limits::default();
    let file = std::fs::read(tensor_testkit::testdata().join("grib/reference/grib1_simple.grib1"))?;
    let len = (usize::from(file[4]) << 16) | (usize::from(file[5]) << 8) | usize::from(file[6]);
    let msg = &file[..len];
    let pds_len = (usize::from(msg[8]) << 16) | (usize::from(msg[9]) << 8) | usize::from(msg[10]);
    let gds = 8 + pds_len;
    if msg[gds + 5] != 0 {
        return Err("grib1_simple.grib1's first grid is not regular_ll".into());
    }
    Grib::open_with(msg, &limits.into())?.values(0, &limits)?;
    for kind in [1u8, 3, 4, 5, 10, 14] {
        let mut m = msg.to_vec();
        m[gds + 5] = kind;
        let got = match Grib::open_with(&m, &limits.into()) {
            Err(e) => Some(e.kind()),
            Ok(g) => g.values(0, &limits).err().map(|e| e.kind()),
        };
        if !matches!(got, Some(ErrorKind::Malformed | ErrorKind::Truncated)) {
            return Err(format!("a regular_ll description called type {kind}: {got:?}").into());
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut out = vec![
        Trial::test(
            "hostile::a_grid_description_of_another_type_is_refused",
            a_grid_description_of_another_type_is_refused,
        ),
        Trial::test(
            "hostile::a_constant_field_cannot_claim_gigabytes",
            a_constant_field_cannot_claim_gigabytes,
        ),
        Trial::test(
            "hostile::groups_beyond_the_values_are_refused_at_once",
            groups_beyond_the_values_are_refused_at_once,
        ),
        Trial::test(
            "hostile::counts_that_disagree_are_refused",
            counts_that_disagree_are_refused,
        ),
    ];
    for path in files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let p = path.clone();
        out.push(Trial::test(
            format!("hostile::{name}::every_cut_is_refused"),
            move || {
                let bytes = std::fs::read(&p)?;
                for cut in 0..bytes.len() {
                    if let Ok(g) =
                        Grib::open_with(&bytes[..cut], &tensor_core::ReadOptions::default())
                    {
                        // Only a cut at a message boundary reads, and then as fewer fields.
                        assert!(
                            g.fields().len()
                                < Grib::open_with(&bytes, &tensor_core::ReadOptions::default())?
                                    .fields()
                                    .len()
                                || cut == 0
                        );
                    }
                }
                Ok(())
            },
        ));
        out.push(Trial::test(
            format!("hostile::{name}::damaged_bytes_never_panic"),
            move || {
                let bytes = std::fs::read(&path)?;
                let mut x = 0x9e37_79b9_u64;
                for _ in 0..400 {
                    let mut b = bytes.clone();
                    for _ in 0..3 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let at = (x as usize) % b.len();
                        b[at] = (x >> 32) as u8;
                    }
                    read_all(&b);
                }
                Ok(())
            },
        ));
    }
    out
}
