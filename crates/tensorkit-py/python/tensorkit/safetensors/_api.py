"""What the safetensors drop-in package holds itself: errors, dtypes, `TensorSpec`, `serialize`,
`deserialize`, `safe_open` and the helpers its framework modules share (re-exported by
`tensorkit.safetensors`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

from .. import _errors
from .._errors import InvalidArgumentError, TensorkitError, UnsupportedError
from .._file import File, PathLike, open as _open_file, open_bytes

# The safetensors release whose Python API this package follows.
__version__ = "0.8.0"


# The package users import these from (and pickle them by): its errors are named there.
_PACKAGE = "tensorkit.safetensors"


class SafetensorError(TensorkitError):
    """What safetensors raises for a file it cannot read or tensors it cannot write."""

    __module__ = _PACKAGE
    kind = "error"


def _combined(kind: type[TensorkitError]) -> type[SafetensorError]:
    """The class of errors that are both a ``SafetensorError`` and tensorkit's ``kind``,
    defined at module level so that it pickles."""
    name = kind.__name__.replace("Error", "") + "SafetensorError"
    cls = type(name, (SafetensorError, kind), {"__module__": _PACKAGE, "kind": kind.kind})
    cls.__qualname__ = name
    globals()[name] = cls
    return cls


_AS_SAFETENSOR: dict[type, type[SafetensorError]] = {
    kind: _combined(kind)
    for kind in (getattr(_errors, n) for n in _errors.__all__)
    if kind not in (TensorkitError, _errors.IntegrityError)
}


class NoSuchTensorError(SafetensorError, KeyError):
    """A tensor name the file does not have: safetensors' error, and a ``KeyError`` as a
    mapping's missing key is."""

    __module__ = _PACKAGE

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def safetensor_error(e: TensorkitError) -> SafetensorError:
    """``e`` as a ``SafetensorError`` of the same kind and message."""
    if isinstance(e, SafetensorError):
        return e
    for kind, combined in _AS_SAFETENSOR.items():
        if type(e) is kind:
            return combined(*e.args)
    return SafetensorError(*e.args)


def raises_safetensor_errors(fn):
    """Decorates ``fn`` so that the tensorkit errors it raises are ``SafetensorError``s."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TensorkitError as e:
            raise safetensor_error(e) from e

    return wrapper


# tensorkit dtype -> safetensors' dtype code (the header's, and get_dtype's), from the Rust
# crate's own table; and every name a caller may give a dtype by (numpy's and torch's names,
# tensorkit's, safetensors' codes) -> tensorkit's.
from .. import _tensorkit as _native  # noqa: E402

DTYPE_CODES: dict[str, str] = dict(_native.safetensors_dtypes())
_DTYPE_NAMES: dict[str, str] = {
    **{name: name for name in DTYPE_CODES},
    **{code: name for name, code in DTYPE_CODES.items()},
    "float8_e4m3fn": "float8_e4m3",
    "float8_e8m0fnu": "float8_e8m0",
    "float4_e2m1fn_x2": "float4_e2m1",
    "float4_e2m1fn": "float4_e2m1",
    "float6_e2m3fn": "float6_e2m3",
    "float6_e3m2fn": "float6_e3m2",
}


def dtype_of(name: str) -> str:
    """tensorkit's name of a dtype given as numpy, torch, tensorkit or safetensors names it."""
    try:
        return _DTYPE_NAMES[name]
    except (KeyError, TypeError):
        raise SafetensorError(f"dtype {name!r}: safetensors has no such dtype") from None


