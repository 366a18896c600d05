//! ONNX models' initializers, through tensor-onnx (see docs/formats/onnx.md): read only,
//! the graph left alone.

use crate::adapter::Adapter;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{NotRead, TensorSet};
use serde_json::{Map, Value};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;
use tensor_core::{ByteOrder, ReadOptions};
use tensor_dtype::FormatInfo;
use tensor_onnx::{Data, OnnxFormat};

/// ONNX models.
pub(crate) struct Onnx;

/// The registry's entry.
pub(crate) static ADAPTER: Onnx = Onnx;

fn wrap(path: &Path) -> impl Fn(tensor_onnx::Error) -> Error + '_ {
    move |e| match e {
        tensor_onnx::Error::Core(c) => c.into(),
        other => Error::format(path, OnnxFormat::INFO.id, other),
    }
}

impl Adapter for Onnx {
    fn info(&self) -> &'static FormatInfo {
        &OnnxFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        OnnxFormat::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        let w = wrap(path);
        let limits = options.limits;
        let model = tensor_onnx::open(bytes, &limits).map_err(&w)?;
        let mut set = TensorSet::new(Format::ONNX, limits);
        let folder = path.parent().unwrap_or(Path::new("."));
        for init in model.initializers {
            match init.data {
                Data::Raw(raw) => {
                    let view = tensor_dtype::TensorView::new(
                        raw,
                        init.dtype,
                        &init.dims,
                        ByteOrder::Little,
                    )?;
                    set.push_view(&init.name, view);
                }
                Data::Typed(le) => {
                    let t =
                        tensor_dtype::Tensor::new(le, init.dtype, &init.dims, ByteOrder::Little)?;
                    set.push_owned(&init.name, t.into_byte_order(ByteOrder::NATIVE));
                }
                Data::External {
                    location, offset, ..
                } => {
                    let file =
                        tensor_onnx::external_path(folder, &location, &init.name).map_err(&w)?;
                    let bytes = tensor_dtype::shape::byte_len(init.dtype, &init.dims)?;
                    let len = std::fs::metadata(&file)
                        .map_err(|e| {
                            tensor_core::Error::io(format!("reading {}", file.display()), e)
                        })?
                        .len();
                    if offset.checked_add(bytes).is_none_or(|end| end > len) {
                        return Err(w(tensor_onnx::Error::External {
                            name: init.name,
                            reason: format!(
                                "of {bytes} bytes at offset {offset} runs past {location:?} ({len} bytes)"
                            ),
                        }));
                    }
                    set.tensors.push(external(
                        init.name, init.dtype, init.dims, file, offset, &location,
                    )?);
                }
            }
        }
        set.not_read = model
            .left_out
            .into_iter()
            .map(|(name, why)| NotRead {
                name,
                why,
                strings: None,
            })
            .collect();
        let mut metadata: Map<String, Value> = model
            .metadata
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        if !model.producer.is_empty() {
            metadata
                .entry("onnx.producer")
                .or_insert(Value::String(model.producer));
        }
        if !metadata.is_empty() {
            set.metadata = Some(metadata);
        }
        Ok(set)
    }
}

/// An initializer whose elements are in `file` at `offset` (little-endian, C order): read
/// when asked, a window of rows at a time when streamed.
fn external<'a>(
    name: String,
    dtype: tensor_dtype::Dtype,
    shape: Vec<u64>,
    file: std::path::PathBuf,
    offset: u64,
    location: &str,
) -> Result<crate::model::NamedTensor<'a>> {
    let total = tensor_dtype::shape::byte_len(dtype, &shape)?;
    let rows = shape.first().copied().unwrap_or(1).max(1);
    let row = total / rows;
    let read_rows = move |range: std::ops::Range<u64>, out: &mut [u8]| -> Result<()> {
        let io = |e| tensor_core::Error::io(format!("reading {}", file.display()), e);
        let mut f = std::fs::File::open(&file).map_err(io)?;
        f.seek(SeekFrom::Start(offset + range.start * row))
            .map_err(io)?;
        f.read_exact(out).map_err(io)?;
        tensor_core::byte_order::to_native_in_place(
            ByteOrder::Little,
            out,
            dtype.byte_width().max(1),
        )?;
        Ok(())
    };
    crate::model::rows::decoded_in_rows(crate::model::rows::ByRows {
        name,
        dtype,
        shape,
        encoding: format!("external {location}"),
        chunk_rows: 1,
        read_rows: Arc::new(read_rows),
    })
}
