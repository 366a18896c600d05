"""``safetensors.torch``: the same functions, signatures and results.

Change ``from safetensors.torch import load_file, save_file`` to
``from tensorkit.safetensors.torch import load_file, save_file``. ``storage_ptr``,
``storage_size``, ``_find_shared_tensors`` and ``_remove_duplicate_names`` are here for the
libraries that import them (transformers, peft, diffusers).

Loads go through ``tensorkit.torch``: on the CPU, tensors over a private copy-on-write
mapping of the file (writable, no copy, nothing read until touched); to a GPU through pinned
staging buffers, reads striped across threads and overlapped with the copies. Files written
are byte for byte what safetensors writes; tensors that share memory are refused as
safetensors refuses them (``save_model`` drops the duplicates of tied weights first).
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

import torch

from .. import _tensorkit
from .. import torch as _tk_torch
from .._file import open_bytes
from ._api import _check_backend, _require_safetensors, open_safetensors, raises_safetensor_errors, reference_options
# What safetensors.torch re-exports of the package, as it does.
from ._api import TensorSpec, deserialize, safe_open, serialize, serialize_file  # noqa: F401


def storage_ptr(tensor: torch.Tensor) -> int:
    """The address of the storage ``tensor`` is a view of (0 when it has none)."""
    try:
        return tensor.untyped_storage().data_ptr()
    except Exception:
        try:
            return tensor.storage().data_ptr()
        except NotImplementedError:
            return 0


def storage_size(tensor: torch.Tensor) -> int:
    """The bytes of the storage ``tensor`` is a view of."""
    try:
        return tensor.untyped_storage().nbytes()
    except AttributeError:
        try:
            return tensor.storage().size() * tensor.element_size()
        except NotImplementedError:
            return tensor.nelement() * tensor.element_size()


def _end_ptr(tensor: torch.Tensor) -> int:
    """One past the address of ``tensor``'s last element (its start when it has none)."""
    if not tensor.nelement():
        return tensor.data_ptr()
    return tensor.view(-1)[-1].data_ptr() + tensor.element_size()


def _filter_shared_not_shared(tensors: list[set[str]], state_dict: dict[str, torch.Tensor]) -> list[set[str]]:
    """Splits each group of names on one storage into runs whose byte ranges overlap: views
    of disjoint parts of a storage do not share memory."""
    out: list[set[str]] = []
    for names in tensors:
        if len(names) < 2:
            out.append(names)
            continue
        spans = sorted((state_dict[n].data_ptr(), _end_ptr(state_dict[n]), n) for n in names)
        reach = None
        for start, stop, name in spans:
            if reach is None or start >= reach:
                out.append({name})
            else:
                out[-1].add(name)
            reach = stop
    return out


def _find_shared_tensors(state_dict: dict[str, torch.Tensor]) -> list[set[str]]:
    """Groups of names whose tensors share memory (a group of one shares nothing)."""
    by_storage: dict[tuple, set[str]] = defaultdict(set)
    for name, t in state_dict.items():
        if t.device != torch.device("meta") and storage_ptr(t) != 0 and storage_size(t) != 0:
            by_storage[(t.device, storage_ptr(t), storage_size(t))].add(name)
    return _filter_shared_not_shared(sorted(by_storage.values()), state_dict)


