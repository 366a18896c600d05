//! Integration tests of tensor-core: every byte source agrees with every other on random
//! ranges, and checked ranges never admit a read past the end.

use proptest::prelude::*;
use std::io::Write;
use tensor_core::{ByteSource, FileSource, MmapSource, checked};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sources_agree_on_every_range(
        data in proptest::collection::vec(any::<u8>(), 0..512),
        ranges in proptest::collection::vec((0u64..600, 0u64..600), 1..16),
    ) {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(&data).unwrap();
        tmp.flush().unwrap();
        let mapped = MmapSource::open(tmp.path()).unwrap();
        let file = FileSource::open(tmp.path()).unwrap();
        let sources: [&dyn ByteSource; 3] = [&data, &mapped, &file];
        for (offset, len) in ranges {
            let fits = offset + len <= data.len() as u64;
            for s in sources {
                match s.bytes_at(offset, len, "range") {
                    Ok(b) => {
                        prop_assert!(fits);
                        prop_assert_eq!(&*b, &data[offset as usize..(offset + len) as usize]);
                    }
                    Err(_) => prop_assert!(!fits),
                }
            }
        }
    }

    #[test]
    fn checked_range_matches_plain_arithmetic(offset: u64, len: u64, total: u64) {
        let ok = offset.checked_add(len).is_some_and(|end| end <= total);
        prop_assert_eq!(checked::range(offset, len, total, "x").is_ok(), ok);
    }
}
