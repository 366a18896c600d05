//! `--pipeline`: the encoding stages Tensogram output applies to each tensor, written as
//! comma-separated stages in pipeline order, e.g. `simple_packing:16,szip` or
//! `shuffle,zstd:3`.
//!
//! | stage | meaning |
//! |---|---|
//! | `none` | store as it is (GRIB fields as float64) |
//! | `simple_packing:BITS` | quantise float64 to BITS bits, 0 to 64 (lossy) |
//! | `shuffle` | byte shuffle, one lane per byte of an element (of a packed value) |
//! | `zstd[:LEVEL]`, `lz4` | lossless compression (zstd level 3 by default; levels −131072 to 22) |
//! | `zfp:rate:BITS`, `zfp:precision:PLANES`, `zfp:accuracy:TOLERANCE` | lossy compression of float64 (zfp's fixed-rate, fixed-precision and fixed-accuracy modes) |
//! | `sz3:abs:BOUND`, `sz3:rel:BOUND`, `sz3:psnr:DB` | lossy compression of float64 (SZ3 under an absolute, relative or PSNR error bound) |
//! | `blosc2[:CODEC[:LEVEL]]` | lossless compression in blosc2 frames: codec `blosclz`, `lz4` (the default), `lz4hc`, `zlib` or `zstd`, level 0 to 9 (5 by default) |
//! | `szip[:RSI[:BLOCK]]` | CCSDS 121.0-B-3 (RSI 128, block 16 by default) |
//! | `keep` | the default; first, alone or before other stages: tensors stored packed (GRIB simple and CCSDS packing) keep their packing — the same integers, reference value and scale factors, CCSDS streams as szip — where Tensogram decodes them to the same float64 values bit for bit (a field it cannot hold so is named in a "left out" note); the other tensors go through the stages that follow (none: stored as they are) |
//!
//! The stages are chosen per tensor, so one specification serves a file of mixed dtypes.
//! A stage that cannot apply to a tensor is left out for that tensor only, and `convert`
//! says which and why ("left out: ..."):
//!
//! - `simple_packing` packs float64. Integer, bool and bitmask tensors are stored
//!   losslessly without a note; other floats are stored losslessly with one.
//! - `shuffle` needs elements (packed values) of at least two bytes filling the payload.
//! - `szip` codes samples of 1 to 32 bits, so raw float64, 64-bit integers, complex numbers
//!   and bitmasks go without it; after packing, it needs 8, 16, 24 or 32 bits.
//!
//! Everything written this way opens in tensogram with the same values. With
//! `--allow-extensions`, float32 is packed too and szip follows packing to any width: files
//! only tensorkit reads (the reference refuses the first and decodes the second wrongly).

use crate::descriptor::DataObjectDescriptor;
use crate::descriptor::ParamValue as Value;
use tensor_core::{ErrorKind, Kinded};
use tensor_dtype::Dtype;

/// A pipeline specification that cannot be used, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("pipeline {spec:?}: {why}")]
pub struct Error {
    /// The specification as given.
    pub spec: String,
    /// What is wrong with it.
    pub why: String,
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidArgument
    }
}

/// `Result` with the specification's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A parsed `--pipeline`. The default is `keep`: packed GRIB fields keep their packing,
/// everything else is stored as it is.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineSpec {
    packing_bits: Option<u64>,
    shuffle: bool,
    compression: Option<Codec>,
    extensions: bool,
    nan_bits: NanBits,
    keep: bool,
}

/// What becomes of a NaN whose sign or payload tensogram's masks would change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NanBits {
    /// An error naming the tensor and element (the default).
    Refuse,
    /// Stored as the canonical quiet NaN the masks give back (`--canonical-nan`).
    Canonicalise,
}

/// A stage [`PipelineSpec::apply`] left out for one tensor, and why.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LeftOut {
    /// The stage.
    pub stage: &'static str,
    /// Why, the same words for every tensor it applies to.
    pub why: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Codec {
    Zstd(i64),
    Lz4,
    Blosc2 {
        codec: crate::pipeline::blosc2::Codec,
        level: u8,
    },
    Zfp(crate::pipeline::zfp::Mode),
    Sz3(crate::pipeline::sz3::Bound),
    Szip {
        rsi: u64,
        block: u64,
    },
}

fn bad(spec: &str, why: &str) -> Error {
    Error {
        spec: spec.to_owned(),
        why: why.to_owned(),
    }
}

impl Default for PipelineSpec {
    fn default() -> Self {
        PipelineSpec::KEEP
    }
}

