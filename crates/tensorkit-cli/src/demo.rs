//! `tensorkit demo`: write the embedded data set in every format, read it back, compare, and
//! report sizes and throughput.

use crate::demo_data::{self, Size};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};
use tensor_dtype::Tensor;
use tensorkit::Format;

/// One row of the demo table.
#[derive(Clone, Debug)]
pub struct Row {
    /// The format.
    pub format: Format,
    /// The file written.
    pub file_name: String,
    /// Its size in bytes.
    pub file_bytes: u64,
    /// Time to write it (including the sync to disk).
    pub write: Duration,
    /// Best of three: map, parse and copy every tensor out.
    pub read: Duration,
}

/// The formats the demo writes: every writable one that holds its data set (GGUF has no
/// type for the land-sea mask, a bool tensor).
pub const FORMATS: [Format; 8] = [
    Format::SAFETENSORS,
    Format::BINTENSORS,
    Format::BINTENSORS_LEGACY,
    Format::ZTENSOR_0_1,
    Format::ZTENSOR_2,
    Format::TENSOGRAM,
    Format::NETCDF,
    Format::NPZ,
];

/// The data set's file metadata: its description.
fn metadata(size: Size) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert(
        "description".into(),
        Value::from(demo_data::description(size)),
    );
    metadata
}

fn read_back(path: &Path) -> Result<Vec<(String, Tensor)>> {
    let file = tensorkit::open(path)?;
    file.tensors()
        .map(|t| Ok((t.name().into_owned(), t.to_tensor()?)))
        .collect()
}

/// Writes the data set in every format into `dir`, reads each file back and checks that every
/// tensor came back identical. Returns one row per format.
pub fn run_in(dir: &Path, size: Size) -> Result<Vec<Row>> {
    let tensors = demo_data::tensors(size);
    let views = || tensors.iter().map(|(name, t)| (name.as_str(), t.view()));
    let mut rows = Vec::new();
    for format in FORMATS {
        let file_name = format!("demo-{}.{}", format.id(), format.extension());
        let path = dir.join(&file_name);
        let start = Instant::now();
        let options = tensorkit::WriteOptions {
            metadata: Some(metadata(size)),
            ..tensorkit::WriteOptions::for_format(format)
        };
        let _ = tensorkit::save_tensors(&path, views(), &options)?;
        let write = start.elapsed();
        let mut read = Duration::MAX;
        let mut back = Vec::new();
        for _ in 0..3 {
            let start = Instant::now();
            back = read_back(&path)?;
            read = read.min(start.elapsed());
        }
        for (name, original) in &tensors {
            let found = back.iter().find(|(n, _)| n == name);
            if found.map(|(_, t)| t) != Some(original) {
                return Err(Error::RoundTripMismatch {
                    format: format.id(),
                    tensor: name.clone(),
                });
            }
        }
        let file_bytes = std::fs::metadata(&path)
            .map_err(|e| {
                tensor_core::Error::io(format!("reading the size of {}", path.display()), e)
            })?
            .len();
        rows.push(Row {
            format,
            file_name,
            file_bytes,
            write,
            read,
        });
    }
    Ok(rows)
}

/// Runs the demo in a temporary directory (or in `out`, keeping the files) and renders the
/// report.
pub fn run(out: Option<&Path>, size: Size) -> Result<String> {
    let tmp;
    let dir = if let Some(d) = out {
        std::fs::create_dir_all(d)
            .map_err(|e| tensor_core::Error::io(format!("creating {}", d.display()), e))?;
        d
    } else {
        tmp = tempfile::tempdir()
            .map_err(|e| tensor_core::Error::io("creating a temporary directory", e))?;
        tmp.path()
    };
    let rows = run_in(dir, size)?;
    Ok(render(&demo_data::tensors(size), &rows))
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "kB", "MB", "GB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

fn rate(bytes: u64, t: Duration) -> String {
    let secs = t.as_secs_f64().max(1e-9);
    format!("{}/s", human_bytes((bytes as f64 / secs) as u64))
}

fn render(tensors: &[(String, Tensor)], rows: &[Row]) -> String {
    let data_bytes: u64 = tensors.iter().map(|(_, t)| t.data().len() as u64).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "tensorkit demo: {} tensors, {} of data",
        tensors.len(),
        human_bytes(data_bytes)
    );
    for (name, t) in tensors {
        let _ = writeln!(out, "  {name:<16} {:<8} {:?}", t.dtype().name(), t.shape());
    }
    let _ = writeln!(out);
    let fw = rows
        .iter()
        .map(|r| r.format.id().len())
        .max()
        .unwrap_or(0)
        .max(6);
    let nw = rows
        .iter()
        .map(|r| r.file_name.len())
        .max()
        .unwrap_or(0)
        .max(4);
    let _ = writeln!(
        out,
        "{:<fw$}  {:<nw$}  {:>9}  {:>11}  {:>11}  round trip",
        "format", "file", "size", "write", "read"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<fw$}  {:<nw$}  {:>9}  {:>11}  {:>11}  identical",
            r.format.id(),
            r.file_name,
            human_bytes(r.file_bytes),
            rate(data_bytes, r.write),
            rate(data_bytes, r.read),
        );
    }
    let _ = writeln!(
        out,
        "\nwrite: to an unnamed temporary file, linked into place once complete, not synced: left to the kernel to write back, as cp does; read: map, parse and copy every tensor out (best of 3)."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_round_trips_the_small_set() {
        let dir = tempfile::tempdir().unwrap();
        let rows = run_in(dir.path(), Size::Small).unwrap();
        assert_eq!(rows.len(), FORMATS.len());
        assert!(
            Format::writable_any()
                .iter()
                .all(|f| FORMATS.contains(f) || *f == Format::GGUF),
            "a writable format is missing from the demo"
        );
        for r in &rows {
            assert!(dir.path().join(&r.file_name).exists());
            assert!(r.file_bytes > 1000);
        }
        let text = render(&demo_data::tensors(Size::Small), &rows);
        assert!(text.contains("safetensors"));
        assert!(text.contains("bintensors-legacy"));
        assert!(text.contains("identical"));
        // The demo writes with Durability::Cached: it must not claim to sync (decision 0008).
        assert!(!text.contains("synced and"), "{text}");
        assert!(text.contains("not synced"), "{text}");
    }

    #[test]
    fn sizes_read_like_a_person_wrote_them() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(6_230_000), "6.2 MB");
        assert_eq!(rate(2_000_000_000, Duration::from_secs(1)), "2.0 GB/s");
    }
}
