//! [`NamedTensor`]: one tensor of a file — its name, its elements however they are held,
//! where it sits and its attributes — and the ways its elements are read out.

use super::stored::{Blocks, Lazy, TensorData};
use crate::error::Result;
use std::sync::Arc;
use tensor_core::Limits;
use tensor_dtype::{Dtype, Tensor, TensorView};

/// The most bytes a streamed tensor hands its consumer at once
/// ([`TensorRef::stream`](crate::TensorRef::stream)): runs big enough to amortise per-run
/// work, small enough that memory stays flat for any tensor size.
pub const RUN_BYTES: usize = 4 << 20;

/// A tensor's elements in memory: borrowed from the file, or decoded.
#[derive(Debug)]
pub(crate) enum Loaded<'s> {
    /// Borrowed.
    View(TensorView<'s>),
    /// Decoded.
    Owned(Tensor),
}

/// One tensor of a file.
#[derive(Clone)]
pub(crate) struct NamedTensor<'a> {
    /// The tensor's name, for formats that name tensors.
    pub name: Option<String>,
    /// The elements.
    pub data: TensorData<'a>,
    /// Where it sits in formats with nested structure, e.g. `[("message", 0), ("object", 2)]`.
    pub location: Vec<(&'static str, u64)>,
    /// Per-tensor metadata, for formats that store it (e.g. zTensor custom keys).
    pub attributes: Vec<(String, tensor_core::cbor::Value)>,
    /// Checks the stored elements against the checksum or digest the file keeps for them
    /// (zTensor), when the file was opened to verify. Run before the elements are streamed or
    /// decoded ([`load`](Self::load), [`stream`](Self::stream)...) or while they are copied
    /// (on another core, for large tensors), not for a zero-copy view: a view of a large
    /// tensor costs nothing until the digest is asked for
    /// ([`TensorRef::verify`](crate::TensorRef::verify)).
    pub check: Option<Arc<CheckFn<'a>>>,
}

/// Checks a tensor's stored elements against the digest its file keeps for them.
pub(crate) type CheckFn<'a> = dyn Fn() -> Result<()> + Send + Sync + 'a;

impl std::fmt::Debug for NamedTensor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamedTensor")
            .field("name", &self.name)
            .field("data", &self.data)
            .field("location", &self.location)
            .field("attributes", &self.attributes)
            .field("check", &self.check.is_some())
            .finish()
    }
}

impl<'a> NamedTensor<'a> {
    /// A named tensor borrowing `view`, with no location or attributes.
    #[must_use]
    pub(crate) fn borrowed(name: impl Into<String>, view: TensorView<'a>) -> Self {
        NamedTensor {
            name: Some(name.into()),
            data: TensorData::View(view),
            location: Vec::new(),
            attributes: Vec::new(),
            check: None,
        }
    }

    /// The dtype, without decoding anything.
    #[must_use]
    pub(crate) fn dtype(&self) -> Dtype {
        match &self.data {
            TensorData::View(v) => v.dtype(),
            TensorData::Owned(t) => t.dtype(),
            TensorData::Encoded(l) => l.dtype,
        }
    }

    /// The shape, without decoding anything.
    #[must_use]
    pub(crate) fn shape(&self) -> &[u64] {
        match &self.data {
            TensorData::View(v) => v.shape(),
            TensorData::Owned(t) => t.shape(),
            TensorData::Encoded(l) => &l.shape,
        }
    }

    /// Bytes of the decoded elements, without decoding anything.
    #[must_use]
    pub(crate) fn byte_len(&self) -> u64 {
        tensor_dtype::shape::byte_len(self.dtype(), self.shape()).unwrap_or(u64::MAX)
    }

    /// A quantized tensor's stored blocks (GGUF) and the shape of those bytes: its element
    /// shape with the last dimension in bytes (`[4, 1024]` of `Q4_K` is `[4, 576]`); `None`
    /// for every other tensor.
    #[must_use]
    pub(crate) fn blocks(&self) -> Option<(Blocks<'a>, Vec<u64>)> {
        let TensorData::Encoded(Lazy {
            blocks: Some(b), ..
        }) = &self.data
        else {
            return None;
        };
        let mut shape = self.shape().to_vec();
        match shape.last_mut() {
            Some(last) => *last = *last / b.scheme.block_elements * b.scheme.block_bytes,
            None => shape.push(b.scheme.block_bytes),
        }
        Some((b.clone(), shape))
    }

