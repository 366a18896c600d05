"""An anemoi-inference output (``output: {tensogram: {path: ...}}``): each forecast step is
appended to a Tensogram file as one message, as tensogram-anemoi writes it, through tensorkit.

A message holds ``grid_latitude`` and ``grid_longitude`` (float64, the state's points), then
one object per field — or, with ``stack_pressure_levels``, one ``(points, levels)`` object per
pressure-level parameter, its levels ascending in ``mars.levelist``. Each object's ``base``
entry names it (``name``, ``anemoi.variable``), gives its ``dim_names`` and its ``mars`` keys:
the run's ``date``, ``time`` and ``step`` (hours) with the variable's GRIB keys from the
checkpoint; ``_extra_.dim_names`` maps axis lengths to names (``{"40320": "values"}``), as
tensogram's xarray engine reads them. Options: ``encoding`` (``"none"`` or
``"simple_packing"``, which needs ``bits`` and writes float64), ``compression``, ``dtype`` of the
fields, ``hash``, and ``fsync`` (each step synced to disk before the run goes on). Each step is
encoded and appended whole as soon as it is written; nothing is held for the next.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np
from anemoi.inference.decorators import main_argument
from anemoi.inference.output import Output

from . import _tensorkit
from .tensogram import encode

LOG = logging.getLogger(__name__)

_COORDINATES = (("latitude", "latitudes", "grid_latitude"), ("longitude", "longitudes", "grid_longitude"))


@main_argument("path")
class TensogramOutput(Output):
    """Appends each step of an anemoi-inference run to a Tensogram file (see the module)."""

    def __init__(
        self,
        context: Any,
        metadata: Any,
        path: str,
        *,
        encoding: str = "none",
        bits: int | None = None,
        compression: str = "zstd",
        dtype: str = "float32",
        hash: str | None = "xxh3",
        stack_pressure_levels: bool = False,
        fsync: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(context, metadata, **kwargs)
        if encoding not in ("none", "simple_packing"):
            raise ValueError(f"encoding {encoding!r}: 'none' or 'simple_packing'")
        if encoding == "simple_packing" and bits is None:
            raise ValueError("encoding='simple_packing' needs bits (bits per value)")
        self.path = os.fspath(path)
        self.encoding, self.bits, self.compression = encoding, bits, compression
        self.dtype = np.dtype(dtype)
        self.hash, self.fsync = hash, fsync
        self.stack_pressure_levels = stack_pressure_levels
        self._open = False

    def __repr__(self) -> str:
        return f"TensogramOutput({self.path!r})"

    def open(self, state: Any) -> None:
        """Starts the file (an existing one is replaced)."""
        parent = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(parent, exist_ok=True)
        with open(self.path, "wb"):
            pass
        self._open = True

    def close(self) -> None:
        self._open = False

    def write_initial_state(self, state: Any) -> None:
        """The initial state, its multi-step fields reduced to their last step."""
        return super().write_initial_state(self.reduce(state))

    def write_step(self, state: Any) -> None:
        """Encodes the step as one message and appends it."""
        if not self._open:
            raise RuntimeError(f"{self!r}: write_step before open() or after close()")
        step = state["step"]
        seconds = step.total_seconds()
        hours = int(seconds // 3600) if seconds % 3600 == 0 else seconds / 3600
        base_date = state["date"] - step
        run = {"date": int(base_date.strftime("%Y%m%d")), "time": int(base_date.strftime("%H%M")), "step": hours}
        base: list[dict[str, Any]] = []
        objects: list[tuple[dict[str, Any], np.ndarray]] = []
        for variable, key, name in _COORDINATES:
            values = np.ascontiguousarray(state[key], dtype=np.float64)
            base.append({"name": name, "anemoi": {"variable": variable}, "dim_names": [variable]})
            objects.append(({"type": "ntensor", "shape": list(values.shape), "dtype": "float64"}, values))
        stacks: dict[str, list[tuple[Any, str, dict[str, Any], np.ndarray]]] = {}
        for name, values in state["fields"].items():
            if self.skip_variable(name):
                continue
            variable = self.typed_variables.get(name)
            grib = dict(getattr(variable, "grib_keys", None) or {})
            if variable is None:
                LOG.warning("TensogramOutput: no typed variable for %r: its mars keys are the run's only", name)
            if self.stack_pressure_levels and variable is not None and getattr(variable, "is_pressure_level", False):
                stacks.setdefault(variable.param, []).append((variable.level, name, grib, values))
                continue
            base.append({"name": name, "anemoi": {"variable": name}, "dim_names": ["values"], "mars": {**run, **grib}})
            objects.append(self._object(np.asarray(values)))
        for param in sorted(stacks):
            group = sorted(stacks[param], key=lambda g: g[0])
            mars = {**run, **{k: v for k, v in group[0][2].items() if k != "level"}, "levelist": [g[0] for g in group]}
            base.append({"name": param, "anemoi": {"variable": param}, "dim_names": ["values", "level"], "mars": mars})
            objects.append(self._object(np.column_stack([np.asarray(g[3]) for g in group])))
        points = len(state["latitudes"])
        dim_names = {str(points): "values"}
        for (desc, _), entry in zip(objects, base):
            if entry["dim_names"] == ["values", "level"]:
                dim_names.setdefault(str(desc["shape"][1]), "level")
        message = encode({"base": base, "_extra_": {"dim_names": dim_names}}, objects, hash=self.hash)
        _tensorkit.tgm_append(self.path, message, fsync=self.fsync)

    def _object(self, values: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
        a = np.ascontiguousarray(values, dtype=np.float64 if self.encoding == "simple_packing" else self.dtype)
        desc: dict[str, Any] = {"type": "ntensor", "shape": list(a.shape), "dtype": a.dtype.name,
                                "encoding": self.encoding, "compression": self.compression}
        if self.encoding == "simple_packing":
            desc["sp_bits_per_value"] = int(self.bits or 0)
        return desc, a
