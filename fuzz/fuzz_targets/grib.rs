//! GRIB editions 1 and 2, every packing (simple, CCSDS, complex with and without spatial
//! differencing, second order, JPEG 2000, PNG, IEEE), with the default limits: a file opens
//! or is an error; every field's values decode or are an error, and the bitmap reads. Never
//! a panic, an abort, a hang or memory beyond what the file's data can back.
//!
//! Repacking (`tensor_grib::write::repack`, a packing chosen from the input's first byte)
//! writes a file that opens with as many fields, or is an error; so does writing each field
//! again from its sections (`write::field`), with its values as they are or changed.
//!
//! A remote reader's walk through the messages' headers (`GribFormat::header_ranges`) ends,
//! and what it gathers lists a file that opens exactly as the whole file does; an inventory
//! (`sidecar::message_offsets`) of any bytes is offsets or nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::ops::Range;
use tensor_core::{Held, Limits};
use tensor_dtype::Format;
use tensor_grib::{Grib, GribFormat};

/// The input with only the bytes fetched so far held.
struct Partial<'a> {
    bytes: &'a [u8],
    held: Vec<bool>,
}

impl Partial<'_> {
    fn fetch(&mut self, r: &Range<u64>) {
        let end = (r.end as usize).min(self.bytes.len());
        for b in &mut self.held[(r.start as usize).min(end)..end] {
            *b = true;
        }
    }
}

impl Held for Partial<'_> {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn slice(&self, r: Range<u64>) -> Option<&[u8]> {
        let r = r.start as usize..(r.end as usize).min(self.bytes.len());
        self.missing(r.start as u64..r.end as u64)
            .is_none()
            .then(|| &self.bytes[r])
    }
    fn missing(&self, r: Range<u64>) -> Option<Range<u64>> {
        let r = (r.start as usize).min(self.bytes.len())..(r.end as usize).min(self.bytes.len());
        let first = r.clone().find(|&b| !self.held[b])?;
        let last = r.rev().find(|&b| !self.held[b])?;
        Some(first as u64..last as u64 + 1)
    }
}

fuzz_target!(|input: &[u8]| {
    let limits = Limits::default();
    let _ = tensor_grib::sidecar::message_offsets(input);
    let whole = Grib::open_with(input, &limits.into());
    if input.len() <= 1 << 16 {
        let mut partial = Partial {
            bytes: input,
            held: vec![false; input.len()],
        };
        let mut rounds = 0;
        loop {
            let Ok(want) = GribFormat::header_ranges(&partial, &limits) else {
                break;
            };
            if want.is_empty() {
                break;
            }
            rounds += 1;
            assert!(rounds <= input.len() + 1, "the header walk does not end");
            for r in &want {
                partial.fetch(r);
            }
        }
        if let Ok(whole) = &whole {
            let image: Vec<u8> = input
                .iter()
                .zip(&partial.held)
                .map(|(&b, &held)| if held { b } else { 0 })
                .collect();
            let listed = Grib::open_with(&image, &limits.into()).expect("the headers list");
            assert_eq!(
                format!("{:?}", whole.fields()),
                format!("{:?}", listed.fields())
            );
        }
    }
    let Ok(g) = whole else {
        return;
    };
    for (i, f) in g.fields().iter().enumerate() {
        if let Ok(values) = g.values(i, &limits) {
            assert_eq!(values.len() as u64, f.points);
        }
        if let Some(present) = f.present(input) {
            assert_eq!(present.len() as u64, f.points);
        }
    }
    use tensor_grib::write::{Repacking, repack};
    let choice = input.first().copied().unwrap_or(0);
    let how = match choice % 6 {
        0 => Repacking::Simple { bits: None },
        5 => Repacking::Png {
            bits: Some(8 * (u32::from(choice / 6 % 4) + 1)),
        },
        4 => Repacking::Complex {
            bits: Some(u32::from(choice / 5 % 23) + 1),
            order: choice / 5 % 3,
        },
        1 => Repacking::Simple {
            bits: Some(u32::from(choice / 4 % 63) + 1),
        },
        2 => Repacking::Ccsds {
            bits: Some(u32::from(choice / 4 % 32) + 1),
        },
        _ => Repacking::Ieee {
            bits: if choice & 4 == 0 { 32 } else { 64 },
        },
    };
    if let Ok(out) = repack(input, how, &limits) {
        let again = Grib::open_with(&out, &limits.into()).expect("what repack wrote opens");
        assert_eq!(again.fields().len(), g.fields().len());
    }
    // Each GRIB 2 field written again from its sections, its values as they are or changed
    // (some missing, some scaled): a message of one field with as many points, or an error.
    for (i, f) in g.fields().iter().enumerate() {
        let (Some((discipline, sections)), Ok(mut values)) = (f.sections(input), g.values(i, &limits))
        else {
            continue;
        };
        for (j, v) in values.iter_mut().enumerate() {
            match (usize::from(choice) + j) % 7 {
                0 if choice & 1 == 1 => *v = f64::NAN,
                1 if choice & 2 == 2 => *v *= 1e6,
                _ => {}
            }
        }
        for how in [None, Some(how)] {
            if let Ok(w) = tensor_grib::write::field(discipline, &sections, &values, how, &limits) {
                let again = Grib::open_with(&w.message, &limits.into()).expect("the field opens");
                assert_eq!(again.fields().len(), 1);
                assert_eq!(again.fields()[0].points, f.points);
            }
        }
    }
});