class TensorSpec:
    """One tensor for :func:`serialize`, as safetensors 0.8 takes it:
    ``TensorSpec(dtype=..., shape=..., data_ptr=..., data_len=...)`` — the dtype by numpy's
    or torch's name (``"float32"``, ``"bfloat16"``; tensorkit's names and safetensors' codes
    too), the shape in elements (for ``float4_e2m1fn_x2`` the storage shape torch reports,
    its last dimension doubled here as safetensors does), and the bytes as a raw address and
    length, which the caller keeps alive while ``serialize`` runs. Beyond safetensors,
    ``data=`` takes any object exporting a C-contiguous buffer instead of an address, which
    can be checked. ``dtype`` reads as the header's code (``"F32"``)."""

    __slots__ = ("_buffer", "_dtype", "data_len", "data_ptr", "shape")

    def __init__(
        self,
        *,
        dtype: str,
        shape: Sequence[int],
        data_ptr: int | None = None,
        data_len: int | None = None,
        data: Any = None,
    ):
        self._dtype = dtype_of(dtype)
        self.shape = [int(d) for d in shape]
        if dtype == "float4_e2m1fn_x2" and self.shape:
            self.shape[-1] *= 2  # torch's storage shape holds two values a byte
        if data is not None:
            if data_ptr is not None or data_len is not None:
                raise TypeError("TensorSpec takes data_ptr and data_len, or data, not both")
            self._buffer = memoryview(data).cast("B")
            self.data_ptr, self.data_len = None, self._buffer.nbytes
        else:
            if data_ptr is None or data_len is None:
                raise TypeError("TensorSpec needs data_ptr and data_len (or data)")
            self.data_ptr, self.data_len = int(data_ptr), int(data_len)
            self._buffer = None

    @property
    def dtype(self) -> str:
        return DTYPE_CODES[self._dtype]

    def bytes(self) -> memoryview:
        """The tensor's bytes: the buffer given, or ``data_len`` bytes at ``data_ptr``."""
        if self._buffer is not None:
            return self._buffer
        if self.data_len < 0 or self.data_ptr < 0 or (self.data_ptr == 0 and self.data_len):
            raise SafetensorError(f"data_ptr {self.data_ptr} and data_len {self.data_len} name no memory")
        if self.data_len == 0:
            return memoryview(b"")
        import ctypes

        # The caller's memory, as safetensors reads it: the caller keeps it alive.
        return memoryview((ctypes.c_char * self.data_len).from_address(self.data_ptr)).cast("B")


def _specs(tensor_dict: Mapping[str, Any]) -> list[tuple[str, str, list[int], Any]]:
    """The native writer's entries for ``serialize``'s tensors, ``TensorSpec``s (a dict is a
    ``TypeError``, as in safetensors 0.8)."""
    if not isinstance(tensor_dict, Mapping):
        raise TypeError(f"argument 'tensor_dict': {type(tensor_dict).__name__!r} object is not a mapping")
    out = []
    for name, spec in tensor_dict.items():
        if not isinstance(spec, TensorSpec):
            raise TypeError(
                f"argument 'tensor_dict': {type(spec).__name__!r} object is not an instance of 'TensorSpec'"
            )
        out.append((name, spec._dtype, spec.shape, spec.bytes()))
    return out


def check_metadata(metadata: Mapping[str, str] | None) -> dict[str, str] | None:
    """safetensors' metadata, which maps str to str: refused otherwise (an
    ``InvalidArgumentError``, which every function here raises as a ``SafetensorError``
    that is also a ``ValueError``)."""
    if metadata is None:
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise InvalidArgumentError("safetensors metadata maps str to str")
    return dict(metadata)


def reference_options(metadata: Mapping[str, str] | None) -> dict[str, Any]:
    """The native writer's options for a file as safetensors writes it, byte for byte: the
    metadata checked, and no room left in the header (tensorkit's own writers leave 4 KiB
    there by default)."""
    from .._file import _options

    return _options(format="safetensors", metadata=check_metadata(metadata), header_reserve=0)


