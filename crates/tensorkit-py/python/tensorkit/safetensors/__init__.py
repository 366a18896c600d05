"""A drop-in for the ``safetensors`` package, laid out as safetensors 0.8 is.

Change ``safetensors`` to ``tensorkit.safetensors`` in an import and nothing else:

- ``tensorkit.safetensors.numpy``, ``.torch``, ``.flax``, ``.mlx`` and ``.paddle``:
  ``save``, ``save_file``,
  ``load``, ``load_file`` (and torch's ``save_model``, ``load_model`` and the helpers
  transformers imports), with the same signatures and results;
- here: ``safe_open(filename, framework, device="cpu", backend="mmap")`` and
  ``_safe_open_handle`` (the same over an open file object), ``serialize``,
  ``serialize_file``, ``deserialize``, ``TensorSpec``, ``SafetensorError`` and
  ``__version__`` (the safetensors release whose API this follows).

Files are written by tensorkit's safetensors writer: byte for byte what safetensors writes.
Every error raised here is a ``SafetensorError`` and also the ``TensorkitError`` of its kind
(a damaged header is both a ``SafetensorError`` and a ``MalformedError``).

``load``, ``load_file``, ``save`` and ``save_file`` at this level are the numpy ones, as
earlier tensorkit releases had them here.
"""

from ._api import (  # noqa: F401 (re-exports)
    _AS_SAFETENSOR,
    DTYPE_CODES,
    NoSuchTensorError,
    SafetensorError,
    TensorSpec,
    __version__,
    _safe_open_handle,
    check_metadata,
    deserialize,
    dtype_of,
    open_safetensors,
    raises_safetensor_errors,
    reference_options,
    safe_open,
    safetensor_error,
    serialize,
    serialize_file,
)

# The errors of each tensorkit kind that are also SafetensorErrors, named here (they pickle
# by this package's name).
globals().update({cls.__name__: cls for cls in _AS_SAFETENSOR.values()})

from .numpy import load, load_file, save, save_file

__all__ = [
    "SafetensorError",
    "TensorSpec",
    "_safe_open_handle",
    "__version__",
    "deserialize",
    "load",
    "load_file",
    "safe_open",
    "save",
    "save_file",
    "serialize",
    "serialize_file",
]
