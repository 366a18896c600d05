"""Editing a file's metadata, tensor names and attributes without rewriting its tensors."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import _tensorkit

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Change:
    """One change an edit makes.

    ``op`` is ``"set"``, ``"delete"`` (a metadata key), ``"rename"`` (a tensor) or
    ``"attribute"`` (a tensor attribute). ``key``, ``old`` and ``new`` describe metadata and
    attribute changes (``old`` is ``None`` for a new key); ``tensor`` names the tensor of an
    attribute; ``old`` and ``new`` are the names of a rename.
    """

    op: str
    key: str | None = None
    tensor: str | None = None
    old: Any = None
    new: Any = None


@dataclass(frozen=True)
class EditReport:
    """What :func:`edit` changed, and how the file was written."""

    path: str
    format: str
    """The file's format, as ``tensorkit inspect --json`` names it."""
    method: str
    """``"in-place"`` (the new header took the old one's place; no tensor byte moved),
    ``"copy"`` (written anew beside the file and renamed into place) or ``"unchanged"``."""
    changes: tuple[Change, ...]
    dry_run: bool
    """Whether nothing was written (``dry_run=True``)."""
    recovered: bool
    """Whether an edit a killed process had left unfinished was finished first."""

    @property
    def in_place(self) -> bool:
        """Whether the edit was (or would be) written in place."""
        return self.method == "in-place"


def _plain(value: Any) -> Any:
    """A metadata value as JSON can carry it (numpy scalars and arrays as Python values,
    NaN and infinities spelled as tensorkit spells them)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _change(c: dict[str, Any]) -> Change:
    if c["op"] == "rename":
        return Change(op="rename", old=c["from"], new=c["to"])
    return Change(op=c["op"], key=c.get("key"), tensor=c.get("tensor"), old=c.get("old"), new=c.get("new"))


def edit(
    path: PathLike,
    metadata: Mapping[str, Any] | None = None,
    *,
    delete: Iterable[str] = (),
    rename: Mapping[str, str] | None = None,
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    types: Mapping[str, str] | None = None,
    dry_run: bool = False,
    fsync: bool = False,
) -> EditReport:
    """Edits the file at ``path`` without rewriting its tensors, as ``tensorkit edit`` does:
    sets the ``metadata`` keys given, removes those in ``delete``, renames tensors
    (``rename={old: new}``) and sets tensor attributes (``attributes={tensor: {key:
    value}}``, for formats that keep them: zTensor, Tensogram). ``types`` gives a typed
    format's type for keys set (GGUF: ``{"general.file_type": "UINT32"}``); without it, a
    key keeps its recorded type when the value fits it.

    The new header is written in place when it fits where the old one was (safetensors,
    GGUF), crash-safely; otherwise the file is written anew beside itself and renamed into
    place. Either way it is read back before this returns, and nothing is written when the
    format cannot hold the edit (:class:`UnsupportedError`) or with ``dry_run=True``. Shard
    sets are edited shard by shard. ``fsync`` syncs the edited file to disk."""
    edits: dict[str, Any] = {
        "metadata": _plain(dict(metadata or {})),
        "delete": list(delete),
        "rename": dict(rename or {}),
        "attributes": {t: _plain(dict(a)) for t, a in (attributes or {}).items()},
    }
    if types:
        edits["types"] = dict(types)
    report = _tensorkit.edit(os.fspath(path), edits, dry_run=dry_run, fsync=fsync)
    return EditReport(
        path=report["path"],
        format=report["format"],
        method=report["method"],
        changes=tuple(_change(c) for c in report["changes"]),
        dry_run=report["dry_run"],
        recovered=report["recovered"],
    )
