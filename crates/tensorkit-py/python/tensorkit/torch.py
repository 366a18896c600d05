"""Tensors of every format tensorkit reads, as torch tensors, and torch tensors written in
every format it writes.

>>> import tensorkit.torch
>>> state = tensorkit.torch.load_file("model.safetensors")             # CPU, no copies
>>> state = tensorkit.torch.load_file("weights.zt", device="cuda")     # any format, to a GPU
>>> tensorkit.torch.save_file(state, "model.tgm", pipeline="zstd")

On the CPU (``backend="mmap"``, the default), a tensor stored raw in the machine's byte order
becomes a writable tensor over a private copy-on-write mapping of its file: nothing is read
until it is touched, and nothing written to it reaches the file. ``backend="pread"`` reads
into fresh memory instead, several reads in flight (for network file systems, where faulting
a mapping in page by page is slow). Everything else is decoded once, into memory torch owns.

To a GPU (``device="cuda"``, ``"cuda:1"``, or an int), raw bytes are read into two pinned
staging buffers of ``staging_bytes`` each, by reads striped across ``threads`` threads, and
each buffer is copied to the device on a side stream while the other is being filled; every
tensor is allocated on the device first and its bytes land there in place.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

import torch

from . import _tensorkit
from ._errors import InvalidArgumentError, UnsupportedError
from ._file import File, PathLike, _options, open, register_framework

# tensorkit dtype name -> torch dtype, from tensorkit's table (``_tensorkit.dtypes()``): those
# this torch has (the unsigned ints from torch 2.3, the float8 family later still).
_TORCH: dict[str, torch.dtype] = {
    d["name"]: getattr(torch, d["torch"])
    for d in _tensorkit.dtypes()
    if d["torch"] and getattr(torch, d["torch"], None) is not None
}

# torch dtype -> tensorkit dtype name, for writing (bool is bool, not bitmask).
_FROM_TORCH: dict[torch.dtype, str] = {dt: name for name, dt in _TORCH.items() if name != "bitmask"}

# The dtype torch holds two elements of in one byte: shapes translate as safetensors does,
# the last dimension halved in torch.
_PAIRS = "float4_e2m1"

# Bytes read into each staging buffer of a device load when the caller does not say.
STAGING_BYTES = 64 << 20


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of tensorkit dtype ``name``."""
    try:
        return _TORCH[name]
    except KeyError:
        raise UnsupportedError(f"torch {torch.__version__} has no dtype for {name}") from None


def dtype_name(dtype: torch.dtype) -> str:
    """The tensorkit dtype name of torch dtype ``dtype``."""
    try:
        return _FROM_TORCH[dtype]
    except KeyError:
        raise UnsupportedError(f"tensorkit has no dtype for torch's {dtype}") from None


