"""Tensogram messages under the names of tensogram's own Python package.

Code written for ``import tensogram`` runs with ``from tensorkit import tensogram``: the same
functions, arguments and results — ``encode``, ``decode``, ``decode_metadata``,
``decode_descriptors``, ``decode_object``, ``decode_range``, ``scan``, ``iter_messages``,
``validate``, ``validate_file``, ``compute_hash``, ``TensogramFile`` (local files and URLs),
``AsyncTensogramFile``, ``convert_netcdf`` / ``to_netcdf`` (NetCDF-3 and -4 to messages
and back, without libnetcdf: ``__has_netcdf__`` is true) and ``convert_grib`` /
``convert_grib_buffer`` / ``to_grib`` (GRIB 1 and 2 to messages, and GRIB 2 back, without
ecCodes: ``__has_grib__`` is true).

>>> import numpy as np
>>> from tensorkit import tensogram
>>> t2m = np.linspace(270.0, 280.0, 6).reshape(2, 3)
>>> desc = {"type": "ntensor", "shape": [2, 3], "dtype": "float64",
...         "encoding": "simple_packing", "sp_bits_per_value": 16, "compression": "szip"}
>>> msg = tensogram.encode({"base": [{"name": "2t"}]}, [(desc, t2m)])
>>> meta, [(d, values)] = tensogram.decode(msg, verify_hash=True)
>>> meta["name"], d.encoding, bool(abs(values - t2m).max() < 1e-3)
('2t', 'simple_packing', True)

Where tensorkit differs from tensogram 0.24:

- An array whose byte order differs from the descriptor's ``byte_order`` is converted by
  value (tensogram stores its bytes as they are, under the descriptor's label).
- ``bitmask`` objects take and give ``bool`` arrays; ``complex64`` and ``complex128`` arrays
  are accepted.
- One mask method serves NaN, +Inf and -Inf (``nan_mask_method`` and its siblings must
  agree when more than one is given).
- Errors are tensorkit's exceptions: bad input and bad arguments raise ``ValueError``
  subclasses, as in tensogram; ``HashMismatchError`` and ``MissingHashError`` are
  ``IntegrityError`` subclasses.
"""

from __future__ import annotations

from ._async import AsyncTensogramFile
from ._codec import (
    compute_hash,
    compute_packing_params,
    DataObjectDescriptor,
    decode,
    decode_descriptors,
    decode_metadata,
    decode_object,
    decode_range,
    decode_with_masks,
    doctor,
    encode,
    encode_pre_encoded,
    HashMismatchError,
    IntegrityError,
    iter_messages,
    Message,
    Metadata,
    MissingHashError,
    scan,
    StreamingEncoder,
    validate,
    validate_file,
    WIRE_VERSION,
)
from ._file import TensogramFile
from ._grib import convert_grib, convert_grib_buffer, to_grib
from ._netcdf import convert_netcdf, to_netcdf

# What tensogram's feature probes ask: NetCDF is read and written without libnetcdf, GRIB
# without ecCodes.
__has_netcdf__ = True
__has_grib__ = True

__all__ = [
    "AsyncTensogramFile",
    "compute_hash",
    "compute_packing_params",
    "convert_grib",
    "convert_grib_buffer",
    "convert_netcdf",
    "DataObjectDescriptor",
    "decode",
    "decode_descriptors",
    "decode_metadata",
    "decode_object",
    "decode_range",
    "decode_with_masks",
    "doctor",
    "encode",
    "encode_pre_encoded",
    "HashMismatchError",
    "IntegrityError",
    "iter_messages",
    "Message",
    "Metadata",
    "MissingHashError",
    "scan",
    "StreamingEncoder",
    "TensogramFile",
    "to_grib",
    "to_netcdf",
    "validate",
    "validate_file",
    "WIRE_VERSION",
]
