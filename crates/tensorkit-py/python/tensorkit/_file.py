"""Open files as read-only mappings of name -> numpy array, and writing arrays."""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from . import _tensorkit
from ._dtypes import array_of as _numpy
from ._dtypes import from_numpy, to_numpy
from ._errors import InvalidArgumentError
from ._mapped import mapped

PathLike = str | os.PathLike[str]

_MISSING = object()


def _paths(path: PathLike | list[PathLike]) -> list[str]:
    if isinstance(path, (list, tuple)):
        return [os.fspath(p) for p in path]
    return [os.fspath(path)]


class Transfer(NamedTuple):
    """What reading a remote file has cost so far (:attr:`File.transfer`)."""

    requests: int
    """Requests made (retries inside one request not counted)."""
    bytes: int
    """Bytes of the object received."""


# Framework adapters (``tensorkit.torch``) register themselves here when imported: this
# module, which they build on, never imports them. A method that hands tensors to a
# framework imports its adapter by name the first time it is asked for.
_FRAMEWORKS: dict[str, Any] = {}


def register_framework(name: str, adapter: Any) -> None:
    """Registers ``adapter``, a module with ``load(file, names, device=, backend=)``, as how
    tensors go to framework ``name``."""
    _FRAMEWORKS[name] = adapter


def _framework(name: str) -> Any:
    if name not in _FRAMEWORKS:
        import importlib

        importlib.import_module(f"{__package__}.{name}")  # registers itself
    return _FRAMEWORKS[name]


