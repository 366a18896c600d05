//! The CBOR object descriptor: arbitrary bytes decode to an error or a descriptor whose
//! canonical encoding decodes back to the same descriptor.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_descriptor::DataObjectDescriptor;

fuzz_target!(|input: &[u8]| {
    if let Ok((descriptor, _canonical)) = DataObjectDescriptor::decode(input) {
        let bytes = descriptor.encode();
        let (again, canonical) =
            DataObjectDescriptor::decode(&bytes).expect("our own encoding decodes");
        assert!(canonical, "our encoding is canonical");
        assert_eq!(again.encode(), bytes);
    }
});
