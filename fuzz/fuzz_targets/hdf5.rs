//! HDF5 (and NetCDF-4 over it) with the default limits: a file opens or is an error; every
//! object lists; every dataset of at most 4 MiB reads into a buffer of its size or is an
//! error; the NetCDF-4 reading of the same bytes lists its variables and decodes each.
//! Never a panic, an abort, a hang or memory beyond what the file's sizes can back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::{Limits, ReadOptions};
use tensor_dtype::TensorContainer;
use tensor_hdf5::{Hdf5, Kind};

fuzz_target!(|input: &[u8]| {
    if let Ok(file) = Hdf5::open(input, Limits::default())
        && let Ok(objects) = file.objects()
    {
        for o in &objects {
            if let Kind::Dataset(d) = &o.kind
                && let Ok(bytes) = d.byte_len()
                && bytes <= 4 << 20
            {
                let mut out = vec![0u8; bytes as usize];
                let _ = file.read(d, &mut out);
            }
        }
    }
    if let Ok(nc) = tensor_netcdf::Netcdf::open_with(input, &ReadOptions::default()) {
        for i in 0..nc.len() {
            let (Ok(dtype), Ok(shape)) = (nc.dtype(i), nc.shape(i)) else { continue };
            if let Ok(n) = tensor_dtype::shape::byte_len(dtype, shape)
                && n <= 4 << 20
            {
                let mut out = vec![0u8; n as usize];
                let _ = nc.read_into(i, &mut out);
            }
        }
    }
});