class File(Mapping[str, np.ndarray]):
    """An open tensor file of any format: a read-only mapping of tensor name -> array.

    ``f[name]`` is a zero-copy, read-only view of the memory-mapped file when the tensor is
    stored raw in the machine's byte order (it keeps the file mapped while it lives), and a
    freshly decoded, writable array otherwise.
    """

    def __init__(
        self,
        native: _tensorkit.File,
        reopen: tuple[list[str], dict[str, Any]] | None,
        raw: bool = False,
    ):
        self._native = native
        self._reopen = reopen
        self._raw = raw
        self._metadata: Any = _MISSING
        self._private: dict[int, Any] = {}

    # The mapping.
    def __getitem__(self, name: str) -> np.ndarray:
        if not isinstance(name, str):
            raise KeyError(name)
        if self._raw:
            blocks = self._native.blocks(name)  # KeyError when there is no such tensor
            if blocks is not None:
                return np.frombuffer(blocks.data, dtype=np.uint8).reshape(blocks.shape)
        native = self._native.tensor(name)  # KeyError when there is no such tensor
        return mapped(self, name, _numpy(native), native.dtype)

    def __iter__(self) -> Iterator[str]:
        return iter(self._native.keys())

    def __len__(self) -> int:
        return len(self._native)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._native

    def get(self, name: str, default: Any = None, *, out: np.ndarray | None = None) -> Any:
        """The array called ``name`` (``default`` when there is none). With ``out``, decodes
        into that array — C-contiguous, writable, of the tensor's dtype and shape — and
        returns it."""
        if out is None:
            try:
                return self[name]
            except KeyError:
                return default
        if name not in self:
            return default
        info = self._native.describe(name)
        dtype, shape = info.dtype, info.shape
        want = to_numpy(dtype)
        if not isinstance(out, np.ndarray):
            raise InvalidArgumentError(f"out must be a numpy array, not {type(out).__name__}")
        if out.dtype != want or out.shape != tuple(shape):
            raise InvalidArgumentError(
                f"tensor {name!r} is {dtype} {list(shape)}; out is {out.dtype} {list(out.shape)}"
            )
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise InvalidArgumentError("out must be C-contiguous and writable")
        self._native.read_into(name, _bytes_of(out))
        return out

    def load(self, names: Iterable[str] | None = None, *, threads: int = 0) -> dict[str, np.ndarray]:
        """Every tensor (or those in ``names``) as arrays, as ``f[name]`` gives each — decoded
        side by side on ``threads`` threads (0, the default: every core; 1: this thread),
        without the GIL. A tensor stored as numpy holds it is a read-only view of the file;
        the others are new arrays. The decoded tensors together must fit the file's
        ``max_memory``. A name the file does not have raises ``KeyError``."""
        if names is not None:
            names = list(names)
            for name in names:
                if not isinstance(name, str):
                    raise KeyError(name)
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
            raise InvalidArgumentError(f"threads must be a whole number of 0 or more, not {threads!r}")
        if self._raw:
            return {name: self[name] for name in (self if names is None else names)}
        return {name: mapped(self, name, _numpy(a), a.dtype) for name, a in self._native.tensors(names, threads)}

    def tensor(self, name: str) -> Any:
        """Tensor ``name`` as a handle (``tensorkit.Tensor``): dtype, shape, and DLPack for
        ``torch.from_dlpack``, ``jax.numpy.from_dlpack`` and ``numpy.from_dlpack``,
        without a copy for every dtype they share."""
        from ._tensor import Tensor

        return Tensor(self, name)

    def _private_map(self, file_no: int) -> Any:
        """A private copy-on-write mapping of mapped file ``file_no`` (one per file)."""
        if file_no not in self._private:
            self._private[file_no] = self._native.private_map(file_no)
        return self._private[file_no]

    def to_torch(self, name: str, device: Any = "cpu", *, backend: str = "mmap") -> Any:
        """Tensor ``name`` as a torch tensor on ``device``, as
        :func:`tensorkit.torch.load_file` gives it (on the CPU over a private mapping of the
        file when stored raw: writable, no copy)."""
        return _framework("torch").load(self, [name], device=device, backend=backend)[name]

    def to_jax(self, name: str) -> Any:
        """Tensor ``name`` as a jax array on the CPU, through DLPack (jax copies only what
        is not aligned as it needs)."""
        from jax import numpy as jnp

        return jnp.from_dlpack(self.tensor(name))

    def verify(self, name: str | None = None) -> None:
        """Checks tensor ``name`` (every tensor when None) against the checksums or digests
        the file keeps for it; raises ``ChecksumMismatchError`` on a mismatch. Copies (``get(...,
        out=...)``, decoded arrays) are checked as they are made; zero-copy arrays, which
        cost nothing however large the tensor, are not until this is called."""
        if name is not None and name not in self:
            raise KeyError(name)
        self._native.verify(name)

    # What the file says.
    @property
    def format(self) -> str:
        """The format's id: ``safetensors``, ``bintensors``, ``ztensor-2``, ``tensogram``..."""
        return self._native.format

    @property
    def path(self) -> str:
        """Where the file was opened from."""
        return self._native.path

    @property
    def transfer(self) -> Transfer | None:
        """For a file opened from a URL, what reading it has cost so far: requests made and
        object bytes received (the header and every tensor fetched). ``None`` for a local
        file."""
        t = self._native.transfer
        return None if t is None else Transfer(*t)

    @property
    def not_read(self) -> list[tuple[str, str]]:
        """What the file holds that no tensor can — a NetCDF-4 string, compound, enum or
        variable-length variable —, left out of its tensors: ``(name, why)`` pairs. Asking
        for one by name raises ``TensorkitError`` of kind ``unsupported``, saying why."""
        return self._native.not_read

    def strings(self, name: str) -> np.ndarray | None:
        """The values of the string variable ``name`` (a NetCDF-4 variable of
        variable-length strings, listed in ``not_read``) as a numpy array of ``str`` objects
        of its shape, as netCDF4-python gives them; ``None`` for any other name."""
        got = self._native.strings(name)
        if got is None:
            return None
        shape, values = got
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)

    @property
    def metadata(self) -> dict[str, Any] | None:
        """File-level metadata (``None`` when the file has none)."""
        if self._metadata is _MISSING:
            self._metadata = self._native.metadata()
        return self._metadata

    def info(self, name: str) -> dict[str, Any]:
        """What the file says about tensor ``name``, without decoding it: dtype, shape,
        attributes, encoding (``"none"`` when stored as it is), location, bytes, and whether
        ``f[name]`` is a zero-copy view."""
        native = self._native.describe(name)
        if self._raw and (blocks := self._native.blocks(name)) is not None:
            ggml_type, byte_shape = blocks.ggml_type, blocks.shape
            return {
                "name": name,
                "dtype": "uint8",
                "shape": tuple(byte_shape),
                "attributes": native.attributes,
                "encoding": ggml_type,
                "element_shape": tuple(native.shape),
                "location": dict(native.location),
                "nbytes": int(np.prod(byte_shape)),
                "zero_copy": True,
            }
        return {
            "name": name,
            "dtype": native.dtype,
            "shape": tuple(native.shape),
            "attributes": native.attributes,
            "encoding": native.encoding or "none",
            "location": dict(native.location),
            "nbytes": native.nbytes,
            "zero_copy": native.zero_copy,
        }

    # Lifetime.
    def close(self) -> None:
        """Releases the file (its map lives on while arrays made from it do)."""
        self._native.close()

    @property
    def closed(self) -> bool:
        return self._native.closed

    def __enter__(self) -> File:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self):
        if self._reopen is None:
            raise TypeError("a file opened from bytes cannot be pickled")
        paths, options = self._reopen
        return (_reopen, (paths, {**options, "raw": self._raw}))

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self)} tensors"
        return f"<tensorkit.File {self.path!r} {self.format if not self.closed else ''} {state}>"