def _torch_shape(name: str, dtype: str, shape: list[int]) -> list[int]:
    """The shape torch gives a tensor of ``shape`` elements (float4 counted in pairs)."""
    if dtype != _PAIRS:
        return list(shape)
    if not shape or shape[-1] % 2:
        raise UnsupportedError(
            f"tensor {name!r}: torch holds float4 in pairs, and the last dimension of "
            f"{list(shape)} is not even"
        )
    return [*shape[:-1], shape[-1] // 2]


def _bytes_of(t: torch.Tensor) -> Any:
    """The bytes of a contiguous CPU tensor, as a writable one-dimensional byte buffer."""
    return t.reshape(-1).view(torch.uint8).numpy()


def device_of(device: str | int | torch.device) -> torch.device:
    """A torch device from what safetensors accepts: ``"cpu"``, ``"cuda"``, ``"cuda:1"``,
    an int (a CUDA device), or a ``torch.device``."""
    if isinstance(device, bool):
        raise InvalidArgumentError(f"device {device!r}")
    if isinstance(device, int):
        return torch.device("cuda", device)
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise InvalidArgumentError(f"device {device!r}: {e}") from None


def _check_backend(backend: str) -> None:
    if backend not in ("mmap", "pread"):
        raise InvalidArgumentError(f"backend {backend!r}: one of 'mmap', 'pread'")


class _Entry:
    """A tensor to load: what ``File.layout`` says of it, and the tensor torch gets."""

    __slots__ = ("name", "dtype", "shape", "nbytes", "file_no", "offset")

    def __init__(self, name, dtype, shape, nbytes, file_no, offset):
        self.name, self.dtype, self.shape = name, dtype, list(shape)
        self.nbytes, self.file_no, self.offset = nbytes, file_no, offset

    @classmethod
    def of(cls, p) -> "_Entry":
        """The entry for a native ``Placement``."""
        return cls(p.name, p.dtype, p.shape, p.nbytes, p.file, p.offset)

    @property
    def raw(self) -> bool:
        """Whether the bytes can be read from the file as torch holds them: stored raw, and
        not a bitmask (packed bits, which torch holds one per byte)."""
        return self.file_no is not None and self.nbytes > 0 and self.dtype != "bitmask"

    def empty(self, **kwargs: Any) -> torch.Tensor:
        return torch.empty(
            _torch_shape(self.name, self.dtype, self.shape), dtype=torch_dtype(self.dtype), **kwargs
        )


def _decode_into(f: File, e: _Entry, out: torch.Tensor) -> torch.Tensor:
    """Decodes tensor ``e`` into ``out``, a contiguous CPU tensor of its dtype and shape."""
    if out.numel():
        f._native.read_into(e.name, _bytes_of(out), packed=e.dtype == _PAIRS)
    return out


def _prefetch_all(f: File, entries: list[_Entry]) -> None:
    """Starts reading, in the background and in file order, every file's run of raw tensor
    bytes into the page cache: a whole-file load then finds most pages read before it
    touches them, instead of faulting them in one at a time."""
    spans: dict[int, list[int]] = {}
    for e in entries:
        if e.raw:
            lo, hi = spans.get(e.file_no, (e.offset, e.offset + e.nbytes))
            spans[e.file_no] = [min(lo, e.offset), max(hi, e.offset + e.nbytes)]
    for file_no, (lo, hi) in spans.items():
        f._native.prefetch(file_no, lo, hi - lo, background=True)


def _load_cpu_mapped(f: File, entries: list[_Entry]) -> dict[str, torch.Tensor]:
    """CPU tensors over private mappings of the files where the bytes are raw; decoded ones
    otherwise."""
    maps: dict[int, Any] = {}
    out = {}
    for e in entries:
        if e.raw:
            if e.file_no not in maps:
                maps[e.file_no] = f._native.private_map(e.file_no)
            dt = torch_dtype(e.dtype)
            t = torch.frombuffer(
                maps[e.file_no], dtype=dt, count=e.nbytes // dt.itemsize, offset=e.offset
            )
            out[e.name] = t.reshape(_torch_shape(e.name, e.dtype, e.shape))
        else:
            out[e.name] = _decode_into(f, e, e.empty())
    return out


def _load_cpu_read(f: File, entries: list[_Entry], threads: int) -> dict[str, torch.Tensor]:
    """CPU tensors in fresh memory: raw bytes read with several reads in flight, the rest
    decoded."""
    out = {e.name: e.empty() for e in entries}
    f._native.read_stored_many(
        [(e.file_no, e.offset, _bytes_of(out[e.name])) for e in entries if e.raw], threads
    )
    for e in entries:
        if not e.raw:
            _decode_into(f, e, out[e.name])
    return out


def read_into(f: File, targets: Mapping[str, torch.Tensor], threads: int = 0) -> list[str]:
    """Reads each tensor of ``f`` named in ``targets`` straight into that tensor's memory —
    no mapping, no intermediate copy — where the file holds it raw and the target is a
    contiguous CPU tensor of the same dtype and shape, and no earlier target shares its
    memory; every read striped across ``threads`` threads (0: eight). Returns the names
    filled; the others are left as they were."""
    filled, taken, items = [], [], []
    names = [n for n in targets if n in f]
    for e in (_Entry.of(row) for row in f._native.layout(names)):
        t = targets[e.name]
        if (
            not e.raw
            or t.device.type != "cpu"
            or not t.is_contiguous()
            or t.dtype != _TORCH.get(e.dtype)
            or list(t.shape) != _torch_shape(e.name, e.dtype, e.shape)
            or t.numel() * t.element_size() != e.nbytes
        ):
            continue
        start = t.data_ptr()
        span = (start, start + e.nbytes)
        if any(a < span[1] and span[0] < b for a, b in taken):
            continue  # tied to a tensor already filled
        taken.append(span)
        items.append((e.file_no, e.offset, _bytes_of(t.detach())))
        filled.append(e.name)
    with torch.no_grad():
        f._native.read_stored_many(items, threads)
    return filled


class _Chunk:
    """A run of one file read into one staging buffer: ``pieces`` are (entry, offset in the
    tensor, offset in the chunk, bytes)."""

    __slots__ = ("file_no", "start", "end", "pieces")

    def __init__(self, file_no: int, start: int):
        self.file_no, self.start, self.end, self.pieces = file_no, start, start, []


# Bytes between two tensors read through rather than starting a new read: padding and
# small gaps cost less than another round of reads.
_GAP = 1 << 20

# Chunks a staged load asks the system to read ahead of the one it reads, so that the disk
# never waits for the reader.
_AHEAD = 2


def plan_chunks(entries: Iterable[_Entry], staging_bytes: int) -> list[_Chunk]:
    """Cuts the raw tensors' bytes into runs of their files no longer than
    ``staging_bytes``, in file order: a run spans tensors, and a tensor longer than a run
    spans runs."""
    if staging_bytes < 1:
        raise InvalidArgumentError(f"staging_bytes must be at least 1, not {staging_bytes}")
    chunks: list[_Chunk] = []
    cur: _Chunk | None = None
    for e in sorted((e for e in entries if e.raw), key=lambda e: (e.file_no, e.offset)):
        at, done = e.offset, 0
        while done < e.nbytes:
            fits = (
                cur is not None
                and cur.file_no == e.file_no
                and 0 <= at - cur.end <= _GAP
                and at - cur.start < staging_bytes
            )
            if not fits:
                cur = _Chunk(e.file_no, at)
                chunks.append(cur)
            n = min(cur.start + staging_bytes - at, e.nbytes - done)
            cur.pieces.append((e, done, at - cur.start, n))
            cur.end = at + n
            at += n
            done += n
    return chunks


def _load_staged(
    f: File,
    entries: list[_Entry],
    device: torch.device,
    staging_bytes: int,
    threads: int,
) -> dict[str, torch.Tensor]:
    """Every tensor on ``device``: raw bytes through two staging buffers (pinned when the
    device is a GPU, copied on a side stream while the next is read), the rest decoded on
    the CPU and copied over. With the CPU as the device the same pipeline runs, copies
    synchronous (the tests drive it so)."""
    cuda = device.type == "cuda"
    out = {e.name: e.empty(device=device) for e in entries}
    flat = {e.name: out[e.name].reshape(-1).view(torch.uint8) for e in entries if e.raw}
    chunks = plan_chunks(entries, staging_bytes)
    size = max((c.end - c.start for c in chunks), default=0)
    staging = [torch.empty(size, dtype=torch.uint8, pin_memory=cuda) for _ in range(2 if chunks else 0)]
    stream = torch.cuda.Stream(device) if cuda else None
    if stream is not None:
        stream.wait_stream(torch.cuda.current_stream(device))  # the allocations above
    on_side = torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()
    done: list[Any] = [None, None]  # the copy-out event of each staging buffer
    for c in chunks[:_AHEAD]:
        f._native.prefetch(c.file_no, c.start, c.end - c.start)
    with on_side:
        for i, c in enumerate(chunks):
            if i + _AHEAD < len(chunks):  # the disk reads ahead while this chunk is read
                n = chunks[i + _AHEAD]
                f._native.prefetch(n.file_no, n.start, n.end - n.start)
            k = i % 2
            if done[k] is not None:
                done[k].synchronize()  # its previous chunk is on the device
            buf = staging[k][: c.end - c.start]
            f._native.read_stored(c.file_no, c.start, buf.numpy(), threads)
            for e, at, start, n in c.pieces:
                flat[e.name][at : at + n].copy_(buf[start : start + n], non_blocking=cuda)
            if stream is not None:
                done[k] = torch.cuda.Event()
                done[k].record(stream)
        for e in entries:
            if not e.raw and out[e.name].numel():
                host = _decode_into(f, e, e.empty(pin_memory=cuda))
                out[e.name].copy_(host, non_blocking=cuda)
    if stream is not None:
        stream.synchronize()  # every tensor is on the device before it is handed out
    return out


def load(
    f: File,
    names: Iterable[str] | None = None,
    *,
    device: str | int | torch.device = "cpu",
    backend: str = "mmap",
    staging_bytes: int | None = None,
    threads: int = 0,
) -> dict[str, torch.Tensor]:
    """The tensors of an open file (those in ``names``, or all), as torch tensors on
    ``device``; options as in :func:`load_file`."""
    _check_backend(backend)
    device = device_of(device)
    entries = [_Entry.of(row) for row in f._native.layout(None if names is None else list(names))]
    for e in entries:
        torch_dtype(e.dtype)  # refuse what torch cannot hold before reading anything
        _torch_shape(e.name, e.dtype, e.shape)
    if device.type == "cuda" or staging_bytes is not None:
        return _load_staged(f, entries, device, staging_bytes or STAGING_BYTES, threads)
    if names is None:
        _prefetch_all(f, entries)
    if device.type == "cpu":
        if backend == "mmap":
            return _load_cpu_mapped(f, entries)
        return _load_cpu_read(f, entries, threads)
    return {k: v.to(device) for k, v in _load_cpu_mapped(f, entries).items()}


def load_file(
    filename: PathLike | list[PathLike],
    device: str | int | torch.device = "cpu",
    *,
    backend: str = "mmap",
    staging_bytes: int | None = None,
    threads: int = 0,
    **open_options: Any,
) -> dict[str, torch.Tensor]:
    """The tensors of a file of any format tensorkit reads (safetensors, a shard set's
    ``*.index.json``, zTensor, BinTensors, Tensogram, GRIB), as torch tensors on ``device``.

    ``backend``: ``"mmap"`` (CPU tensors over a private mapping, no copy) or ``"pread"``
    (fresh memory, ``threads`` reads in flight; 0: eight). ``staging_bytes``: the size of
    each of the two staging buffers of a device load (64 MiB by default); given for the CPU,
    the CPU load runs through the same staged pipeline. ``open_options`` go to
    :func:`tensorkit.open` (``verify``, ``max_memory``...)."""
    with open(filename, **open_options) as f:
        return load(
            f, device=device, backend=backend, staging_bytes=staging_bytes, threads=threads
        )


def entries(tensors: Mapping[str, torch.Tensor]) -> tuple[list[tuple[str, str, list[int], Any]], list[Any]]:
    """The native writer's entries for ``tensors`` (name, dtype, element shape, bytes), and
    the CPU tensors the bytes belong to (keep them alive while writing). Tensors on a device
    are copied to the CPU; non-contiguous ones are made contiguous."""
    if not isinstance(tensors, Mapping):
        raise InvalidArgumentError("tensors must be a mapping of name -> torch.Tensor")
    out, keep = [], []
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise InvalidArgumentError(f"tensor names must be str, not {type(name).__name__}")
        if not isinstance(t, torch.Tensor):
            raise InvalidArgumentError(f"tensor {name!r} is a {type(t).__name__}, not a torch.Tensor")
        if t.layout != torch.strided:
            raise InvalidArgumentError(f"tensor {name!r} is sparse ({t.layout}); make it dense first")
        dtype = dtype_name(t.dtype)
        cpu = t.detach().to("cpu").contiguous()
        shape = list(cpu.shape)
        if dtype == _PAIRS:
            shape = [*shape[:-1], shape[-1] * 2] if shape else [2]
        keep.append(cpu)
        out.append((name, dtype, shape, _bytes_of(cpu)))
    return out, keep


def save_file(
    tensors: Mapping[str, torch.Tensor],
    filename: PathLike,
    metadata: Mapping[str, Any] | None = None,
    **write_options: Any,
) -> list[str]:
    """Writes torch tensors to ``filename`` atomically, in the format its extension names
    or ``format=``; ``write_options`` as in :func:`tensorkit.save` (``pipeline``,
    ``alignment``, ``max_shard_size``, ``fsync``, ``allow_extensions``, ``quantize``).
    Returns what the format could not hold and left out."""
    items, keep = entries(tensors)
    notes = _tensorkit.save(os.fspath(filename), items, _options(metadata=metadata, **write_options))
    del keep
    return notes


def save(
    tensors: Mapping[str, torch.Tensor],
    format: str,
    metadata: Mapping[str, Any] | None = None,
    **write_options: Any,
) -> bytes:
    """The bytes of a ``format`` file holding torch tensors (options as in :func:`save_file`)."""
    items, keep = entries(tensors)
    data = _tensorkit.serialize(items, _options(format=format, metadata=metadata, **write_options))
    del keep
    return data


register_framework("torch", sys.modules[__name__])

__all__ = ["device_of", "dtype_name", "load", "load_file", "read_into", "save", "save_file", "torch_dtype"]