impl PipelineSpec {
    /// The default (`keep`): packed GRIB fields keep their packing, everything else is
    /// stored as it is.
    pub const KEEP: PipelineSpec = PipelineSpec {
        keep: true,
        ..PipelineSpec::NONE
    };

    /// Every tensor stored as it is (`none`).
    const NONE: PipelineSpec = PipelineSpec {
        packing_bits: None,
        shuffle: false,
        compression: None,
        extensions: false,
        nan_bits: NanBits::Refuse,
        keep: false,
    };

    /// Parses a specification.
    pub fn parse(spec: &str) -> Result<Self> {
        let mut p = PipelineSpec::NONE;
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
                "keep" => {
                    !p.keep && !p.shuffle && p.compression.is_none() && p.packing_bits.is_none()
                }
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
                "keep" => p.keep = true,
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
                "zstd" => {
                    let level = a.map_or(Ok(3), |v| {
                        v.parse::<i64>()
                            .map_err(|_| bad(spec, &format!("level {v:?} is not a number")))
                    })?;
                    // zstd's own range, which tensogram accepts: fast levels are negative.
                    let range = crate::pipeline::zstd::levels();
                    if !range.contains(&(level as i32)) || i64::from(level as i32) != level {
                        return Err(bad(
                            spec,
                            &format!(
                                "zstd level {level} is outside zstd's {}..={}",
                                range.start(),
                                range.end()
                            ),
                        ));
                    }
                    p.compression = Some(Codec::Zstd(level));
                }
                "lz4" => p.compression = Some(Codec::Lz4),
                "blosc2" => {
                    let name = a.unwrap_or("lz4");
                    let codec = crate::pipeline::blosc2::Codec::parse(name).ok_or_else(|| {
                        bad(
                            spec,
                            &format!(
                                "blosc2 codec {name:?} is not one of blosclz, lz4, lz4hc, zlib, zstd"
                            ),
                        )
                    })?;
                    let level = num(b, 5, "level")?;
                    if level > 9 {
                        return Err(bad(spec, &format!("blosc2 level {level} is not 0 to 9")));
                    }
                    p.compression = Some(Codec::Blosc2 {
                        codec,
                        level: level as u8,
                    });
                }
                "zfp" => {
                    use crate::pipeline::zfp::Mode;
                    p.nothing_before_a_float64_codec(spec, "zfp")?;
                    let value = b.ok_or_else(|| {
                        bad(spec, "zfp needs a mode and its value, e.g. zfp:rate:16, zfp:precision:32 or zfp:accuracy:1e-4")
                    })?;
                    let float = |what: &str| {
                        value
                            .parse::<f64>()
                            .ok()
                            .filter(|v| v.is_finite() && *v > 0.0)
                            .ok_or_else(|| {
                                bad(
                                    spec,
                                    &format!("zfp {what} {value:?} is not a positive number"),
                                )
                            })
                    };
                    let mode = match a {
                        Some("rate") => Mode::FixedRate(float("rate")?),
                        Some("precision") => Mode::FixedPrecision(
                            value
                                .parse::<u32>()
                                .ok()
                                .filter(|p| (1..=64).contains(p))
                                .ok_or_else(|| {
                                    bad(spec, &format!("zfp precision {value:?} is not 1 to 64"))
                                })?,
                        ),
                        Some("accuracy") => Mode::FixedAccuracy(float("accuracy")?),
                        other => {
                            return Err(bad(
                                spec,
                                &format!("zfp mode {other:?} is not rate, precision or accuracy"),
                            ));
                        }
                    };
                    p.compression = Some(Codec::Zfp(mode));
                }
                "sz3" => {
                    p.nothing_before_a_float64_codec(spec, "sz3")?;
                    let value = b
                        .and_then(|v| v.parse::<f64>().ok())
                        .filter(|v| v.is_finite() && *v > 0.0)
                        .ok_or_else(|| {
                            bad(spec, "sz3 needs a bound and a positive value, e.g. sz3:abs:1e-4, sz3:rel:1e-3 or sz3:psnr:80")
                        })?;
                    let bound = crate::pipeline::sz3::Bound::parse(a.unwrap_or(""), value)
                        .ok_or_else(|| {
                            bad(
                                spec,
                                &format!("sz3 bound {:?} is not abs, rel or psnr", a.unwrap_or("")),
                            )
                        })?;
                    p.compression = Some(Codec::Sz3(bound));
                }
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
                            "unknown stage {other:?} (none, simple_packing:BITS, shuffle, zstd[:LEVEL], lz4, blosc2[:CODEC[:LEVEL]], zfp:MODE:VALUE, sz3:BOUND:VALUE, szip[:RSI[:BLOCK]])"
                        ),
                    ));
                }
            }
        }
        Ok(p)
    }

    /// zfp and sz3 compress float64 values as they are: a packing or shuffle stage before
    /// them is refused.
    fn nothing_before_a_float64_codec(&self, spec: &str, codec: &str) -> Result<()> {
        if self.shuffle || self.packing_bits.is_some() {
            return Err(bad(
                spec,
                &format!("{codec} compresses float64 values: no packing or shuffle before it"),
            ));
        }
        Ok(())
    }

    /// Whether the pipeline can change values (simple packing).
    #[must_use]
    pub fn is_lossy(&self) -> bool {
        self.packing_bits.is_some()
            || matches!(self.compression, Some(Codec::Zfp(_) | Codec::Sz3(_)))
    }

    /// Whether tensors stored packed keep their packing (`keep`); see the module's table.
    #[must_use]
    pub fn keeps_packing(&self) -> bool {
        self.keep
    }

    /// Allows what only tensorkit reads (`--allow-extensions`): packing float32, szip after
    /// packing to any width.
    #[must_use]
    pub fn with_extensions(mut self, on: bool) -> Self {
        self.extensions = on;
        self
    }

    /// Whether [`with_extensions`](Self::with_extensions) is on.
    #[must_use]
    pub fn extensions(&self) -> bool {
        self.extensions
    }

    /// Stores every NaN as tensogram's masks give it back, the canonical quiet NaN
    /// (`--canonical-nan`), instead of refusing a NaN with its sign bit set or another
    /// payload, which the masks would change. Without extensions only: with them, NaN is
    /// kept bit for bit.
    #[must_use]
    pub fn with_canonical_nan(mut self, on: bool) -> Self {
        self.nan_bits = if on {
            NanBits::Canonicalise
        } else {
            NanBits::Refuse
        };
        self
    }

    /// Whether [`with_canonical_nan`](Self::with_canonical_nan) is on.
    #[must_use]
    pub fn canonical_nan(&self) -> bool {
        self.nan_bits == NanBits::Canonicalise
    }

    /// Sets `d`'s pipeline for its dtype and size, returning the stages left out for it.
    pub fn apply(&self, d: &mut DataObjectDescriptor) -> Vec<LeftOut> {
        let mut left_out = Vec::new();
        let mut skip = |stage: &'static str, why: String| left_out.push(LeftOut { stage, why });
        let packable = match d.dtype {
            Dtype::Float64 => true,
            Dtype::Float32 => self.extensions,
            _ => false,
        };
        let packs = self.packing_bits.filter(|_| packable);
        if self.packing_bits.is_some()
            && packs.is_none()
            && (d.dtype.is_float() || d.dtype.is_complex())
        {
            skip(
                "simple_packing",
                if d.dtype == Dtype::Float32 {
                    "tensogram decodes simple_packing of float64 only (allowing tensorkit's \
                     extensions packs float32 too, into files only tensorkit reads)"
                        .into()
                } else {
                    format!("simple_packing packs float64, not {}", d.dtype)
                },
            );
        }
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
        let n = d.element_count();
        let payload = match packs {
            Some(bits) => (u128::from(n) * u128::from(bits)).div_ceil(8),
            None => u128::from(d.dtype.payload_bytes(n).unwrap_or(0)),
        };
        if self.shuffle {
            if lanes > 1 && payload.is_multiple_of(u128::from(lanes)) {
                d.filter = "shuffle".into();
                d.params
                    .insert("shuffle_element_size".into(), Value::from(lanes));
                sample_bits = 8;
            } else if lanes > 1 {
                skip(
                    "shuffle",
                    format!("{payload} bytes are not whole {lanes}-byte elements"),
                );
            }
        }
        match self.compression {
            None => {}
            Some(Codec::Zstd(level)) => {
                d.compression = "zstd".into();
                d.params.insert("zstd_level".into(), Value::from(level));
            }
            Some(Codec::Lz4) => d.compression = "lz4".into(),
            Some(Codec::Zfp(mode)) => {
                use crate::pipeline::zfp::Mode;
                let param = match mode {
                    Mode::FixedRate(r) => ("zfp_rate", Value::Float(r)),
                    Mode::FixedPrecision(p) => ("zfp_precision", Value::from(u64::from(p))),
                    Mode::FixedAccuracy(t) => ("zfp_tolerance", Value::Float(t)),
                };
                let params = [("zfp_mode", Value::from(mode.name())), param];
                float64_codec(d, "zfp", params, &mut skip);
            }
            Some(Codec::Sz3(bound)) => {
                let params = [
                    ("sz3_error_bound_mode", Value::from(bound.name())),
                    ("sz3_error_bound", Value::Float(bound.value())),
                ];
                float64_codec(d, "sz3", params, &mut skip);
            }
            Some(Codec::Blosc2 { codec, level }) => {
                d.compression = "blosc2".into();
                d.params
                    .insert("blosc2_codec".into(), Value::from(codec.name()));
                d.params
                    .insert("blosc2_clevel".into(), Value::from(u64::from(level)));
            }
            Some(Codec::Szip { rsi, block }) => {
                // szip codes samples of 1 to 32 bits; packed data at widths that are not
                // whole bytes is coded in byte containers (an extension), which a shuffle
                // would break.
                let odd_width = packs.is_some_and(|b| b % 8 != 0);
                let why = if !(1..=32).contains(&sample_bits) || d.dtype == Dtype::Bitmask {
                    Some(format!(
                        "szip codes samples of 1 to 32 bits, not {}",
                        d.dtype
                    ))
                } else if odd_width && d.filter == "shuffle" {
                    Some(
                        "szip cannot follow a shuffle of packed values that are not whole bytes"
                            .into(),
                    )
                } else if odd_width && !self.extensions {
                    Some(format!(
                        "tensogram's szip decodes packed values of 8, 16, 24 or 32 bits only, \
                         not {sample_bits} (allowing tensorkit's extensions writes them for tensorkit \
                         alone)"
                    ))
                } else {
                    None
                };
                if let Some(why) = why {
                    skip("szip", why);
                } else {
                    d.compression = "szip".into();
                    d.params.insert("szip_rsi".into(), Value::from(rsi));
                    d.params
                        .insert("szip_block_size".into(), Value::from(block));
                    d.params.insert("szip_flags".into(), Value::from(8u64));
                }
            }
        }
        left_out
    }
}

