//! A small tensor format defined outside tensorkit, as a user would define one: the test of
//! the registry's seam. The facade's tests and the command's (`#[path]`) both use it.
//!
//! A `.toy` file is `TOYTNSR1`, a little-endian `u32` count, then per tensor: a `u16`-long
//! name, a `u8`-long dtype name, a `u8` rank, `u64` dimensions, a `u64` byte length and the
//! elements, little-endian; then, to the end, the file's metadata as JSON text.

use std::path::Path;
use tensorkit::adapter::{Adapter, Writing};
use tensorkit::bytes::atomic::WriteSeek;
use tensorkit::dtype::{Checks, FormatInfo, WriteChoice};
use tensorkit::{ByteOrder, Dtype, Error, ReadOptions, Result, TensorSet, TensorView};

const MAGIC: &[u8; 8] = b"TOYTNSR1";

pub(crate) static INFO: FormatInfo = FormatInfo {
    id: "toy",
    name: "Toy tensors",
    extensions: &["toy"],
    writes: true,
    reserved_keys: &[],
    write_choices: &[] as &[WriteChoice],
    header_read_ahead: None,
    header_reserve: 0,
    holds_attributes: false,
    unique_names: true,
    checks: Checks::None,
    header_first: false,
    any_tensor: true,
};

pub(crate) struct Toy;

pub(crate) static TOY: Toy = Toy;

/// Registers the toy format once per process, and returns its handle.
pub(crate) fn format() -> tensorkit::Format {
    static ONCE: std::sync::OnceLock<tensorkit::Format> = std::sync::OnceLock::new();
    *ONCE.get_or_init(|| tensorkit::register(&TOY).expect("the toy id is free"))
}

fn malformed(path: &Path, what: &str) -> Error {
    Error::Spec {
        path: path.to_path_buf(),
        message: format!("not a toy file: {what}"),
    }
}

/// Takes `n` bytes at `*at`, or says what was cut short.
fn take<'a>(bytes: &'a [u8], at: &mut usize, n: usize, path: &Path) -> Result<&'a [u8]> {
    let end = at
        .checked_add(n)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| malformed(path, "cut short"))?;
    let taken = &bytes[*at..end];
    *at = end;
    Ok(taken)
}

fn le<const N: usize>(bytes: &[u8], at: &mut usize, path: &Path) -> Result<[u8; N]> {
    Ok(take(bytes, at, N, path)?.try_into().expect("N bytes"))
}

impl Adapter for Toy {
    fn info(&self) -> &'static FormatInfo {
        &INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        head.starts_with(MAGIC)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        let mut set = TensorSet::new(format(), options.limits);
        let mut at = MAGIC.len();
        let count = u32::from_le_bytes(le(bytes, &mut at, path)?);
        options.limits.check_tensor_count(u64::from(count))?;
        for _ in 0..count {
            let n = u16::from_le_bytes(le(bytes, &mut at, path)?);
            let name = std::str::from_utf8(take(bytes, &mut at, n.into(), path)?)
                .map_err(|_| malformed(path, "a name is not UTF-8"))?;
            let [d] = le::<1>(bytes, &mut at, path)?;
            let dtype_name = take(bytes, &mut at, d.into(), path)?;
            let dtype = Dtype::ALL
                .into_iter()
                .find(|t| t.name().as_bytes() == dtype_name)
                .ok_or_else(|| malformed(path, "an unknown dtype"))?;
            let [rank] = le::<1>(bytes, &mut at, path)?;
            let shape = (0..rank)
                .map(|_| Ok(u64::from_le_bytes(le(bytes, &mut at, path)?)))
                .collect::<Result<Vec<u64>>>()?;
            let len = u64::from_le_bytes(le(bytes, &mut at, path)?);
            let len = usize::try_from(len).map_err(|_| malformed(path, "a huge tensor"))?;
            let data = take(bytes, &mut at, len, path)?;
            set.push_view(
                name,
                TensorView::new(data, dtype, &shape, ByteOrder::Little)?,
            );
        }
        if at < bytes.len() {
            let metadata: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&bytes[at..])
                    .map_err(|_| malformed(path, "its metadata is not a JSON object"))?;
            *set.metadata_mut() = Some(metadata);
        }
        Ok(set)
    }

    fn write(
        &self,
        set: &TensorSet<'_>,
        out: &mut dyn WriteSeek,
        path: &Path,
        _: &Writing<'_>,
    ) -> Result<Vec<String>> {
        let io = |e| {
            Error::from(tensorkit::bytes::Error::io(
                format!("writing {}", path.display()),
                e,
            ))
        };
        let mut bytes = MAGIC.to_vec();
        bytes.extend(u32::try_from(set.len()).expect("few tensors").to_le_bytes());
        for t in set.tensors() {
            let name = t.name();
            bytes.extend(
                u16::try_from(name.len())
                    .expect("short names")
                    .to_le_bytes(),
            );
            bytes.extend(name.as_bytes());
            bytes.push(u8::try_from(t.dtype().name().len()).expect("short dtype names"));
            bytes.extend(t.dtype().name().as_bytes());
            bytes.push(u8::try_from(t.shape().len()).expect("few dimensions"));
            for d in t.shape() {
                bytes.extend(d.to_le_bytes());
            }
            let elements = t.to_tensor()?;
            let data = elements.view().to_le_bytes();
            bytes.extend((data.len() as u64).to_le_bytes());
            bytes.extend(&*data);
        }
        if let Some(metadata) = set.metadata() {
            bytes.extend(serde_json::to_vec(metadata).expect("JSON"));
        }
        out.write_all(&bytes).map_err(io)?;
        Ok(Vec::new())
    }
}
