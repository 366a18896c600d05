//! GRIB 2 written from keys and values (`tensor_grib::write::sections_from_keys`, then
//! `write::field`): the input chooses the grid, its size and corners, the product (step
//! ranges, ensemble members, levels), the packing and its bits, text keys of any bytes, and
//! the values (any f64, NaN for missing points, ±Inf). Never a panic; a message written
//! opens as one field of as many points, or the writer says why not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensor_grib::{Grib, Key};
use tensor_grib::write::{Repacking, field, sections_from_keys};

fuzz_target!(|input: &[u8]| {
    if input.len() < 16 {
        return;
    }
    let (head, rest) = input.split_at(16);
    let grids = [
        "regular_ll",
        "rotated_ll",
        "regular_gg",
        "reduced_gg",
        "lambert",
        "polar_stereographic",
        "mercator",
        "unknown",
    ];
    let grid = grids[usize::from(head[0]) % grids.len()];
    let (ni, nj) = (i64::from(head[1] % 9), i64::from(head[2] % 9));
    let text_len = usize::from(head[3] % 8).min(rest.len());
    let text = String::from_utf8_lossy(&rest[..text_len]).into_owned();
    let values: Vec<f64> = rest[text_len..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()))
        .take(4096)
        .collect();
    let pl = (0..nj)
        .map(|i| (i64::from(head[4]) + i) % 7)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let keys = move |name: &str| -> Option<Key> {
        Some(match name {
            "gridType" => Key::Text(grid.into()),
            "Ni" | "Nx" => Key::Int(ni),
            "Nj" | "Ny" => Key::Int(nj),
            "N" => Key::Int(i64::from(head[5])),
            "pl" => Key::Text(pl.clone()),
            "shortName" => Key::Text(if head[6] & 1 == 0 { "2t".into() } else { text.clone() }),
            "discipline" => Key::Int(i64::from(head[6])),
            "parameterCategory" | "parameterNumber" => Key::Int(i64::from(head[7])),
            "dataDate" => Key::Int(19_000_000 + i64::from(u16::from_le_bytes([head[8], head[9]])) * 37),
            "dataTime" => Key::Int(i64::from(head[10]) * 13),
            "stepRange" => Key::Text(match head[11] % 4 {
                0 => "6".into(),
                1 => "0-12".into(),
                2 => text.clone(),
                _ => format!("{}-{}", head[12], head[13]),
            }),
            "typeOfStatisticalProcessing" if head[11] & 4 != 0 => Key::Int(i64::from(head[12] % 4)),
            "perturbationNumber" if head[11] & 8 != 0 => Key::Int(i64::from(head[13])),
            "typeOfLevel" => Key::Text(if head[14] & 1 == 0 { "isobaricInhPa".into() } else { text.clone() }),
            "level" => Key::Float(f64::from(head[14]) * 12.5),
            "centre" => Key::Int(i64::from(head[15])),
            "mars.class" if head[15] == 98 => Key::Text("od".into()),
            "mars.type" if head[15] == 98 => Key::Text("fc".into()),
            "mars.stream" if head[15] == 98 => Key::Text(text.clone()),
            k if k.ends_with("InDegrees") => Key::Float(f64::from(head[k.len() % 16]) - 90.0),
            k if k.ends_with("InMetres") => Key::Float(f64::from(head[k.len() % 16]) * 1000.0),
            _ => return None,
        })
    };
    let how = match head[4] % 7 {
        0 => None,
        1 => Some(Repacking::Simple { bits: Some(u32::from(head[5] % 63) + 1) }),
        2 => Some(Repacking::Ccsds { bits: Some(u32::from(head[5] % 32) + 1) }),
        3 => Some(Repacking::Complex { bits: Some(u32::from(head[5] % 23) + 1), order: head[5] % 3 }),
        4 => Some(Repacking::Png { bits: Some(8 * (u32::from(head[5] % 4) + 1)) }),
        5 => Some(Repacking::Ieee { bits: if head[5] & 1 == 0 { 32 } else { 64 } }),
        _ => Some(Repacking::Simple { bits: None }),
    };
    let limits = Limits::default();
    let Ok((discipline, sections, how)) = sections_from_keys(&keys, values.len(), how) else {
        return;
    };
    if let Ok(w) = field(discipline, &sections, &values, Some(how), &limits) {
        let back = Grib::open_with(&w.message, &limits.into()).expect("the message written opens");
        assert_eq!(back.fields().len(), 1);
        assert_eq!(back.fields()[0].points, values.len() as u64);
        let _ = back.values(0, &limits).expect("the message written decodes");
    }
});