def _reopen(paths: list[str], options: dict[str, Any]) -> File:
    return open(paths, **options)


def open(
    path: PathLike | list[PathLike],
    *,
    verify: bool = True,
    strict: bool = False,
    max_memory: int | str | None = None,
    max_ratio: int | None = None,
    storage_options: Mapping[str, str] | None = None,
    raw: bool = False,
    grib_index: bool = True,
    timeout: float | None = None,
) -> File:
    """Opens a tensor file, the format told by its content: safetensors, BinTensors, zTensor
    (0.1, 1.x, 2), Tensogram, GRIB or GGUF; a Hugging Face ``*.index.json`` opens its shards
    as one file, and a list of paths opens them as one (names must not repeat).

    A GGUF file's quantized tensors (``Q4_K``, ``Q8_0``...) read as float32, dequantized as
    gguf-py dequantizes them; with ``raw=True`` they read as their stored blocks, a
    read-only ``uint8`` view of the file shaped ``[..., bytes per row]`` (``info(name)``
    gives the ggml type as ``encoding`` and the element shape).

    ``path`` may be a URL: ``https://``, ``s3://``, ``gs://`` and ``az://`` objects are read
    through range requests (the header first, each tensor when it is indexed), ``file://``
    URLs are local files. Credentials and endpoints come from the usual environment variables
    (``AWS_*``, ``GOOGLE_*``, ``AZURE_*``) and ``storage_options``, object_store's
    configuration keys (``{"aws_endpoint": "http://127.0.0.1:9000", "aws_region": ...}``).
    A remote GRIB file's messages are found from an inventory beside it when there is one
    (a wgrib2 ``.idx`` or an ECMWF ``.index``: every message's headers in one round of
    requests), else message by message; ``grib_index=False`` skips looking for one.
    ``timeout`` is the longest, in seconds, one operation on a URL may take, every request
    and retry in it together (opening and listing it, or one read of tensor bytes; 60 by
    default); a request that receives nothing for 20 s fails and is retried.

    ``verify`` checks stored checksums and hashes; ``strict`` refuses what a reference
    tolerates but no conforming writer produces; ``max_memory`` (bytes one tensor may decode
    to, an int or a size such as ``"8GiB"``) and ``max_ratio`` (decoded : stored bytes; by default 32768 beyond the first 64 MiB
    any tensor may decode to, given it applies from the first byte) bound what a hostile
    file can ask for.
    """
    paths = _paths(path)
    options = {
        "verify": verify,
        "strict": strict,
        "max_memory": _size(max_memory),
        "max_ratio": max_ratio,
        "storage_options": sorted((str(k), str(v)) for k, v in (storage_options or {}).items())
        or None,
        "grib_index": grib_index,
        "timeout": timeout,
    }
    return File(_tensorkit.open(paths, **options), (paths, options), raw)


def open_bytes(data: bytes) -> File:
    """Opens a whole file held in memory (copied)."""
    return File(_tensorkit.open_bytes(data), None)


def _bytes_of(a: np.ndarray) -> memoryview:
    """The bytes of a C-contiguous array, as a one-dimensional byte buffer."""
    return memoryview(a.reshape(-1).view(np.uint8))


