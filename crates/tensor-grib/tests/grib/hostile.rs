//! Cut and damaged copies of the fixtures: an error or a result, never a panic, and never
//! more memory than the limits allow.

use crate::eccodes::files;
use libtest_mimic::Trial;
use tensor_core::Limits;
use tensor_grib::Grib;

fn read_all(bytes: &[u8]) {
    let limits = Limits::default().with_max_total_bytes(64 << 20);
    if let Ok(g) = Grib::open(bytes, &limits) {
        for i in 0..g.fields().len() {
            let _ = g.values(i, &limits);
            let _ = g.fields()[i].present(bytes);
        }
    }
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut out = Vec::new();
    for path in files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let p = path.clone();
        out.push(Trial::test(
            format!("hostile::{name}::every_cut_is_refused"),
            move || {
                let bytes = std::fs::read(&p)?;
                for cut in 0..bytes.len() {
                    if let Ok(g) = Grib::open(&bytes[..cut], &Limits::default()) {
                        // Only a cut at a message boundary reads, and then as fewer fields.
                        assert!(
                            g.fields().len()
                                < Grib::open(&bytes, &Limits::default())?.fields().len()
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
