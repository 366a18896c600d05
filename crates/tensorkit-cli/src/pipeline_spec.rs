//! `--pipeline`: the encoding stages Tensogram output applies to each tensor, written as
//! comma-separated stages in pipeline order, e.g. `simple_packing:16,szip` or
//! `shuffle,zstd:3`.
//!
//! | stage | meaning |
//! |---|---|
//! | `none` | store as it is (the default) |
//! | `simple_packing:BITS` | quantise float32/float64 to BITS bits (lossy) |
//! | `shuffle` | byte shuffle, one lane per byte of an element (of a packed value) |
//! | `zstd[:LEVEL]`, `lz4` | lossless compression (zstd level 3 by default) |
//! | `szip[:RSI[:BLOCK]]` | CCSDS 121.0-B-3 (RSI 128, block 16 by default) |
//!
//! Stages that cannot apply to a tensor are skipped for it, and only for it: simple packing
//! for anything but floats, szip for samples wider than 32 bits.

use crate::error::{Error, Result};
use tensor_core::cbor::Value;
use tensor_dtype::Dtype;
use tensor_frame::descriptor::DataObjectDescriptor;

/// A parsed `--pipeline`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipelineSpec {
    packing_bits: Option<u64>,
    shuffle: bool,
    compression: Option<Codec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Codec {
    Zstd(i64),
    Lz4,
    Szip { rsi: u64, block: u64 },
}

fn bad(spec: &str, why: &str) -> Error {
    Error::UnknownTarget {
        what: format!("--pipeline {spec:?}: {why}"),
    }
}

impl PipelineSpec {
    /// Parses a specification.
    pub fn parse(spec: &str) -> Result<Self> {
        let mut p = PipelineSpec::default();
        let num = |s: Option<&str>, default: u64, what: &str| -> Result<u64> {
            s.map_or(Ok(default), |v| {
                v.parse()
                    .map_err(|_| bad(spec, &format!("{what} {v:?} is not a number")))
            })
        };
        for stage in spec.split(',').map(str::trim) {
            let mut parts = stage.split(':');
            let name = parts.next().unwrap_or_default();
            let (a, b) = (parts.next(), parts.next());
            if parts.next().is_some() {
                return Err(bad(
                    spec,
                    &format!("stage {stage:?} has too many parameters"),
                ));
            }
            let order_ok = match name {
                "none" => true,
                "simple_packing" | "sp" => {
                    !p.shuffle && p.compression.is_none() && p.packing_bits.is_none()
                }
                "shuffle" => !p.shuffle && p.compression.is_none(),
                _ => p.compression.is_none(),
            };
            if !order_ok {
                return Err(bad(
                    spec,
                    &format!(
                        "stage {stage:?} is out of order or repeated (encoding, then shuffle, then one compressor)"
                    ),
                ));
            }
            match name {
                "none" => {}
                "simple_packing" | "sp" => {
                    let bits = num(a, u64::MAX, "bits")?;
                    if bits == u64::MAX || bits > 64 {
                        return Err(bad(
                            spec,
                            "simple_packing needs a bit count from 0 to 64, e.g. simple_packing:16",
                        ));
                    }
                    p.packing_bits = Some(bits);
                }
                "shuffle" => p.shuffle = true,
                "zstd" => p.compression = Some(Codec::Zstd(num(a, 3, "level")? as i64)),
                "lz4" => p.compression = Some(Codec::Lz4),
                "szip" => {
                    p.compression = Some(Codec::Szip {
                        rsi: num(a, 128, "rsi")?,
                        block: num(b, 16, "block size")?,
                    });
                }
                other => {
                    return Err(bad(
                        spec,
                        &format!(
                            "unknown stage {other:?} (none, simple_packing:BITS, shuffle, zstd[:LEVEL], lz4, szip[:RSI[:BLOCK]])"
                        ),
                    ));
                }
            }
        }
        Ok(p)
    }

    /// Whether the pipeline can change values (simple packing).
    #[must_use]
    pub fn is_lossy(&self) -> bool {
        self.packing_bits.is_some()
    }

    /// Sets `d`'s pipeline for its dtype.
    pub fn apply(&self, d: &mut DataObjectDescriptor) {
        let packs = self
            .packing_bits
            .filter(|_| matches!(d.dtype, Dtype::Float32 | Dtype::Float64));
        let mut sample_bits = d.dtype.bit_width() as u64;
        if let Some(bits) = packs {
            d.encoding = "simple_packing".into();
            d.params
                .insert("sp_bits_per_value".into(), Value::from(bits));
            sample_bits = bits;
        }
        let lanes = match packs {
            Some(bits) => bits.div_ceil(8),
            None => d.dtype.byte_width() as u64,
        };
        if self.shuffle && lanes > 1 {
            d.filter = "shuffle".into();
            d.params
                .insert("shuffle_element_size".into(), Value::from(lanes));
            sample_bits = 8;
        }
        match self.compression {
            None => {}
            Some(Codec::Zstd(level)) => {
                d.compression = "zstd".into();
                d.params.insert("zstd_level".into(), Value::from(level));
            }
            Some(Codec::Lz4) => d.compression = "lz4".into(),
            Some(Codec::Szip { rsi, block }) => {
                // szip codes samples of 1 to 32 bits; packed data at widths that are not
                // whole bytes is coded in byte containers, which a shuffle would break.
                let fits = (1..=32).contains(&sample_bits) && d.dtype != Dtype::Bitmask;
                let shuffled_odd = d.filter == "shuffle" && packs.is_some_and(|b| b % 8 != 0);
                if fits && !shuffled_odd {
                    d.compression = "szip".into();
                    d.params.insert("szip_rsi".into(), Value::from(rsi));
                    d.params
                        .insert("szip_block_size".into(), Value::from(block));
                    d.params.insert("szip_flags".into(), Value::from(8u64));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensor_core::ByteOrder;

    #[test]
    fn stages_parse_in_order_and_apply_per_dtype() {
        let packed = PipelineSpec::parse("simple_packing:16,szip").unwrap();
        assert!(packed.is_lossy());
        let mut float = DataObjectDescriptor::new(Dtype::Float64, &[4], ByteOrder::Little);
        packed.apply(&mut float);
        assert_eq!(
            (float.encoding.as_str(), float.compression.as_str()),
            ("simple_packing", "szip")
        );
        let mut int = DataObjectDescriptor::new(Dtype::Int64, &[4], ByteOrder::Little);
        packed.apply(&mut int);
        assert_eq!(
            (int.encoding.as_str(), int.compression.as_str()),
            ("none", "none")
        );
        let shuffled = PipelineSpec::parse("shuffle,zstd:5").unwrap();
        let mut h = DataObjectDescriptor::new(Dtype::Float32, &[4], ByteOrder::Little);
        shuffled.apply(&mut h);
        assert_eq!(h.param_u64("shuffle_element_size").unwrap(), Some(4));
        assert_eq!(h.param_i64("zstd_level").unwrap(), Some(5));
        for bad in [
            "zstd,shuffle",
            "bogus",
            "simple_packing",
            "szip:x",
            "lz4,zstd",
        ] {
            assert!(PipelineSpec::parse(bad).is_err(), "{bad}");
        }
    }
}
