"""tensorkit: read, write, validate and convert tensor files — safetensors, BinTensors,
zTensor and Tensogram — as numpy arrays.

>>> import tensorkit
>>> with tensorkit.open("model.safetensors") as f:
...     w = f["encoder.w"]
"""

from . import _errors
from ._errors import (
    ChecksumMismatchError,
    IntegrityError,
    InvalidArgumentError,
    IoError,
    LimitExceededError,
    MalformedError,
    MissingHashError,
    TensorkitError,
    TruncatedError,
    UnsupportedError,
)
from ._edit import Change, EditReport, edit
from ._file import (
    File,
    Transfer,
    convert,
    migrate,
    open,
    open_bytes,
    save,
    serialize,
    validate,
)
from ._tensor import Tensor
from ._tensorkit import __version__, formats
from ._to_grib import to_grib

__all__ = [
    *_errors.__all__,
    "Change",
    "EditReport",
    "File",
    "Tensor",
    "Transfer",
    "__version__",
    "convert",
    "edit",
    "formats",
    "migrate",
    "open",
    "open_bytes",
    "save",
    "serialize",
    "to_grib",
    "validate",
]
