//! [`Format`]: a handle on one format of the registry, as every command, option and report
//! names it. What the format is comes from its crate ([`FormatInfo`]); what it does, from its
//! adapter in the registry ([`crate::registry`]).

use tensor_dtype::FormatInfo;

/// One format tensorkit reads (and perhaps writes): a handle on its registry entry,
/// compared by its id (`safetensors`, `ztensor-2`...). The built-in formats are constants
/// (`Format::SAFETENSORS`); formats defined outside tensorkit join with
/// [`register`](crate::register).
#[derive(Clone, Copy)]
pub struct Format {
    info: &'static FormatInfo,
}

impl Format {
    /// The handle of the format `info` describes.
    #[must_use]
    pub const fn of(info: &'static FormatInfo) -> Self {
        Format { info }
    }

    /// What the format's crate says it is: id, name, extensions, whether it writes, the
    /// attribute keys it reserves.
    #[must_use]
    pub const fn info(self) -> &'static FormatInfo {
        self.info
    }

    /// The id used in JSON output and by `--to`.
    #[must_use]
    pub const fn id(self) -> &'static str {
        self.info.id
    }

    /// The usual file extension.
    #[must_use]
    pub const fn extension(self) -> &'static str {
        self.info.extensions[0]
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Format {}

impl std::hash::Hash for Format {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Format({})", self.id())
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// The built-in formats, each behind its feature.
impl Format {
    /// Hugging Face safetensors.
    #[cfg(feature = "safetensors")]
    pub const SAFETENSORS: Format =
        Format::of(&<tensor_safetensors::SafetensorsFormat as tensor_dtype::Format>::INFO);
    /// BinTensors, the released header layout.
    #[cfg(feature = "bintensors")]
    pub const BINTENSORS: Format =
        Format::of(&<tensor_bintensors::BintensorsFormat as tensor_dtype::Format>::INFO);
    /// BinTensors, the pre-release header layout.
    #[cfg(feature = "bintensors")]
    pub const BINTENSORS_LEGACY: Format = Format::of(&tensor_bintensors::BintensorsFormat::LEGACY);
    /// zTensor 0.1 (`ZTEN0001`).
    #[cfg(feature = "ztensor")]
    pub const ZTENSOR_0_1: Format =
        Format::of(&<tensor_ztensor::Ztensor01Format as tensor_dtype::Format>::INFO);
    /// zTensor 1.x (`ZTEN1000`); read only.
    #[cfg(feature = "ztensor")]
    pub const ZTENSOR_1: Format =
        Format::of(&<tensor_ztensor::Ztensor1Format as tensor_dtype::Format>::INFO);
    /// zTensor 2, the current container.
    #[cfg(feature = "ztensor")]
    pub const ZTENSOR_2: Format =
        Format::of(&<tensor_ztensor::Ztensor2Format as tensor_dtype::Format>::INFO);
    /// Tensogram v3 (`.tgm`): messages of objects.
    #[cfg(feature = "frame")]
    pub const TENSOGRAM: Format =
        Format::of(&<tensor_frame::TensogramFormat as tensor_dtype::Format>::INFO);
    /// GRIB editions 1 and 2 (read only): one tensor per field.
    #[cfg(feature = "grib")]
    pub const GRIB: Format = Format::of(&<tensor_grib::GribFormat as tensor_dtype::Format>::INFO);
    /// NetCDF: NetCDF-3 read and written.
    #[cfg(feature = "netcdf")]
    pub const NETCDF: Format =
        Format::of(&<tensor_netcdf::NetcdfFormat as tensor_dtype::Format>::INFO);
    /// NumPy `.npy` files, read and written.
    #[cfg(feature = "numpy")]
    pub const NPY: Format = Format::of(&<tensor_numpy::NpyFormat as tensor_dtype::Format>::INFO);
    /// NumPy `.npz` archives, read and written.
    #[cfg(feature = "numpy")]
    pub const NPZ: Format = Format::of(&<tensor_numpy::NpzFormat as tensor_dtype::Format>::INFO);
    /// Plain HDF5 files of datasets (h5py's, Keras' weights), read.
    #[cfg(feature = "hdf5")]
    pub const HDF5: Format = Format::of(&<tensor_hdf5::Hdf5Format as tensor_dtype::Format>::INFO);
    /// Keras 3 archives (`.keras`), read.
    #[cfg(feature = "hdf5")]
    pub const KERAS: Format = Format::of(&tensor_keras::KerasFormat::INFO);
    /// ONNX models' initializers, read.
    #[cfg(feature = "onnx")]
    pub const ONNX: Format = Format::of(&tensor_onnx::OnnxFormat::INFO);
    /// PyTorch checkpoints, read without running their pickles.
    #[cfg(feature = "pytorch")]
    pub const PYTORCH: Format =
        Format::of(&<tensor_pytorch::PytorchFormat as tensor_dtype::Format>::INFO);
    /// GGUF (llama.cpp): versions 2 and 3 read, 3 written.
    #[cfg(feature = "gguf")]
    pub const GGUF: Format = Format::of(&<tensor_gguf::GgufFormat as tensor_dtype::Format>::INFO);
}