def _is_complete(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` covers its whole storage."""
    return tensor.data_ptr() == storage_ptr(tensor) and tensor.nelement() * tensor.element_size() == storage_size(tensor)


def _remove_duplicate_names(
    state_dict: dict[str, torch.Tensor],
    *,
    preferred_names: list[str] | None = None,
    discard_names: list[str] | None = None,
) -> dict[str, list[str]]:
    """For each group of tensors sharing memory, the name kept (one covering the whole
    storage: among ``preferred_names`` first, then not among ``discard_names``, then the
    first in sort order) -> the names to drop."""
    preferred = set(preferred_names or [])
    discard = set(discard_names or [])
    drops: dict[str, list[str]] = defaultdict(list)
    for group in _find_shared_tensors(state_dict):
        complete = {n for n in group if _is_complete(state_dict[n])}
        if not complete:
            raise RuntimeError(
                f"Error while trying to find names to remove to save state dict, but found no "
                f"suitable name to keep for saving amongst: {group}. None is covering the entire "
                "storage. Refusing to save/load the model since you could be storing much more "
                "memory than needed. Please refer to "
                "https://huggingface.co/docs/safetensors/torch_shared_tensors for more information."
            )
        keep = min(complete)
        if complete - discard:
            keep = min(complete - discard)
        if preferred & complete:
            keep = min(preferred & complete)
        for name in sorted(group):
            if name != keep:
                drops[keep].append(name)
    return drops


def _check_for_save(tensors: dict[str, torch.Tensor]) -> None:
    """Refuses what safetensors refuses to write, with its exception types."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    sparse = []
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received {type(t)}")
        if t.layout != torch.strided:
            sparse.append(name)
    if sparse:
        raise ValueError(
            f"You are trying to save a sparse tensors: `{sparse}` which this library does not "
            "support. You can make it a dense tensor before saving with `.to_dense()` but be aware "
            "this might make a much larger file than needed."
        )
    shared = [names for names in _find_shared_tensors(tensors) if len(names) > 1]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
            f"differences when loading them again: {shared}. A potential way to correctly save "
            "your model is to use `save_model`. More information at "
            "https://huggingface.co/docs/safetensors/torch_shared_tensors"
        )
    for name, t in tensors.items():
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. "
                "Call `.contiguous()` on it first, or save only the full tensors and reslice at "
                "load time."
            )


@raises_safetensor_errors
def save(tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensors`` (contiguous, dense, sharing no
    memory)."""
    _check_for_save(tensors)
    items, keep = _tk_torch.entries(tensors)
    data = _tensorkit.serialize(items, reference_options(metadata))
    del keep
    return data


@raises_safetensor_errors
def save_file(
    tensors: dict[str, torch.Tensor],
    filename: str | os.PathLike,
    metadata: dict[str, str] | None = None,
) -> None:
    """Writes ``tensors`` to ``filename`` as safetensors, atomically."""
    _check_for_save(tensors)
    items, keep = _tk_torch.entries(tensors)
    _tensorkit.save(os.fspath(filename), items, reference_options(metadata))
    del keep


@raises_safetensor_errors
def load_file(
    filename: str | os.PathLike,
    device: str | int = "cpu",
    *,
    backend: str = "mmap",
) -> dict[str, torch.Tensor]:
    """The tensors of the safetensors file ``filename`` on ``device``."""
    _check_backend(backend)
    with open_safetensors(filename) as f:
        return _tk_torch.load(f, device=device, backend=backend)


@raises_safetensor_errors
def load(data: bytes) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file's bytes, on the CPU (copied out of ``data``)."""
    with open_bytes(data) as f:
        _require_safetensors(f)
        return _tk_torch.load(f, backend="pread")


def save_model(
    model: torch.nn.Module,
    filename: str,
    metadata: dict[str, str] | None = None,
    force_contiguous: bool = True,
) -> None:
    """Saves ``model``'s state dict to ``filename``: of the tensors sharing memory (tied
    weights) one is kept and each dropped name is recorded in ``metadata`` as dropped
    name -> kept name; ``force_contiguous`` makes every tensor contiguous first."""
    state_dict = model.state_dict()
    for kept, dropped in _remove_duplicate_names(state_dict).items():
        for name in dropped:
            if metadata is None:
                metadata = {}
            metadata.setdefault(name, kept)
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    try:
        save_file(state_dict, filename, metadata=metadata)
    except ValueError as e:
        raise ValueError(
            f"{e} Or use save_model(..., force_contiguous=True), read the docs for potential caveats."
        ) from None


def load_model(
    model: torch.nn.Module,
    filename: str | os.PathLike,
    strict: bool = True,
    device: str | int = "cpu",
    *,
    backend: str = "mmap",
) -> tuple[list[str], list[str]]:
    """Loads ``filename`` into ``model``; returns ``(missing, unexpected)``: names of the
    model the file did not set, and names in the file the model has no place for. The
    duplicates of tied weights ``save_model`` dropped count as neither. ``strict`` raises
    ``RuntimeError`` when either is not empty."""
    _check_backend(backend)
    target = _tk_torch.device_of(device)
    with open_safetensors(filename) as f:
        # The file's bytes go straight into the parameters and buffers that can take them
        # (contiguous, on the CPU, of the file's dtype and shape), on several threads; the
        # module's own load_state_dict then runs as it would, over those very tensors (each
        # copy onto itself is a no-op), so its hooks, checks and answers are unchanged.
        own = model.state_dict(keep_vars=True)
        filled = set(_tk_torch.read_into(f, own) if target.type == "cpu" else [])
        state_dict = _tk_torch.load(f, [n for n in f if n not in filled], device=device, backend=backend)
        state_dict.update((n, own[n]) for n in filled)
    drops = _remove_duplicate_names(own, preferred_names=list(state_dict.keys()))
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing)
    for dropped in drops.values():
        for name in dropped:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected


# safe_open(framework="pt").
def tensors(f: Any, names: list[str] | None, device: Any, backend: str) -> dict[str, torch.Tensor]:
    """``safe_open``'s tensors for torch, on its device."""
    return _tk_torch.load(f, names, device=device, backend=backend)


def part(f: Any, name: str, key: Any, device: Any, backend: str) -> torch.Tensor:
    """``get_slice(name)[key]`` for torch: the part, contiguous, on the device. The whole
    tensor is a view of the private mapping, so only the pages the part lies on are read."""
    whole = _tk_torch.load(f, [name], backend="mmap")[name]
    target = _tk_torch.device_of(device)
    piece = whole[key]
    return piece.contiguous().to(target) if target.type != "cpu" else piece.clone()


__all__ = [
    "load",
    "load_file",
    "load_model",
    "save",
    "save_file",
    "save_model",
    "storage_ptr",
    "storage_size",
]