def _entries(tensors: Mapping[str, Any]) -> list[tuple[str, str, list[int], memoryview]]:
    """(name, dtype, shape, bytes) for each array: C order, the machine's byte order."""
    if not isinstance(tensors, Mapping):
        raise InvalidArgumentError("tensors must be a mapping of name -> array")
    out = []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise InvalidArgumentError(f"tensor names must be str, not {type(name).__name__}")
        a = np.asarray(value)
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        if not a.flags.c_contiguous:
            a = a.copy(order="C")  # (np.ascontiguousarray would make a scalar 1-d)
        out.append((name, from_numpy(a.dtype), list(a.shape), _bytes_of(a)))
    return out


def _size(value: int | str | None) -> int | None:
    """A byte count: an int, or text like ``"5GB"`` (powers of 1000) or ``"2MiB"`` (of 1024),
    read as the command line reads it."""
    if value is None or isinstance(value, int):
        return value
    return _tensorkit.parse_size(value)


def _options(
    *,
    format: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    pipeline: str | None = None,
    alignment: int | str | None = None,
    header_reserve: int | str | None = None,
    max_shard_size: int | str | None = None,
    fsync: bool = False,
    allow_extensions: bool = False,
    canonical_nan: bool = False,
    quantize: str | None = None,
    dequantize: str | None = None,
    duplicates: str = "error",
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    unpack: bool = False,
    split_by: str = "file",
) -> dict[str, Any]:
    """The write options of :func:`save`, :func:`serialize` and :func:`convert`, as the native
    module takes them: one dict, every key present."""
    if duplicates not in ("error", "suffix"):
        raise InvalidArgumentError(f"duplicates={duplicates!r}: one of 'error', 'suffix'")
    if format == "grib2":
        format = "grib"
    return {
        "attributes": None if attributes is None else {n: dict(a) for n, a in attributes.items()},
        "format": format,
        "metadata": None if metadata is None else dict(metadata),
        "pipeline": pipeline,
        "allow_extensions": allow_extensions,
        "canonical_nan": canonical_nan,
        "alignment": _size(alignment),
        "header_reserve": _size(header_reserve),
        "max_shard_size": _size(max_shard_size),
        "fsync": fsync,
        "quantize": quantize,
        "dequantize": dequantize,
        "rename_duplicates": duplicates == "suffix",
        "unpack": unpack,
        "split_by": split_by,
    }


def save(
    path: PathLike,
    tensors: Mapping[str, Any],
    *,
    metadata: Mapping[str, Any] | None = None,
    format: str | None = None,
    pipeline: str | None = None,
    alignment: int | str | None = None,
    max_shard_size: int | str | None = None,
    fsync: bool = False,
    allow_extensions: bool = False,
    canonical_nan: bool = False,
    quantize: str | None = None,
    header_reserve: int | str | None = None,
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    grib_keys: Mapping[str, Any] | None = None,
) -> list[str]:
    """Writes ``tensors`` (name -> array) to ``path`` atomically, in ``format`` or the one
    the extension names (``.safetensors``, ``.bt``, ``.zt``, ``.tgm``, ``.gguf``, ``.grib2``).
    ``attributes`` gives tensors attributes by name (a zTensor object's attributes, a
    Tensogram object's ``base`` entry, a GRIB field's keys). ``grib_keys`` (GRIB,
    ``format="grib2"``) are the keys every field is written with — ``shortName`` or
    ``paramId``, ``typeOfLevel`` and ``level``, ``dataDate``, ``dataTime``, ``stepRange``,
    ``gridType`` with its keys (``Ni``, ``Nj``, the corners, the increments; ``N`` and ``pl``
    for Gaussian grids), ``mars`` keys, ``packingType`` and ``bitsPerValue`` — or, keyed by
    tensor name, each field's own; a field's ``attributes`` win over them. ``pipeline``
    names GRIB's packing (``"ccsds"``, ``"simple:16"``...), or NetCDF's format and filters
    (``"netcdf4,shuffle,deflate:4"``, ``"cdf5"``: see :func:`convert`). ``quantize``
    (GGUF only: ``"Q8_0"``, ``"Q4_0"``...) quantizes the weight matrices as gguf-py does,
    byte for byte. ``pipeline`` chooses
    Tensogram's stages (``"simple_packing:16,szip"``); ``allow_extensions`` also writes what
    only tensorkit reads or tensogram's validation flags, as ``--allow-extensions`` does
    (packed float32, NaN and ±Inf kept bit for bit instead of in masks);
    ``canonical_nan`` stores a NaN with its sign bit set or another payload as the quiet NaN
    tensogram's masks give back, as ``--canonical-nan`` does (without either, such a NaN is
    an error naming its tensor and element); ``alignment``
    zTensor 2's blob alignment; ``header_reserve`` (safetensors and GGUF: ``"64KiB"``)
    leaves room in the header so that later :func:`edit` calls fit in place (by default 4 KiB
    of spaces in safetensors and none in GGUF; ``0`` writes the bytes safetensors writes, as
    :mod:`tensorkit.safetensors` does);
    ``max_shard_size`` writes a Hugging Face shard set;
    ``fsync`` syncs each file to disk before it is renamed into place, so that it survives a
    power failure (without it the file still appears only when complete). Returns what the
    format could not hold and left out."""
    return _tensorkit.save(
        os.fspath(path),
        _entries(tensors),
        _options(
            format=format,
            metadata=metadata,
            pipeline=pipeline,
            alignment=alignment,
            header_reserve=header_reserve,
            max_shard_size=max_shard_size,
            fsync=fsync,
            allow_extensions=allow_extensions,
            canonical_nan=canonical_nan,
            quantize=quantize,
            attributes=_with_grib_keys(tensors, attributes, grib_keys),
        ),
    )


