"""HDF5 files of weights (Keras' `.h5` in both layouts, plain h5py files) and Keras
archives read through tensorkit as h5py reads them: datasets by their paths with dots,
attributes as metadata; NetCDF-4 files stay NetCDF."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest

import tensorkit

TESTDATA = Path(os.environ.get("TENSORKIT_TESTDATA", Path(__file__).parents[4] / "testdata"))
WEIGHTS = TESTDATA / "hdf5" / "weights"


def datasets(f: h5py.File) -> dict[str, np.ndarray]:
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "biuf":
            out[name.replace("/", ".")] = obj[()]

    f.visititems(visit)
    return out


@pytest.mark.parametrize("path", sorted(WEIGHTS.glob("*.h5")), ids=lambda p: p.name)
def test_h5_read_as_h5py_reads_it(path):
    with h5py.File(path) as f:
        theirs = datasets(f)
        root = {k: v for k, v in f.attrs.items()}
    with tensorkit.open(path) as ours:
        assert ours.format == "hdf5"
        assert sorted(ours.keys()) == sorted(theirs)
        for k, v in theirs.items():
            got = ours[k]
            assert got.dtype == v.dtype.newbyteorder("=") and got.shape == v.shape, k
            assert np.array_equal(got, v), k
        for k, v in root.items():
            want = v.decode() if isinstance(v, bytes) else np.asarray(v).tolist()
            assert ours.metadata[k] == want, k


def test_keras_archive_read_as_its_weights_file():
    with zipfile.ZipFile(WEIGHTS / "model.keras") as z, h5py.File(io.BytesIO(z.read("model.weights.h5"))) as f:
        theirs = datasets(f)
        config = z.read("config.json")
    with tensorkit.open(WEIGHTS / "model.keras") as ours:
        assert ours.format == "keras"
        assert sorted(ours.keys()) == sorted(theirs)
        for k, v in theirs.items():
            assert np.array_equal(ours[k], v), k
        assert ours.metadata["keras.config"]["class_name"] == "Sequential"
        assert b"Sequential" in config


def test_weights_convert_to_safetensors(tmp_path):
    out = tmp_path / "w.safetensors"
    tensorkit.convert(WEIGHTS / "keras2_layout.h5", out)
    with h5py.File(WEIGHTS / "keras2_layout.h5") as f:
        theirs = datasets(f)
    with tensorkit.open(out) as back:
        assert sorted(back.keys()) == sorted(theirs)
        for k, v in theirs.items():
            assert np.array_equal(back[k], v), k
        assert json.loads(back.metadata["model_weights.layer_names"]) == ["dense", "dense_1"]


def test_netcdf4_files_stay_netcdf():
    for p in sorted((TESTDATA / "hdf5" / "reference").glob("*.nc")):
        with tensorkit.open(p) as f:
            assert f.format == "netcdf", p