    /// Runs the tensor's [`check`](Self::check), if it has one.
    pub(crate) fn verify(&self) -> Result<()> {
        self.check.as_ref().map_or(Ok(()), |check| check())
    }

    /// The elements in memory: borrowed when stored as they are, decoded (one tensor,
    /// checked against `limits` and allocated fallibly) otherwise.
    pub(crate) fn load(&self, limits: &Limits) -> Result<Loaded<'_>> {
        self.verify()?;
        Ok(match &self.data {
            TensorData::View(v) => Loaded::View(v.clone()),
            TensorData::Owned(t) => Loaded::View(t.view()),
            TensorData::Encoded(l) => Loaded::Owned((l.decode)(limits)?),
        })
    }

    /// The little-endian elements (in storage order, as [`TensorView::to_le_bytes`]):
    /// borrowed where they are stored that way, decoded (one tensor, within `limits`)
    /// otherwise.
    pub(crate) fn le_bytes(&self, limits: &Limits) -> Result<std::borrow::Cow<'_, [u8]>> {
        self.verify()?;
        Ok(match &self.data {
            TensorData::View(v) => v.to_le_bytes(),
            TensorData::Owned(t) => t.view().to_le_bytes(),
            TensorData::Encoded(l) => {
                let t = (l.decode)(limits)?;
                let (order, width) = (t.byte_order(), t.dtype().swap_width());
                let mut data = t.into_data();
                if order == tensor_core::ByteOrder::Big && width > 1 {
                    tensor_core::byte_order::swap_in_place(&mut data, width)?;
                }
                std::borrow::Cow::Owned(data)
            }
        })
    }

    /// Hands the little-endian, C-order elements to `sink` in runs of at most
    /// [`RUN_BYTES`] (whole elements): memory stays bounded whatever the tensor's size, for
    /// hashing, copying and checking.
    pub(crate) fn stream(
        &self,
        limits: &Limits,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        self.verify()?;
        let view = match &self.data {
            TensorData::Encoded(l) => return (l.stream)(limits, RUN_BYTES, sink),
            TensorData::View(v) => v.clone(),
            TensorData::Owned(t) => t.view(),
        };
        stream_view(&view, sink)
    }

    /// Writes the elements as every format stores them — little-endian, bool bytes as 0 or
    /// 1 — streamed in bounded runs: what writers and `get -o` copy, one tensor at a time.
    /// Exactly [`byte_len`](Self::byte_len) bytes are written, or it is an error (a header
    /// written before them already promised that many).
    pub(crate) fn write_canonical(
        &self,
        limits: &Limits,
        out: &mut dyn std::io::Write,
    ) -> Result<()> {
        let bools = self.dtype() == Dtype::Bool;
        let mut run = Vec::new();
        let mut written = 0u64;
        let want = self.byte_len();
        self.stream(limits, &mut |c| {
            written += c.len() as u64;
            if written > want {
                return Err(tensor_core::Error::InvalidArgument(format!(
                    "tensor {:?} decoded to more than its {want} bytes",
                    self.name.as_deref().unwrap_or("")
                ))
                .into());
            }
            let c = if bools && c.iter().any(|&b| b > 1) {
                run.clear();
                run.extend(c.iter().map(|&b| u8::from(b != 0)));
                &run[..]
            } else {
                c
            };
            out.write_all(c)
                .map_err(|e| tensor_core::Error::io("writing tensor data", e).into())
        })?;
        if written != want {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "tensor {:?} decoded to {written} of its {want} bytes",
                self.name.as_deref().unwrap_or("")
            ))
            .into());
        }
        Ok(())
    }
}