def _with_grib_keys(
    tensors: Mapping[str, Any],
    attributes: Mapping[str, Mapping[str, Any]] | None,
    grib_keys: Mapping[str, Any] | None,
) -> dict[str, dict[str, Any]] | None:
    """Each tensor's attributes with the GRIB keys it is written with: ``grib_keys`` keyed by
    tensor name when every key is a tensor's name and every value a mapping, shared by all
    tensors otherwise; the tensor's own ``attributes`` win."""
    if grib_keys is None:
        return None if attributes is None else {n: dict(a) for n, a in attributes.items()}
    per_tensor = bool(grib_keys) and all(k in tensors and isinstance(v, Mapping) for k, v in grib_keys.items())
    out: dict[str, dict[str, Any]] = {}
    for name in tensors:
        keys = dict(grib_keys.get(name, {})) if per_tensor else dict(grib_keys)
        keys.update((attributes or {}).get(name, {}))
        out[name] = keys
    return out


def serialize(
    tensors: Mapping[str, Any],
    format: str,
    *,
    metadata: Mapping[str, Any] | None = None,
    pipeline: str | None = None,
    alignment: int | str | None = None,
    allow_extensions: bool = False,
    canonical_nan: bool = False,
    quantize: str | None = None,
    header_reserve: int | str | None = None,
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    grib_keys: Mapping[str, Any] | None = None,
) -> bytes:
    """The bytes of a ``format`` file holding ``tensors`` (options as in :func:`save`)."""
    return _tensorkit.serialize(
        _entries(tensors),
        _options(
            format=format,
            metadata=metadata,
            pipeline=pipeline,
            alignment=alignment,
            allow_extensions=allow_extensions,
            canonical_nan=canonical_nan,
            quantize=quantize,
            header_reserve=header_reserve,
            attributes=_with_grib_keys(tensors, attributes, grib_keys),
        ),
    )


def _grib_extensions() -> tuple[str, ...]:
    """The names a GRIB file goes by, as the format registry lists them."""
    return tuple("." + e for f in _tensorkit.formats() if f["id"] == "grib" for e in f["extensions"])