@raises_safetensor_errors
def serialize(tensor_dict: Mapping[str, Any], metadata: Mapping[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensor_dict`` (name -> ``TensorSpec``)."""
    return _native.serialize(_specs(tensor_dict), reference_options(metadata))


@raises_safetensor_errors
def serialize_file(
    tensor_dict: Mapping[str, Any], filename: PathLike, metadata: Mapping[str, str] | None = None
) -> None:
    """Writes ``tensor_dict`` (name -> ``TensorSpec``) to ``filename`` as safetensors,
    atomically."""
    _native.save(os.fspath(filename), _specs(tensor_dict), reference_options(metadata))


@raises_safetensor_errors
def deserialize(bytes: bytes) -> list[tuple[str, dict[str, Any]]]:  # noqa: A002 (safetensors' name)
    """The tensors of a safetensors file's bytes, in the order their data is stored:
    ``[(name, {"shape": [...], "dtype": "F32", "data": bytearray(...)})]``."""
    with open_bytes(bytes) as f:
        _require_safetensors(f)
        out = []
        for p in f._native.layout(None):
            buf = bytearray(p.nbytes)
            f._native.read_into(p.name, buf, packed=True)
            out.append((p.name, {"shape": list(p.shape), "dtype": DTYPE_CODES[p.dtype], "data": buf}))
        return out


def _require_safetensors(f: File) -> None:
    if f.format != "safetensors":
        fmt, path = f.format, f.path
        f.close()
        raise safetensor_error(UnsupportedError(f"{path}: a {fmt} file, not safetensors"))


def open_safetensors(filename: PathLike) -> File:
    """``filename`` opened, as safetensors opens it: ``FileNotFoundError`` when it is not
    there, a ``SafetensorError`` when it is not a safetensors file."""
    try:
        f = _open_file(os.fspath(filename))
    except _errors.IoError as e:
        if not os.path.exists(filename):
            raise FileNotFoundError(f"No such file or directory: {os.fspath(filename)}") from e
        raise safetensor_error(e) from e
    except TensorkitError as e:
        raise safetensor_error(e) from e
    _require_safetensors(f)
    return f


def _check_backend(backend: str) -> None:
    if backend not in ("mmap", "pread"):
        raise SafetensorError(f"backend {backend!r}: one of 'mmap', 'pread'")


# framework names safe_open takes -> the module that hands out its tensors.
_FRAMEWORKS = {
    "np": "numpy",
    "numpy": "numpy",
    "pt": "torch",
    "torch": "torch",
    "flax": "flax",
    "jax": "flax",
    "mlx": "mlx",
    "paddle": "paddle",
}


class safe_open:
    """``safe_open(filename, framework, device="cpu", backend="mmap")``: a lazy handle on a
    safetensors file whose tensors come out in ``framework``'s type: ``"pt"`` (torch),
    ``"np"`` (numpy), ``"flax"`` (jax), ``"mlx"`` or ``"paddle"``. ``device`` is where torch
    and paddle tensors land (``"cpu"``, ``"cuda"``, ``"cuda:1"``, an int); ``backend``
    ``"mmap"`` or ``"pread"``."""

    def __init__(self, filename: PathLike, framework: str, device: Any = "cpu", *, backend: str = "mmap"):
        _check_backend(backend)
        if framework not in _FRAMEWORKS:
            raise UnsupportedSafetensorError(
                f"framework {framework!r}: one of {', '.join(sorted(_FRAMEWORKS))}"
            )
        self._framework = _FRAMEWORKS[framework]
        if self._framework not in ("torch", "paddle") and device not in ("cpu", None):
            raise SafetensorError(f"device {device!r}: {self._framework} tensors are read to the cpu")
        self._device, self._backend = device, backend
        self._file: File | None = open_safetensors(filename)
        self._handler = _handler(self._framework)

    @property
    def _f(self) -> File:
        """The open file; once the ``with`` block has ended, safetensors' "File is closed"."""
        if self._file is None:
            raise SafetensorError("File is closed")
        return self._file

    def keys(self) -> list[str]:
        """Tensor names, sorted."""
        return sorted(self._f)

    def offset_keys(self) -> list[str]:
        """Tensor names in the order their data is stored."""
        return list(self._f)

    def metadata(self) -> dict[str, str] | None:
        """The header's ``__metadata__``, or None."""
        return self._f.metadata

    @raises_safetensor_errors
    def get_tensor(self, name: str) -> Any:
        """Tensor ``name`` (``SafetensorError``, also a ``KeyError``, when there is none)."""
        if name not in self._f:
            raise NoSuchTensorError(f"File does not contain tensor {name}")
        return self._handler.tensors(self._f, [name], self._device, self._backend)[name]

    @raises_safetensor_errors
    def get_tensors(self) -> dict[str, Any]:
        """Every tensor, by name, in the order their data is stored."""
        return self._handler.tensors(self._f, None, self._device, self._backend)

    def get_slice(self, name: str) -> _Slice:
        """Tensor ``name`` read lazily: ``get_shape()``, ``get_dtype()``, and ``[...]``
        (ints, ``start:stop:step`` slices, one ``...``, an empty list) to read part of it,
        refused as safetensors refuses it, with its messages."""
        if name not in self._f:
            raise NoSuchTensorError(f"File does not contain tensor {name}")
        return _Slice(self, name)

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class _safe_open_handle(safe_open):
    """``_safe_open_handle(f, framework, device="cpu", backend="mmap")``: :class:`safe_open`
    of an open file object (``f.name`` is opened; ``f`` must be a real file, with a
    ``fileno``), as safetensors 0.8 has it for fsspec's local files."""

    def __init__(self, f: Any, framework: str, device: Any = "cpu", *, backend: str = "mmap"):
        getattr(f, "fileno")  # an AttributeError for objects that are no file, as in safetensors
        super().__init__(f.name, framework, device, backend=backend)


class _Slice:
    """A tensor read lazily (``safe_open.get_slice``)."""

    def __init__(self, handle: safe_open, name: str):
        self._handle, self._name = handle, name

    def get_shape(self) -> list[int]:
        return list(self._handle._f.info(self._name)["shape"])

    def get_dtype(self) -> str:
        return DTYPE_CODES[self._handle._f.info(self._name)["dtype"]]

    @raises_safetensor_errors
    def __getitem__(self, key: Any) -> Any:
        h = self._handle
        # As safetensors 0.8: torch tensors of a mapped file, and paddle's, are sliced by
        # their framework (its indexing rules and errors); everything else by safetensors'
        # own slicer, whose rules and messages `_slice_key` follows.
        if not ((h._framework == "torch" and h._backend == "mmap") or h._framework == "paddle"):
            key = _slice_key(key, self.get_shape())
        return h._handler.part(h._f, self._name, key, h._device, h._backend)


def _slice_key(key: Any, shape: list[int]) -> tuple[Any, ...]:
    """``get_slice(...)[key]``'s key as safetensors 0.8 takes it — ints, positive-step
    slices, one ``...``, or an empty list — as ints and slices of explicit bounds, one per
    dimension it indexes; refused with safetensors' messages otherwise. (Negative slice
    bounds, on which safetensors fails with an ``OverflowError``, and a slice that runs
    backwards, which crashes it, follow Python's rules here.)"""
    if isinstance(key, list):
        if key:
            raise SafetensorError("Non empty lists are not implemented")
        return (slice(0, 0),)
    items = key if isinstance(key, tuple) else (key,)
    for i, item in enumerate(items):
        if not (item is Ellipsis or isinstance(item, slice) or _is_int(item)):
            raise SafetensorError(f"Unsupported slice index at position {i}: expected slice, int, or ellipsis")
        if isinstance(item, slice) and item.step is not None and int(item.step) <= 0:
            raise SafetensorError(f"Slice step must be a positive integer, got {item.step}")
    if sum(item is Ellipsis for item in items) > 1:
        raise SafetensorError("Only one ellipsis (...) is allowed in slice index")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        fill = max(len(shape) - (len(items) - 1), 0)
        items = items[:at] + (slice(None),) * fill + items[at + 1 :]

    def text(item: Any) -> str:
        if not isinstance(item, slice):
            return str(int(item))
        t = f"{'' if item.start is None else int(item.start)}:{'' if item.stop is None else int(item.stop)}"
        return t if item.step is None else f"{t}:{int(item.step)}"

    def failed(why: str) -> SafetensorError:
        where = ", ".join(text(item) for item in items)
        return SafetensorError(f"Error during slicing [{where}] with shape {list(shape)}: {why}")

    if len(items) > len(shape):
        raise failed("more slicing indexes than dimensions in tensor")
    out: list[Any] = []
    for d, (item, size) in enumerate(zip(items, shape)):
        bound = f"out of bounds for tensor dimension #{d} of size {size}"
        if not isinstance(item, slice):
            i = int(item)
            if i < 0:
                if i < -size:
                    raise SafetensorError(f"Invalid index {i} for dimension {d} of size {size}")
                i += size
            if i >= size:
                raise failed(f"index {i} {bound}")
            out.append(i)
            continue
        start = None if item.start is None else int(item.start)
        stop = None if item.stop is None else int(item.stop)
        if start is not None and start >= size:
            raise failed(f"index {start} {bound}")
        if stop is not None and stop > size:
            raise failed(f"index {stop - 1} {bound}")
        out.append(slice(*slice(start, stop, item.step).indices(size)))
    return tuple(out)


def _is_int(item: Any) -> bool:
    """An int as safetensors takes one (numpy's integers included, bools as 0 and 1)."""
    import operator

    try:
        operator.index(item)
    except TypeError:
        return False
    return True


def _handler(framework: str) -> Any:
    """The module that hands out ``framework``'s tensors (imported when first asked for)."""
    from importlib import import_module

    return import_module(f".{framework}", _PACKAGE)
