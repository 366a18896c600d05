"""earthkit-data's plugins, from earthkit-data 1.x on PyPI: ``from_source("tensorkit", ...)``
against earthkit's own GRIB reading (ecCodes) on the reference GRIB files, Tensogram fields by
their MARS keys, and ``to_target(..., encoder="tensogram")`` round trips."""

from __future__ import annotations

import glob

import numpy as np
import pytest

ekd = pytest.importorskip("earthkit.data")
import tensogram as reference  # noqa: E402

from tensorkit import tensogram  # noqa: E402

KEYS = [
    "parameter.variable",
    "parameter.units",
    "time.base_datetime",
    "time.step",
    "time.valid_datetime",
    "vertical.level",
    "vertical.level_type",
    "ensemble.member",
]


def _grib_files(testdata):
    return sorted(glob.glob(str(testdata / "grib" / "reference" / "*.grib*")))


def _same_fields(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
        assert [(k, str(a.get(k, default=None))) for k in KEYS] == [(k, str(b.get(k, default=None))) for k in KEYS]


def test_the_source_gives_what_earthkit_reads_through_eccodes(testdata):
    files = _grib_files(testdata)
    assert len(files) >= 10
    for path in files:
        ours = ekd.from_source("tensorkit", path).to_fieldlist()
        theirs = ekd.from_source("file", path).to_fieldlist()
        _same_fields(ours, theirs)
        for a, b in zip(ours, theirs):
            try:
                lats = b.geography.latitudes()
            except Exception:
                continue
            if a.get("geography.shape") == b.get("geography.shape") and a.geography.latitudes() is not None:
                np.testing.assert_allclose(a.geography.latitudes(), lats)


def test_tensogram_fields_select_and_read_by_mars_keys(tmp_path):
    desc = {"type": "ntensor", "shape": [19, 36], "dtype": "float64"}
    lat, lon = np.linspace(90, -90, 19), np.arange(0, 360, 10.0)
    with tensogram.TensogramFile.create(tmp_path / "fc.tgm") as f:
        for step in (0, 6):
            f.append(
                {"base": [{"name": "latitude"}, {"name": "longitude"}]
                 + [{"mars": {"param": p, "date": 20260101, "time": 1200, "step": step, "levtype": "pl", "levelist": 500}} for p in ("t", "z")]},
                [({"type": "ntensor", "shape": [19], "dtype": "float64"}, lat), ({"type": "ntensor", "shape": [36], "dtype": "float64"}, lon)]
                + [(desc, np.full((19, 36), 100.0 * i + step)) for i in range(2)],
            )
    fl = ekd.from_source("tensorkit", str(tmp_path / "fc.tgm")).to_fieldlist()
    assert len(fl) == 4
    z = fl.sel(**{"parameter.variable": "z"})
    assert [f.get("time.step").total_seconds() / 3600 for f in z] == [0, 6]
    assert z[1].get("vertical.level") == 500 and z[1].get("vertical.level_type") == "pressure"
    assert str(z[1].get("time.valid_datetime")) == "2026-01-01 18:00:00"
    np.testing.assert_array_equal(z[1].to_numpy(), np.full((19, 36), 106.0))
    np.testing.assert_array_equal(z[0].geography.latitudes()[:, 0], lat)
    assert z[0].get("labels.mars")["levelist"] == 500
    ds = fl.to_xarray()
    assert set(ds.data_vars) == {"t", "z"}


def test_the_encoder_writes_what_the_source_and_tensogram_read_back(tmp_path, testdata):
    for path in _grib_files(testdata):
        fl = ekd.from_source("file", path).to_fieldlist()
        out = tmp_path / "out.tgm"
        fl.to_target("file", str(out), encoder="tensogram")
        _same_fields(ekd.from_source("tensorkit", str(out)).to_fieldlist(), fl)
        meta, objects = reference.TensogramFile.open(str(out)).decode_message(0, verify_hash=True)
        fields = [(b, a) for b, (_, a) in zip(meta.base, objects) if "mars" in b]
        assert len(fields) == len(fl)
        np.testing.assert_array_equal(fields[0][1], fl[0].to_numpy())
    # xarray in, with the pipeline given.
    ds = ekd.from_source("file", _grib_files(testdata)[-1]).to_fieldlist().to_xarray()
    out = tmp_path / "ds.tgm"
    ekd.to_target("file", str(out), data=ds, encoder="tensogram", pipeline={"compression": "zstd"})
    with tensogram.TensogramFile.open(out) as f:
        described = f.file_decode_descriptors(0)
    names = [b["name"] for b in described["metadata"].base]
    assert set(ds.data_vars) <= set(names)
    var = next(iter(ds.data_vars))
    i = names.index(var)
    assert described["descriptors"][i].compression == "zstd"
    np.testing.assert_array_equal(tensogram.TensogramFile.open(out).file_decode_object(0, i)["data"], ds[var].values)