def convert(
    src: PathLike,
    dst: PathLike,
    *,
    format: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    pipeline: str | None = None,
    alignment: int | str | None = None,
    max_shard_size: int | str | None = None,
    fsync: bool = False,
    allow_extensions: bool = False,
    canonical_nan: bool = False,
    quantize: str | None = None,
    dequantize: str | None = None,
    header_reserve: int | str | None = None,
    duplicates: str = "error",
    unpack: bool = False,
    split_by: str = "file",
) -> list[str]:
    """Converts ``src`` (any format) to ``dst``, as ``tensorkit convert`` does, keeping
    names, dtypes, shapes, values and metadata (``fsync``, ``allow_extensions``,
    ``quantize`` and ``header_reserve`` as in :func:`save`). A GGUF file's quantized tensors
    become float32 unless ``dequantize`` says ``"float16"``, ``"bfloat16"`` or ``"raw"`` (their blocks as
    ``uint8``, the types recorded under ``gguf.raw_blocks`` in the metadata, blocks again
    when converted back to GGUF). Tensors that share a name (a Tensogram file holding the
    same message twice) are refused, naming them, unless ``duplicates="suffix"`` renames
    every repeat (``name~m<message>``, or ``name~<n>``). ``unpack=True`` unpacks CF's packed
    variables (NetCDF, or files converted from it) as ``--unpack`` does: ``scale_factor`` and
    ``add_offset`` applied, fill and missing values as NaN. ``split_by`` (Tensogram output)
    groups tensors into messages as ``--split-by`` does: ``"file"`` (one message),
    ``"variable"`` (one per tensor) or ``"record"`` (one per record of a NetCDF file's
    unlimited dimension). Returns what the target left out.

    GRIB out (``dst`` named ``.grib2``, ``.grib``..., or ``format="grib"``): each field read
    from GRIB 2 — straight, or through a format that keeps its attributes (Tensogram,
    zTensor) — is written again from the sections it keeps, as it was when its values are
    unchanged; ``pipeline`` names a packing instead — ``"simple"``, ``"simple:BITS"``,
    ``"ccsds"``, ``"ccsds:BITS"``, ``"complex"``, ``"complex:BITS"``, ``"ieee"``,
    ``"ieee64"`` — every other section kept byte for byte, as ``tensorkit convert`` does (GRIB
    into GRIB keeps messages of several fields whole).

    NetCDF out (``dst`` named ``.nc``, or ``format="netcdf"``): ``pipeline`` names the format
    and NetCDF-4's filters — ``"netcdf4"``, ``"netcdf4,shuffle,deflate:4"``,
    ``"netcdf4-classic"``, ``"classic"``, ``"64bit-offset"``, ``"cdf5"`` (``fletcher32`` too);
    by default a file read from NetCDF keeps its format and anything else is NetCDF-3."""
    if format == "grib" or (format is None and os.fspath(dst).lower().endswith(_grib_extensions())):
        try:
            with io.open(src, "rb") as f:  # `open` here is tensorkit's
                from_grib = f.read(4) == b"GRIB"
        except OSError:
            from_grib = False
        if from_grib and pipeline:
            _tensorkit.repack_grib(os.fspath(src), os.fspath(dst), pipeline, fsync=fsync)
            return []
        format = "grib"
    return _tensorkit.convert(
        os.fspath(src),
        os.fspath(dst),
        _options(
            format=format,
            metadata=metadata,
            pipeline=pipeline,
            alignment=alignment,
            max_shard_size=max_shard_size,
            fsync=fsync,
            allow_extensions=allow_extensions,
            canonical_nan=canonical_nan,
            quantize=quantize,
            dequantize=dequantize,
            header_reserve=header_reserve,
            duplicates=duplicates,
            unpack=unpack,
            split_by=split_by,
        ),
    )


def migrate(src: PathLike, dst: PathLike, *, fsync: bool = False) -> dict[str, int]:
    """Rewrites a Tensogram file of wire version 2 (tensogram 0.14 to 0.16, which tensogram
    0.19 and later refuse) as version 3 at ``dst``, payloads and metadata as they are, every
    version 2 hash checked first. Returns what was done: ``v2_messages``, ``v3_messages``
    (copied as they were), ``objects``, ``hashes_verified``, ``bytes`` written. ``fsync``
    as in :func:`save`."""
    return _tensorkit.migrate(os.fspath(src), os.fspath(dst), fsync=fsync)


def validate(path: PathLike, *, level: str = "full", canonical: bool = False) -> dict[str, Any]:
    """Checks a file as ``tensorkit validate --json`` does; the same report as a dict
    (``problems`` is empty for a sound file)."""
    return _tensorkit.validate(os.fspath(path), level=level, canonical=canonical)
