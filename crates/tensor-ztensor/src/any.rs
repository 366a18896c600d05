//! One entry point for every zTensor generation.

use crate::container::{Container, Generation, detect};
use crate::error::{Class, Error, Result};
use crate::read::{ChecksumStatus, Decoded};
use crate::v0_1::ZTensor;
use tensor_core::ByteOrder;
use tensor_core::ReadOptions;
use tensor_dtype::{Dtype, TensorView};

/// An open zTensor file of any generation, dispatched on its first 8 bytes.
#[derive(Debug)]
pub enum AnyZTensor<'a> {
    /// zTensor 0.1.
    V0_1(ZTensor<'a>),
    /// zTensor 1.x or 2.
    Later(Container<'a>),
}

impl<'a> AnyZTensor<'a> {
    /// Opens `bytes` with default options.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Opens `bytes`, whichever generation they are.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        match detect(bytes) {
            Some(Generation::V1 | Generation::V2) => {
                Ok(AnyZTensor::Later(Container::open_with(bytes, options)?))
            }
            // 0.1, or too short to tell: the 0.1 reader says what is wrong (truncated or foreign).
            _ => Ok(AnyZTensor::V0_1(ZTensor::open_with(bytes, options)?)),
        }
    }

    /// The generation.
    #[must_use]
    pub fn generation(&self) -> Generation {
        match self {
            AnyZTensor::V0_1(_) => Generation::V0_1,
            AnyZTensor::Later(c) => c.generation(),
        }
    }

    /// The number of tensors (objects).
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            AnyZTensor::V0_1(f) => f.entries().len(),
            AnyZTensor::Later(c) => c.objects().len(),
        }
    }

    /// Whether the file holds no tensors.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tensor `i`'s name.
    #[must_use]
    pub fn name(&self, i: usize) -> &str {
        match self {
            AnyZTensor::V0_1(f) => &f.entries()[i].name,
            AnyZTensor::Later(c) => &c.objects()[i].name,
        }
    }

    /// The position of the tensor called `name`.
    #[must_use]
    pub fn position(&self, name: &str) -> Option<usize> {
        (0..self.len()).find(|&i| self.name(i) == name)
    }

    /// Tensor `i`, dense (zero-copy where the bytes allow).
    pub fn read(&self, i: usize) -> Result<Decoded<'a>> {
        match self {
            AnyZTensor::V0_1(f) => f.read(i),
            AnyZTensor::Later(c) => c.read(i),
        }
    }

    /// Tensor `i` as [`read`](Self::read) gives it, its checksum or digest not checked
    /// whatever the options say: a zero-copy view of a raw dense tensor costs nothing however
    /// large it is. [`verify`](Self::verify) checks it when asked.
    pub fn read_unverified(&self, i: usize) -> Result<Decoded<'a>> {
        match self {
            AnyZTensor::V0_1(f) => f.read_unverified(i),
            AnyZTensor::Later(c) => c.read_unverified(i),
        }
    }

    /// Whether the file was opened to check checksums and digests (any [`Verify`](crate::Verify)
    /// but `Never`).
    #[must_use]
    pub fn verifies(&self) -> bool {
        match self {
            AnyZTensor::V0_1(f) => f.options.verify != crate::Verify::Never,
            AnyZTensor::Later(c) => c.checks(),
        }
    }

    /// Checks tensor `i`'s checksum (0.1) or its parts' digests (1.x, 2); tensors without
    /// one pass.
    pub fn verify(&self, i: usize) -> Result<()> {
        match self {
            AnyZTensor::V0_1(f) => f.verify(i).map(|_| ()),
            AnyZTensor::Later(c) => c.verify(i),
        }
    }

    /// Tensor `i`'s elements in runs of at most `run` bytes (dense tensors; see
    /// [`ZTensor::read_chunks`] and [`Container::read_chunks`](crate::Container::read_chunks)).
    /// Returns the byte order of the runs, or `None`, having handed out nothing, for tensors
    /// that must be read whole.
    pub fn read_chunks(
        &self,
        i: usize,
        run: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<Option<ByteOrder>> {
        match self {
            AnyZTensor::V0_1(f) => f.read_chunks(i, run, sink),
            AnyZTensor::Later(c) => Ok(c.read_chunks(i, run, sink)?.then_some(ByteOrder::Little)),
        }
    }

    /// A reader of tensor `i` alone over `bytes`, which hold the file from offset `start` on
    /// (see [`ZTensor::window`] and [`Container::window`]): the parsed index or manifest is
    /// shared, not parsed again.
    pub fn window<'w>(&self, i: usize, bytes: &'w [u8], start: u64) -> Result<AnyZTensor<'w>>
    where
        'a: 'w,
    {
        Ok(match self {
            AnyZTensor::V0_1(f) => AnyZTensor::V0_1(f.window(i, bytes, start)?),
            AnyZTensor::Later(c) => AnyZTensor::Later(c.window(i, bytes, start)?),
        })
    }

    /// What the reader tolerated but a conforming writer never produces (zTensor 2 reads
    /// the padding between blobs to tell).
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        match self {
            AnyZTensor::V0_1(_) => Vec::new(),
            AnyZTensor::Later(c) => c.warnings(),
        }
    }

    /// Checks every checksum and digest in the file; returns how many were verified.
    pub fn verify_all(&self) -> Result<usize> {
        let mut n = 0;
        match self {
            AnyZTensor::V0_1(f) => {
                for i in 0..f.entries().len() {
                    if f.verify(i)? == ChecksumStatus::Verified {
                        n += 1;
                    }
                }
            }
            AnyZTensor::Later(c) => {
                for o in c.objects() {
                    for p in &o.parts {
                        c.part_bytes(o, p)?;
                        n += usize::from(p.digest.is_some());
                    }
                }
            }
        }
        Ok(n)
    }
}

impl<'a> tensor_dtype::TensorContainer<'a> for AnyZTensor<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        AnyZTensor::len(self)
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(AnyZTensor::name(self, i))
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        match self {
            AnyZTensor::V0_1(f) => f.dtype(i),
            AnyZTensor::Later(c) => c.dtype(i),
        }
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        match self {
            AnyZTensor::V0_1(f) => f.shape(i),
            AnyZTensor::Later(c) => c.shape(i),
        }
    }

    /// Raw dense tensors only; reading one checks what [`AnyZTensor::read`] checks
    /// (its checksum or digest, as the options say).
    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        match self {
            AnyZTensor::V0_1(f) => f.view(i),
            AnyZTensor::Later(c) => c.view(i),
        }
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        match self {
            AnyZTensor::V0_1(f) => f.read_into(i, dst),
            AnyZTensor::Later(c) => c.read_into(i, dst),
        }
    }
}

impl Error {
    /// Whether this error means the bytes are not a zTensor file at all.
    #[must_use]
    pub fn is_bad_magic(&self) -> bool {
        self.class() == Some(Class::BadMagic)
    }
}
