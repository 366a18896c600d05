//! NetCDF-3 (CDF-1, CDF-2, CDF-5) with the default limits: a file opens or is an error; the
//! header a remote reader would fetch needs nothing more; every variable's view builds and
//! copies out; the file written again from what was read reads back with the same
//! definition and values, and writes the same bytes again. Never a panic, an abort, a hang
//! or memory beyond what the file's bytes can back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::{Limits, ReadOptions};
use tensor_dtype::{Format, TensorContainer};
use tensor_netcdf::classic::{self, Classic};
use tensor_netcdf::NetcdfFormat;

/// `file` written again in its own version.
fn rewrite(file: &Classic<'_>) -> Option<Vec<u8>> {
    let mut out = std::io::Cursor::new(Vec::new());
    classic::write::write(&mut out, file.definition(), Some(file.version()), &mut |i, sink| {
        let view = file.view(i)?.expect("a classic variable is a view");
        let mut be = view.to_le_bytes().into_owned();
        tensor_core::byte_order::swap_in_place(&mut be, view.dtype().byte_width().max(1))?;
        sink.write_all(&be)
            .map_err(|e| tensor_core::Error::io("fuzz", e).into())
    })
    .ok()?;
    Some(out.into_inner())
}

fuzz_target!(|input: &[u8]| {
    let options = ReadOptions::default().limits(Limits::default());
    let whole = tensor_core::held::Whole(input);
    let Ok(file) = Classic::open_with(input, &options) else {
        let _ = NetcdfFormat::header_ranges(&whole, &options.limits);
        return;
    };
    assert!(NetcdfFormat::header_ranges(&whole, &options.limits).is_ok_and(|r| r.is_empty()));
    for i in 0..file.len() {
        let view = file.view(i).expect("an opened variable's view builds").expect("a view");
        // Bounded: a view's elements lie in the file's bytes (a record variable's records
        // may repeat at a stride of 0 bytes only with no bytes each).
        if view.byte_len() <= 1 << 24 {
            let mut out = vec![0u8; view.byte_len() as usize];
            file.read_into(i, &mut out).expect("a view copies out");
        }
    }
    if file.definition().variables.iter().enumerate().all(|(i, _)| {
        file.view(i).ok().flatten().is_some_and(|v| v.byte_len() <= 1 << 24)
    }) && let Some(bytes) = rewrite(&file)
    {
        let back = Classic::open(&bytes).expect("what we write reads back");
        assert_eq!(
            format!("{:?}", back.definition()),
            format!("{:?}", file.definition())
        );
        for i in 0..file.len() {
            assert_eq!(
                back.view(i).unwrap().unwrap().to_le_bytes(),
                file.view(i).unwrap().unwrap().to_le_bytes()
            );
        }
        assert_eq!(rewrite(&back).as_deref(), Some(&bytes[..]), "written twice, the same bytes");
    }
});
