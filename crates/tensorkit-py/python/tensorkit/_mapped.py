"""Arrays over a file's read-only mapping, as ``File[name]`` gives them: numpy arrays in every
way (a subclass, as ``numpy.memmap`` is), read-only as the mapping is, whose DLPack export
also serves consumers that ask for the legacy capsule (jax's ``from_dlpack``), which cannot
say the bytes are read-only: they get the same bytes over a private copy-on-write mapping
of the file, writable, still without a copy, nothing written reaching the file (as
:meth:`tensorkit.Tensor.__dlpack__` does)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import _tensorkit

if TYPE_CHECKING:
    from ._file import File


# DLPack's (kDLCPU, device 0).
CPU = (1, 0)


def check_cpu_export(stream: Any, dl_device: tuple[int, int] | None) -> None:
    """Refuses what a CPU tensor's DLPack export cannot honour: a stream, another device."""
    if stream is not None and stream != -1:
        raise BufferError("a CPU tensor takes no stream")
    if dl_device is not None and tuple(dl_device) != CPU:
        raise BufferError(f"tensorkit tensors live on the CPU, not on DLPack device {tuple(dl_device)}")


def private_capsule(f: File, file_no: int, offset: int, dtype: str, shape: list[int]) -> Any:
    """The legacy DLPack capsule of the bytes at ``offset`` of mapped file ``file_no`` of
    ``f``, over its private copy-on-write mapping: writable, no copy, nothing written
    reaching the file."""
    return _tensorkit.dlpack_capsule(f._private_map(file_no), offset, dtype, shape, False)


class _Origin(NamedTuple):
    """Where an array's bytes lie: file ``file_no`` of ``f`` at ``offset``, the array's
    first byte at address ``address``, ``nbytes`` long, of ``dtype`` (tensorkit's ``name``)."""

    f: File
    file_no: int
    offset: int
    address: int
    nbytes: int
    dtype: np.dtype
    name: str


class MappedArray(np.ndarray):
    """A read-only array over a file's mapping (see the module)."""

    _origin: _Origin | None = None

    def __array_finalize__(self, obj: Any) -> None:
        self._origin = getattr(obj, "_origin", None)

    def __dlpack__(
        self,
        stream: Any = None,
        *,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        legacy = max_version is None or tuple(max_version)[0] < 1
        if not legacy or copy or self.flags.writeable:
            return np.asarray(self).__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
        at = self._mapped_offset()
        if at is None:
            # Read-only bytes outside the mapping, or laid out otherwise: the legacy capsule
            # cannot say they are read-only, so it gets a copy where allowed.
            if copy is False:
                raise BufferError("read-only bytes the legacy DLPack capsule cannot take without a copy")
            return np.array(self).__dlpack__(stream=stream, dl_device=dl_device)
        check_cpu_export(stream, dl_device)
        o = self._origin
        assert o is not None
        return private_capsule(o.f, o.file_no, at, o.name, list(self.shape))

    def _mapped_offset(self) -> int | None:
        """The file offset of this array's bytes, when it is a C-contiguous run of its
        origin's bytes in the machine's byte order; else ``None``."""
        o = self._origin
        if o is None or not self.flags.c_contiguous or self.dtype != o.dtype or not self.dtype.isnative:
            return None
        delta = self.__array_interface__["data"][0] - o.address
        if delta < 0 or delta + self.nbytes > o.nbytes:
            return None
        if o.f.closed and o.file_no not in o.f._private:
            return None  # a closed file maps nothing more (the copy path serves)
        return o.offset + delta


def mapped(f: File, name: str, array: np.ndarray, dtype: str) -> np.ndarray:
    """``array``, tensor ``name`` of ``f`` of tensorkit dtype ``dtype``, as a
    :class:`MappedArray` when it is a read-only view of a mapped file's bytes in the
    machine's byte order (else as it is)."""
    if array.flags.writeable or not array.dtype.isnative or not array.flags.c_contiguous:
        return array
    (placement,) = f._native.layout([name])
    if placement.file is None:
        return array
    view = array.view(MappedArray)
    view._origin = _Origin(
        f, placement.file, placement.offset, array.__array_interface__["data"][0], array.nbytes, array.dtype, dtype
    )
    return view
