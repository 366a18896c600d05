//! What this build can encode and decode: every stage Tensogram defines, whether it was
//! compiled in (a cargo feature), what implements it, and whether through foreign code.

/// One stage of the pipeline, as `tensorkit doctor` lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Codec {
    /// Its name in a descriptor (`zstd`, `szip`, `simple_packing`...).
    pub name: &'static str,
    /// `encoding`, `filter`, `compression` or `mask` (the bitmask codecs of NaN/Inf masks).
    pub kind: &'static str,
    /// Whether this build has it (its cargo feature was on).
    pub built: bool,
    /// What implements it.
    pub backend: &'static str,
    /// Whether it runs foreign code (C or C++ through FFI) rather than Rust alone.
    pub ffi: bool,
}

const fn codec(
    name: &'static str,
    kind: &'static str,
    built: bool,
    backend: &'static str,
    ffi: bool,
) -> Codec {
    Codec {
        name,
        kind,
        built,
        backend,
        ffi,
    }
}

/// Every stage, in pipeline order, and the mask codecs.
#[must_use]
pub fn all() -> [Codec; 13] {
    [
        codec("simple_packing", "encoding", true, "tensor-pipeline", false),
        codec("shuffle", "filter", true, "tensor-pipeline", false),
        codec(
            "szip",
            "compression",
            true,
            "tensor-pipeline (libaec's bytes)",
            false,
        ),
        codec("zstd", "compression", true, "libzstd", true),
        codec(
            "lz4",
            "compression",
            cfg!(feature = "lz4"),
            "lz4_flex",
            false,
        ),
        codec(
            "blosc2",
            "compression",
            cfg!(feature = "blosc2"),
            "C-Blosc2",
            true,
        ),
        codec("zfp", "compression", cfg!(feature = "zfp"), "zfp", true),
        codec(
            "sz3",
            "compression",
            cfg!(feature = "sz3"),
            "SZ3 (in a child process)",
            true,
        ),
        codec("rle", "mask", true, "tensor-pipeline", false),
        codec(
            "roaring",
            "mask",
            cfg!(feature = "roaring"),
            "roaring",
            false,
        ),
        codec("zstd", "mask", true, "libzstd", true),
        codec("lz4", "mask", cfg!(feature = "lz4"), "lz4_flex", false),
        codec("blosc2", "mask", cfg!(feature = "blosc2"), "C-Blosc2", true),
    ]
}
