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
    storage_options: list[tuple[str, str]] | None = None,
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

# Tensogram (src/tensogram.rs). Metadata: (wire version, base, extra, reserved); a decoded
# object: (descriptor dict, bytes, dtype, shape, byte order of the bytes).
_Meta = tuple[int, list[dict[str, object]], dict[str, object], dict[str, object]]
_Decoded = tuple[_Meta, list[tuple[dict[str, object], Buffer, str, list[int], str]]]

def tgm_encode(
    metadata: object,
    objects: list[tuple[dict[str, object], _Buffer, bool]],
    *,
    hash: bool = True,
    allow_nan: bool = False,
    allow_inf: bool = False,
    mask_method: str | None = None,
    small_mask_threshold: int | None = None,
) -> bytes: ...
def tgm_decode(
    buf: _Buffer,
    *,
    index: int | None = None,
    verify_hash: bool = False,
    native_byte_order: bool = True,
    restore_non_finite: bool = True,
    threads: int = 0,
) -> _Decoded: ...
def tgm_describe(buf: _Buffer) -> tuple[_Meta, list[dict[str, object]]]: ...
def tgm_scan(buf: _Buffer) -> list[tuple[int, int]]: ...
def tgm_hash(data: _Buffer) -> int: ...
def tgm_append(path: str, message: _Buffer) -> None: ...
def tgm_validate(buf: _Buffer, level_name: str = "default", canonical: bool = False) -> dict[str, object]: ...
def tgm_validate_file(path: str, level_name: str = "default", canonical: bool = False) -> dict[str, object]: ...

class TgmFile:
    def __init__(self, path: str) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def __len__(self) -> int: ...
    def ranges(self) -> list[tuple[int, int]]: ...
    def message(self, i: int) -> bytes: ...
    def decode(
        self,
        i: int,
        *,
        index: int | None = None,
        verify_hash: bool = False,
        native_byte_order: bool = True,
        restore_non_finite: bool = True,
        threads: int = 0,
    ) -> _Decoded: ...
    def describe(self, i: int) -> tuple[_Meta, list[dict[str, object]]]: ...
    def close(self) -> None: ...

# stdlib-js ndarray meta data (src/stdlib.rs).
def stdlib_serialize(spec_json: str) -> bytes: ...
def stdlib_deserialize(buf: _Buffer) -> str: ...
def stdlib_check(meta: _Buffer, data: _Buffer) -> tuple[str, str]: ...
