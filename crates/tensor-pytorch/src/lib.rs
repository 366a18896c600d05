//! PyTorch checkpoints read without running them. `torch.save` pickles its object — a state
//! dict, usually — and `torch.load` runs that pickle, which may call any function the file
//! names. This crate reads the pickle on a machine of its own that knows only the values
//! state dicts hold and torch's rebuild functions, builds descriptions of tensors instead of
//! calling anything, and refuses by name whatever else a file asks for (a global such as
//! `os.system`, an opcode that builds objects). Tensors are views of their storages, which
//! are the file's own bytes where the archive stores them as they are (torch always does).
//!
//! Layouts: the zip archive of `torch.save` since 1.6 (`pytorch_model.bin`, `.pt`, `.pth`),
//! and the legacy sequence of pickles and storages before it. The format is described in
//! `docs/formats/pytorch.md`.
//!
//! ```no_run
//! let bytes = std::fs::read("pytorch_model.bin")?;
//! let ckpt = tensor_pytorch::Checkpoint::open(&bytes, &tensor_core::ReadOptions::default())?;
//! for t in &ckpt.tensors {
//!     let view = ckpt.view_of(t)?;
//!     println!("{} {} {:?}", t.name, view.dtype(), view.shape());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod checkpoint;
mod error;
mod flatten;
pub mod pickle;

pub use checkpoint::{Checkpoint, Layout, TensorInfo, verify, view_over};
pub use error::{Error, Result};

/// PyTorch checkpoints, as the format contract describes them.
#[derive(Clone, Copy, Debug)]
pub struct PytorchFormat;

/// What a pickle of torch's legacy layout starts with: `PROTO 2`, then its magic number
/// as a `LONG1` of 10 bytes.
const LEGACY_HEAD: &[u8] = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";

impl tensor_dtype::Format for PytorchFormat {
    const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "pytorch",
        name: "PyTorch checkpoint",
        extensions: &["pt", "pth", "bin", "ckpt"],
        writes: false,
        reserved_keys: &[],
        write_choices: &[],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: false,
        unique_names: true,
        checks: tensor_dtype::Checks::Checksums,
        header_first: false,
        any_tensor: true,
    };

    type Error = Error;
    type Reader<'a> = Checkpoint<'a>;

    fn recognise(head: &[u8]) -> bool {
        head.starts_with(LEGACY_HEAD) || zip_of_torch(head)
    }

    fn open_with<'a>(
        bytes: &'a [u8],
        options: &tensor_core::ReadOptions,
    ) -> Result<Checkpoint<'a>> {
        Checkpoint::open(bytes, options)
    }

    /// The whole file: a zip's directory lies at its end and its pickle at its start.
    fn header_ranges(
        held: &dyn tensor_core::Held,
        _: &tensor_core::Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        Ok(held.missing(0..held.len()).into_iter().collect())
    }
}

impl<'a> tensor_dtype::TensorContainer<'a> for Checkpoint<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.tensors.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.tensors[i].name)
    }

    fn dtype(&self, i: usize) -> Result<tensor_dtype::Dtype> {
        Ok(self.tensors[i].dtype)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.tensors[i].shape)
    }

    fn view(&self, i: usize) -> Result<Option<tensor_dtype::TensorView<'a>>> {
        let t = &self.tensors[i];
        match self.storage(&t.storage) {
            Some(std::borrow::Cow::Borrowed(b)) => view_over(t, b, self.byte_order).map(Some),
            _ => Ok(None),
        }
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        let view = self.view_of(&self.tensors[i])?;
        tensor_dtype::container::copy_native(&view, dst).map_err(Error::from)
    }
}

/// Whether `head` is a zip archive whose first entry is one `torch.save` writes: its
/// `<folder>/data.pkl` (always first), or, from writers that order them otherwise, its
/// `byteorder`, `version` or `.format_version`.
fn zip_of_torch(head: &[u8]) -> bool {
    let Some(name) = tensor_zip::first_entry_name(head) else {
        return false;
    };
    let Some(slash) = name.iter().position(|&b| b == b'/') else {
        return false;
    };
    matches!(
        &name[slash + 1..],
        b"data.pkl" | b"byteorder" | b"version" | b".format_version" | b".data/version"
    )
}
