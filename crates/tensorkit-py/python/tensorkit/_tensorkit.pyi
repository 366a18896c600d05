"""Type stubs of the native module (crates/tensorkit-py/src)."""

from collections.abc import Buffer as _Buffer

__version__: str

# (dtype, shape, encoding or None, location, attributes as JSON, decoded bytes, zero-copy)
_Description = tuple[str, list[int], str | None, list[tuple[str, int]], str, int, bool]
# (name, dtype, shape, C-contiguous native-order bytes)
_Entry = tuple[str, str, list[int], _Buffer]

class Buffer:
    """Bytes exported through the buffer protocol (read-only when mapped from a file)."""

    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

class File:
    @property
    def format(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def metadata_json(self) -> str | None: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: str) -> bool: ...
    def keys(self) -> list[str]: ...
    def describe(self, name: str) -> _Description: ...
    def tensor(self, name: str) -> tuple[Buffer, str, list[int]]: ...
    def read_into(self, name: str, out: _Buffer) -> None: ...
    def close(self) -> None: ...

def open(
    paths: list[str],
    *,
    verify: bool = True,
    strict: bool = False,
    max_memory: int | None = None,
    max_ratio: int | None = None,
) -> File: ...
def open_bytes(data: bytes) -> File: ...
def save(
    path: str,
    tensors: list[_Entry],
    *,
    format: str | None = None,
    metadata_json: str | None = None,
    pipeline: str | None = None,
    alignment: int | None = None,
    max_shard_size: int | None = None,
) -> list[str]: ...
def serialize(
    tensors: list[_Entry],
    format: str,
    *,
    metadata_json: str | None = None,
    pipeline: str | None = None,
    alignment: int | None = None,
) -> bytes: ...
def convert(
    src: str,
    dst: str,
    *,
    format: str | None = None,
    metadata_json: str | None = None,
    pipeline: str | None = None,
    alignment: int | None = None,
    max_shard_size: int | None = None,
) -> list[str]: ...
def validate(path: str, *, level: str = "full", canonical: bool = False) -> str: ...
