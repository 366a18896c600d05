"""tensorkit's anemoi-inference output, from anemoi-inference on PyPI (which needs torch, so it
lives in this suite's environment): created through anemoi's own output registry from a run's
configuration, fed a small synthetic state (no model weights), its file read back by
tensogram 0.24."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import numpy as np
import pytest

anemoi_outputs = pytest.importorskip("anemoi.inference.outputs")
import tensogram as reference  # noqa: E402
from anemoi.transform.variables import Variable  # noqa: E402

from tensorkit import tensogram  # noqa: E402
from tensorkit.anemoi import TensogramOutput  # noqa: E402

POINTS = 40
MARS = {
    "2t": {"param": "2t", "levtype": "sfc"},
    "msl": {"param": "msl", "levtype": "sfc"},
    "t_850": {"param": "t", "levtype": "pl", "levelist": 850},
    "t_500": {"param": "t", "levtype": "pl", "levelist": 500},
}


def _run(config):
    variables = {n: Variable.from_dict(n, {"mars": m}) for n, m in MARS.items()}
    metadata = SimpleNamespace(dataset_name=None, typed_variables=variables)
    context = SimpleNamespace(
        reference_date=dt.datetime(2026, 1, 1, 12), typed_variables={}, write_initial_state=False, output_frequency=None
    )
    return anemoi_outputs.create_output(context, config, metadata)


def _state(hours):
    return {
        "date": dt.datetime(2026, 1, 1, 12) + dt.timedelta(hours=hours),
        "step": dt.timedelta(hours=hours),
        "latitudes": np.linspace(-90, 90, POINTS),
        "longitudes": np.linspace(0, 359, POINTS),
        "fields": {name: np.arange(POINTS, dtype=np.float32) + 100 * i + hours for i, name in enumerate(MARS)},
    }


def test_each_step_is_appended_as_one_message(tmp_path):
    path = tmp_path / "run" / "forecast.tgm"
    out = _run({"tensogram": {"path": str(path), "write_initial_state": True}})
    assert isinstance(out, TensogramOutput)
    initial = _state(0)
    initial["fields"] = {k: np.stack([v - 1, v]) for k, v in initial["fields"].items()}  # two input steps
    out.open(initial)
    out.write_initial_state(initial)
    for h in (6, 12):
        out.write_state(_state(h))
    out.close()
    f = reference.TensogramFile.open(str(path))
    assert f.message_count() == 3
    for m, hours in enumerate((0, 6, 12)):
        meta, objects = f.decode_message(m, verify_hash=True)
        names = [b["name"] for b in meta.base]
        assert names == ["grid_latitude", "grid_longitude", *MARS]
        np.testing.assert_array_equal(objects[0][1], np.linspace(-90, 90, POINTS))
        t850 = meta.base[names.index("t_850")]
        assert t850["mars"] == {"date": 20260101, "time": 1200, "step": hours, "param": "t", "levtype": "pl", "levelist": 850}
        np.testing.assert_array_equal(objects[names.index("msl")][1], _state(hours)["fields"]["msl"])
        assert meta.extra["dim_names"] == {str(POINTS): "values"}


def test_pressure_levels_stack_and_the_pipeline_is_the_run_s(tmp_path):
    path = tmp_path / "stacked.tgm"
    out = _run({"tensogram": {"path": str(path), "stack_pressure_levels": True, "encoding": "simple_packing", "bits": 16, "compression": "zstd"}})
    out.open(_state(6))
    out.write_state(_state(6))
    out.close()
    with tensogram.TensogramFile.open(path) as f:
        described = f.file_decode_descriptors(0)
        meta = described["metadata"]
        names = [b["name"] for b in meta.base]
        assert names == ["grid_latitude", "grid_longitude", "2t", "msl", "t"]
        t = meta.base[4]
        assert t["mars"]["levelist"] == [500, 850] and t["dim_names"] == ["values", "level"]
        d = described["descriptors"][4]
        assert (d.encoding, d.compression, tuple(d.shape), d.dtype) == ("simple_packing", "zstd", (POINTS, 2), "float64")
        stacked = f.file_decode_object(0, 4)["data"]
    fields = _state(6)["fields"]
    np.testing.assert_allclose(stacked, np.column_stack([fields["t_500"], fields["t_850"]]), atol=0.01)
    assert meta.extra["dim_names"] == {str(POINTS): "values", "2": "level"}


def test_misuse_is_refused(tmp_path):
    with pytest.raises(ValueError, match="bits"):
        _run({"tensogram": {"path": str(tmp_path / "x.tgm"), "encoding": "simple_packing"}})
    out = _run({"tensogram": str(tmp_path / "x.tgm")})
    with pytest.raises(RuntimeError, match="open"):
        out.write_step(_state(0))
