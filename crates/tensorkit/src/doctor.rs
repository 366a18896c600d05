//! `doctor`: what this build of tensorkit is and can do — its version and target, the
//! formats in its registry, every Tensogram codec and whether it was compiled in, remote
//! reads and threads — and a self-test that encodes and decodes a small field through every
//! codec it has.

use crate::format::Format;
use tensor_core::ByteOrder;
use tensor_dtype::Dtype;
use tensor_frame::descriptor::DataObjectDescriptor;
use tensor_frame::pipeline::codecs::{self, Codec};
use tensor_frame::pipeline_spec::PipelineSpec;
use tensor_frame::{DecodeOptions, EncodeOptions, GlobalMetadata, Message};

/// What [`doctor`] found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Doctor {
    /// tensorkit's version.
    pub version: &'static str,
    /// The Tensogram wire version written.
    pub wire_version: u16,
    /// The machine the build is for (`x86_64-linux`).
    pub target: String,
    /// `release` or `debug`.
    pub profile: &'static str,
    /// Every format in the registry.
    pub formats: Vec<Format>,
    /// Every Tensogram stage and mask codec, built or not.
    pub codecs: Vec<Codec>,
    /// Whether URLs open (feature `remote`).
    pub remote: bool,
    /// Whether objects decode on several threads (feature `parallel`).
    pub parallel: bool,
    /// One round trip per codec combination.
    pub self_test: Vec<SelfTest>,
}

/// One round trip of the self-test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelfTest {
    /// The stages, as `encoding/filter/compression` (`none/none/zstd`).
    pub label: String,
    /// `ok`, `failed` or `skipped` (a codec this build leaves out).
    pub outcome: &'static str,
    /// What went wrong, or why it was skipped.
    pub detail: Option<String>,
}

/// The pipelines the self-test runs, each with the largest difference its decoded values may
/// have from the originals (0: lossless) and the codec it needs.
const TRIALS: [(&str, f64, &str); 9] = [
    ("none", 0.0, "none"),
    ("simple_packing:24", 1e-3, "simple_packing"),
    ("simple_packing:16,szip", 1e-1, "szip"),
    ("shuffle,zstd", 0.0, "zstd"),
    ("lz4", 0.0, "lz4"),
    ("blosc2", 0.0, "blosc2"),
    ("zfp:accuracy:0.01", 1e-2, "zfp"),
    ("sz3:abs:0.01", 1e-2, "sz3"),
    ("simple_packing:16,shuffle,zstd", 1e-1, "zstd"),
];

/// What this build is and can do, with the self-test run.
#[must_use]
pub fn doctor() -> Doctor {
    let codecs: Vec<Codec> = codecs::all().to_vec();
    let self_test = TRIALS
        .iter()
        .map(|&(spec, tolerance, needs)| {
            let built = needs == "none"
                || codecs
                    .iter()
                    .any(|c| c.name == needs && c.kind != "mask" && c.built);
            round_trip(spec, tolerance, built)
        })
        .collect();
    Doctor {
        version: env!("CARGO_PKG_VERSION"),
        wire_version: tensor_frame::wire::VERSION,
        target: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        formats: Format::all(),
        codecs,
        remote: cfg!(feature = "remote"),
        parallel: cfg!(feature = "parallel"),
        self_test,
    }
}

/// A 16×16 float64 field encoded through `spec` and decoded again, each value within
/// `tolerance` of the original.
fn round_trip(spec: &str, tolerance: f64, built: bool) -> SelfTest {
    let values: Vec<f64> = (0..256).map(|i| 250.0 + f64::from(i) * 0.2).collect();
    let mut d = DataObjectDescriptor::new(Dtype::Float64, &[16, 16], ByteOrder::Little);
    let outcome = PipelineSpec::parse(spec)
        .map_err(|e| e.to_string())
        .map(|p| {
            p.apply(&mut d);
            format!("{}/{}/{}", d.encoding, d.filter, d.compression)
        });
    let label = match outcome {
        Ok(label) => label,
        Err(e) => return result(spec.to_owned(), Err(e)),
    };
    if !built {
        return SelfTest {
            label,
            outcome: "skipped",
            detail: Some("this build leaves the codec out".into()),
        };
    }
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let checked = tensor_frame::serialize(
        &GlobalMetadata::default(),
        std::slice::from_ref(&d),
        &[&bytes],
        &EncodeOptions::default(),
    )
    .and_then(|msg| {
        let m = Message::open(&msg)?;
        let decoded = m.decode_object(0, DecodeOptions::default())?;
        Ok(decoded.view().typed::<f64>().map(|v| v.to_vec()))
    })
    .map_err(|e| e.to_string())
    .and_then(|v| v.map_err(|e| e.to_string()))
    .and_then(|got| {
        let worst = got
            .iter()
            .zip(&values)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        if got.len() == values.len() && worst <= tolerance {
            Ok(())
        } else {
            Err(format!(
                "decoded {} values, the furthest {worst} from the original (at most {tolerance})",
                got.len()
            ))
        }
    });
    result(label, checked)
}

fn result(label: String, checked: Result<(), String>) -> SelfTest {
    match checked {
        Ok(()) => SelfTest {
            label,
            outcome: "ok",
            detail: None,
        },
        Err(e) => SelfTest {
            label,
            outcome: "failed",
            detail: Some(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_this_build_has_round_trips() {
        let d = doctor();
        assert!(
            d.self_test
                .iter()
                .any(|t| t.label == "none/none/none" && t.outcome == "ok")
        );
        let failed: Vec<&SelfTest> = d
            .self_test
            .iter()
            .filter(|t| t.outcome == "failed")
            .collect();
        assert!(failed.is_empty(), "{failed:?}");
        for t in &d.self_test {
            let codec = t.label.rsplit('/').next().unwrap_or("");
            let built = codec == "none"
                || d.codecs
                    .iter()
                    .any(|c| c.name == codec && c.kind == "compression" && c.built);
            assert_eq!(t.outcome == "skipped", !built, "{t:?}");
        }
        assert_eq!(d.wire_version, 3);
        assert!(d.formats.iter().any(|f| f.id() == "tensogram"));
    }
}