/// Hands a view's little-endian elements (in storage order, as
/// [`TensorView::to_le_bytes`]) to `sink` in runs of at most [`RUN_BYTES`].
pub(crate) fn stream_view(
    view: &TensorView<'_>,
    sink: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    // Whole elements per run; three bytes hold a whole number of every packed type.
    let width = match view.dtype().byte_width() {
        0 => 3,
        w => w,
    };
    let run = (RUN_BYTES / width).max(1) * width;
    let swap = view.byte_order() == tensor_core::ByteOrder::Big && view.dtype().swap_width() > 1;
    if view.contiguous_order() == Some(tensor_dtype::Order::C)
        && let Some(bytes) = view.contiguous_bytes()
    {
        // Borrowed from the file when stored little-endian; else swapped a run at a time.
        if !swap {
            return bytes.chunks(run).try_for_each(sink);
        }
        let mut buf = Vec::with_capacity(run.min(bytes.len()));
        for c in bytes.chunks(run) {
            buf.clear();
            buf.extend_from_slice(c);
            tensor_core::byte_order::swap_in_place(&mut buf, view.dtype().swap_width())?;
            sink(&buf)?;
        }
        return Ok(());
    }
    // Not C-contiguous (a record variable's records a record apart, a transposed view):
    // gathered in C order a slice of the outermost dimension at a time, or a run of
    // elements of a vector, so that memory holds a run, never the tensor.
    let shape = view.shape();
    if view.dtype().is_packed() || shape.is_empty() {
        return view.to_le_bytes().chunks(run).try_for_each(sink);
    }
    if shape.len() == 1 {
        let per = (run / width) as u64;
        let mut start = 0;
        while start < shape[0] {
            let n = per.min(shape[0] - start);
            sink(&view.rows(start..start + n)?.to_le_bytes())?;
            start += n;
        }
        return Ok(());
    }
    for i in 0..shape[0] {
        stream_view(&view.row(i)?, sink)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lazy(produce: usize) -> NamedTensor<'static> {
        NamedTensor {
            name: Some("t".into()),
            data: TensorData::Encoded(Lazy {
                blocks: None,
                encoding: "test".into(),
                dtype: Dtype::Bool,
                shape: vec![4],
                stream: Arc::new(move |_, _, sink| sink(&vec![7u8; produce])),
                decode: Arc::new(|_| unreachable!("not decoded whole")),
                packed: None,
                decode_into: None,
            }),
            location: Vec::new(),
            attributes: Vec::new(),
            check: None,
        }
    }

    #[test]
    fn strided_and_big_endian_views_stream_in_runs_as_their_little_endian_bytes() {
        // Three "records" of 2 x 3 big-endian int32, each followed by 8 bytes of another
        // variable (a record variable's layout), and a reversed vector.
        let buffer: Vec<u8> = (0..3 * (24 + 8)).map(|i| i as u8).collect();
        let records = TensorView::strided(
            &buffer,
            Dtype::Int32,
            &[3, 2, 3],
            &[32, 12, 4],
            0,
            tensor_core::ByteOrder::Big,
        )
        .unwrap();
        let reversed = TensorView::strided(
            &buffer,
            Dtype::Int16,
            &[5],
            &[-2],
            8,
            tensor_core::ByteOrder::Big,
        )
        .unwrap();
        let contiguous = TensorView::new(
            &buffer[..24],
            Dtype::Int32,
            &[6],
            tensor_core::ByteOrder::Big,
        )
        .unwrap();
        for view in [records, reversed, contiguous] {
            let mut streamed = Vec::new();
            stream_view(&view, &mut |run| {
                assert!(run.len() <= RUN_BYTES);
                streamed.extend_from_slice(run);
                Ok(())
            })
            .unwrap();
            assert_eq!(streamed, view.to_le_bytes().as_ref());
        }
    }

    #[test]
    fn canonical_bytes_are_exactly_the_tensor_and_bools_are_0_or_1() {
        let mut out = Vec::new();
        lazy(4)
            .write_canonical(&Limits::default(), &mut out)
            .unwrap();
        assert_eq!(out, [1, 1, 1, 1]);
        for wrong in [3, 5] {
            let e = lazy(wrong)
                .write_canonical(&Limits::default(), &mut Vec::new())
                .unwrap_err();
            assert!(e.to_string().contains("tensor \"t\" decoded to"), "{e}");
        }
    }
}
