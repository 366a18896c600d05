"""One tensor of an open file as a handle (``File.tensor(name)``): its name, dtype and
shape, and DLPack, so that ``torch.from_dlpack``, ``jax.numpy.from_dlpack`` and
``numpy.from_dlpack`` take it without copying, whatever the dtype (bfloat16 and float8
included, which numpy's own arrays cannot hand over)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import _tensorkit
from ._mapped import CPU, check_cpu_export, private_capsule

if TYPE_CHECKING:
    from ._file import File



class Tensor:
    """A tensor of an open file, not yet read. ``__dlpack__`` hands over:

    - a tensor stored raw in the machine's byte order: the file's bytes themselves — in the
      versioned capsule (``max_version=(1, 0)`` or later) flagged read-only, as the mapping
      is; in the legacy capsule, which cannot say so, over a private copy-on-write mapping
      of the file instead (writable, still no copy, nothing written reaches the file);
    - any other tensor: its bytes decoded once, into memory the consumer then owns.

    ``copy=True`` always hands over a copy (flagged as one); ``copy=False`` raises
    ``BufferError`` where no copy-free export exists. The bytes, and the file's mapping,
    live as long as the consumer's tensor does."""

    def __init__(self, f: File, name: str):
        if name not in f:
            raise KeyError(name)
        self._f, self.name = f, name
        (placement,) = f._native.layout([name])
        self.dtype, self.shape, self.nbytes = placement.dtype, tuple(placement.shape), placement.nbytes
        self._file_no, self._offset = placement.file, placement.offset

    def __repr__(self) -> str:
        return f"<tensorkit.Tensor {self.name!r} {self.dtype} {list(self.shape)}>"

    def numpy(self) -> np.ndarray:
        """The tensor as ``f[name]`` gives it (a zero-copy, read-only view where it can be)."""
        return self._f[self.name]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=bool(copy))
        return np.array(a) if copy else a

    def __dlpack_device__(self) -> tuple[int, int]:
        return CPU

    def __dlpack__(
        self,
        stream: Any = None,
        *,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        check_cpu_export(stream, dl_device)
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        shape = list(self.shape)
        if copy:
            out = bytearray(self._array_bytes())
            self._f._native.read_into(self.name, out)
            return _tensorkit.dlpack_capsule(out, 0, self.dtype, shape, versioned, copied=versioned)
        array = self._f._native.tensor(self.name)
        buf, dtype, shape = array.data, array.dtype, array.shape
        readonly = memoryview(buf).readonly
        if readonly and not versioned:
            if self._file_no is not None:
                return private_capsule(self._f, self._file_no, self._offset, dtype, list(shape))
            if copy is False:  # bytes held in memory, read-only, with no file to map
                raise BufferError(
                    f"tensor {self.name!r}: read-only bytes with no file to map privately; "
                    "the legacy capsule needs a copy"
                )
            return self.__dlpack__(max_version=max_version, copy=True)
        return _tensorkit.dlpack_capsule(buf, 0, dtype, list(shape), versioned)

    def _array_bytes(self) -> int:
        """Bytes the decoded elements take (one per element for bitmasks)."""
        from ._dtypes import to_numpy

        return int(np.prod(self.shape, dtype=np.int64)) * to_numpy(self.dtype).itemsize
