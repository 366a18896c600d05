//! Every writer on whatever a reader accepts (decode → encode → decode): the file written in
//! each format must read back with the same names (where kept), dtypes, shapes and values,
//! or the writer must refuse with an error — never a panic, in our code or a crate's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use tensor_core::Limits;
use tensorkit::formats;
use tensorkit::model::{FormatId, TensorSet};

fn values(set: &TensorSet<'_>) -> Vec<(String, String, Vec<u64>, Vec<u8>)> {
    set.names()
        .into_iter()
        .zip(&set.tensors)
        .filter_map(|(n, t)| {
            let l = t.load(&set.limits).ok()?;
            let v = l.view();
            Some((n, v.dtype().name().to_owned(), v.shape().to_vec(), v.to_canonical_le_bytes().into_owned()))
        })
        .collect()
}

fuzz_target!(|input: &[u8]| {
    let limits = Limits::strict().with_max_total_bytes(16 << 20);
    let path = Path::new("input");
    let Ok(set) = formats::read(path, input, &limits) else { return };
    if set.tensors.iter().any(|t| t.load(&limits).is_err()) {
        return;
    }
    let before = values(&set);
    let dir = std::env::temp_dir().join(format!("tensorkit-fuzz-writers-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    for format in FormatId::WRITABLE {
        let out = dir.join(format!("out.{}", format.extension()));
        if formats::write(format, &set, &out, &Default::default(), None, Default::default())
            .is_err()
        {
            continue;
        }
        let bytes = std::fs::read(&out).expect("the written file exists");
        let back = formats::read(&out, &bytes, &limits)
            .unwrap_or_else(|e| panic!("{}: our own output does not read: {e}", format.id()));
        let mut after = values(&back);
        assert_eq!(after.len(), before.len(), "{}: tensor count", format.id());
        // Formats keep their own order (safetensors and zTensor 2 sort): compare by name.
        let mut before = before.clone();
        before.sort_by(|a, b| a.0.cmp(&b.0));
        after.sort_by(|a, b| a.0.cmp(&b.0));
        for (a, b) in before.iter().zip(&after) {
            assert_eq!(a.0, b.0, "{}: names", format.id());
            assert_eq!((&a.2, &a.3), (&b.2, &b.3), "{}: tensor {:?} changed", format.id(), a.0);
        }
    }
});