/// Sets `codec` (zfp or sz3, which tensogram reads as float64 values whatever the dtype)
/// with its `params` on a float64 tensor; leaves any other dtype uncompressed, saying why.
fn float64_codec(
    d: &mut DataObjectDescriptor,
    codec: &'static str,
    params: [(&str, Value); 2],
    skip: &mut impl FnMut(&'static str, String),
) {
    if d.dtype == Dtype::Float64 {
        d.compression = codec.into();
        d.params.extend(params.map(|(k, v)| (k.to_owned(), v)));
    } else {
        skip(
            codec,
            format!(
                "tensogram's {codec} reads every payload as float64 values, so {} would not come back",
                d.dtype
            ),
        );
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
        assert!(packed.apply(&mut float).is_empty());
        assert_eq!(
            (float.encoding.as_str(), float.compression.as_str()),
            ("simple_packing", "szip")
        );
        let mut int = DataObjectDescriptor::new(Dtype::Int64, &[4], ByteOrder::Little);
        let left = packed.apply(&mut int);
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].why.contains("1 to 32 bits"));
        assert_eq!(
            (int.encoding.as_str(), int.compression.as_str()),
            ("none", "none")
        );
        let shuffled = PipelineSpec::parse("shuffle,zstd:5").unwrap();
        let mut h = DataObjectDescriptor::new(Dtype::Float32, &[4], ByteOrder::Little);
        assert!(shuffled.apply(&mut h).is_empty());
        assert_eq!(h.param_u64("shuffle_element_size").unwrap(), Some(4));
        assert_eq!(h.param_i64("zstd_level").unwrap(), Some(5));
        for bad in [
            "zstd,shuffle",
            "bogus",
            "simple_packing",
            "szip:x",
            "lz4,zstd",
            "zstd:23",
            "zstd:100",
            "zstd:-131073",
        ] {
            assert!(PipelineSpec::parse(bad).is_err(), "{bad}");
        }
        let blosc = PipelineSpec::parse("shuffle,blosc2:zstd:9").unwrap();
        let mut d = DataObjectDescriptor::new(Dtype::Float32, &[8], ByteOrder::Little);
        assert!(blosc.apply(&mut d).is_empty());
        assert_eq!(
            (d.filter.as_str(), d.compression.as_str()),
            ("shuffle", "blosc2")
        );
        assert_eq!(d.param_text("blosc2_codec").unwrap(), Some("zstd"));
        assert_eq!(d.param_i64("blosc2_clevel").unwrap(), Some(9));
        let default = PipelineSpec::parse("blosc2").unwrap();
        let mut d = DataObjectDescriptor::new(Dtype::Int16, &[8], ByteOrder::Little);
        default.apply(&mut d);
        assert_eq!(d.param_text("blosc2_codec").unwrap(), Some("lz4"));
        assert_eq!(d.param_i64("blosc2_clevel").unwrap(), Some(5));
        let zfp = PipelineSpec::parse("zfp:accuracy:1e-4").unwrap();
        assert!(zfp.is_lossy());
        let mut d = DataObjectDescriptor::new(Dtype::Float64, &[8], ByteOrder::Little);
        assert!(zfp.apply(&mut d).is_empty());
        assert_eq!(d.param_text("zfp_mode").unwrap(), Some("fixed_accuracy"));
        assert_eq!(d.param_f64("zfp_tolerance").unwrap(), Some(1e-4));
        let mut f = DataObjectDescriptor::new(Dtype::Float32, &[8], ByteOrder::Little);
        let left = zfp.apply(&mut f);
        assert_eq!((left.len(), f.compression.as_str()), (1, "none"));
        let mut d = DataObjectDescriptor::new(Dtype::Float64, &[8], ByteOrder::Little);
        PipelineSpec::parse("zfp:precision:32")
            .unwrap()
            .apply(&mut d);
        assert_eq!(d.param_u64("zfp_precision").unwrap(), Some(32));
        let mut d = DataObjectDescriptor::new(Dtype::Float64, &[8], ByteOrder::Little);
        let sz3 = PipelineSpec::parse("sz3:psnr:80").unwrap();
        assert!(sz3.is_lossy() && sz3.apply(&mut d).is_empty());
        assert_eq!(d.param_text("sz3_error_bound_mode").unwrap(), Some("psnr"));
        assert_eq!(d.param_f64("sz3_error_bound").unwrap(), Some(80.0));
        let mut i = DataObjectDescriptor::new(Dtype::Int32, &[8], ByteOrder::Little);
        assert_eq!(sz3.apply(&mut i).len(), 1);
        for bad in [
            "sz3",
            "sz3:abs",
            "sz3:l2:1",
            "sz3:abs:0",
            "shuffle,sz3:abs:1",
            "zfp",
            "zfp:rate",
            "zfp:speed:3",
            "zfp:rate:-1",
            "zfp:precision:0",
            "shuffle,zfp:rate:8",
            "simple_packing:16,zfp:rate:8",
            "blosc2:snappy",
            "blosc2:lz4:10",
            "blosc2:lz4:x",
            "blosc2,zstd",
        ] {
            assert!(PipelineSpec::parse(bad).is_err(), "{bad}");
        }
        for good in ["zstd:-5", "zstd:22", "zstd:-131072", "zstd:0"] {
            assert!(PipelineSpec::parse(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn stages_fall_back_per_tensor_and_extensions_opt_in() {
        let spec = PipelineSpec::parse("simple_packing:12,shuffle,szip").unwrap();
        // 7 values of 12 bits: 11 bytes, not whole 2-byte elements; no szip after 12 bits.
        let mut d = DataObjectDescriptor::new(Dtype::Float64, &[7], ByteOrder::Little);
        let left: Vec<&str> = spec.apply(&mut d).iter().map(|l| l.stage).collect();
        assert_eq!(left, ["shuffle", "szip"]);
        assert_eq!(d.encoding, "simple_packing");
        assert_eq!(
            (d.filter.as_str(), d.compression.as_str()),
            ("none", "none")
        );
        let spec = PipelineSpec::parse("simple_packing:16,szip").unwrap();
        let mut f32d = DataObjectDescriptor::new(Dtype::Float32, &[4], ByteOrder::Little);
        let left = spec.apply(&mut f32d);
        assert!(
            left[0].why.contains("allowing tensorkit's extensions"),
            "{left:?}"
        );
        assert_eq!(
            (f32d.encoding.as_str(), f32d.compression.as_str()),
            ("none", "szip")
        );
        let ext = spec.clone().with_extensions(true);
        let mut f32d = DataObjectDescriptor::new(Dtype::Float32, &[4], ByteOrder::Little);
        assert!(ext.apply(&mut f32d).is_empty());
        assert_eq!(f32d.encoding, "simple_packing");
        let odd = PipelineSpec::parse("simple_packing:12,szip")
            .unwrap()
            .with_extensions(true);
        let mut d = DataObjectDescriptor::new(Dtype::Float64, &[7], ByteOrder::Little);
        assert!(odd.apply(&mut d).is_empty());
        assert_eq!(d.compression, "szip");
        let mut b = DataObjectDescriptor::new(Dtype::Bool, &[7], ByteOrder::Little);
        assert!(
            spec.apply(&mut b)
                .iter()
                .all(|l| l.stage != "simple_packing")
        );
    }
}
