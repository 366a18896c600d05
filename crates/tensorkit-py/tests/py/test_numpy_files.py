"""NumPy's .npy and .npz files: read by tensorkit as numpy.load reads them (the files
scripts/reference/numpy_files.py wrote, and files numpy writes here), and what tensorkit
writes read by numpy.load; object arrays refused."""

from __future__ import annotations

import os
from pathlib import Path

import ml_dtypes  # noqa: F401 (registers bfloat16 and the float8 names with numpy)
import numpy as np
import pytest

import tensorkit

TESTDATA = Path(os.environ.get("TENSORKIT_TESTDATA", Path(__file__).parents[4] / "testdata"))
REFERENCE = TESTDATA / "numpy" / "reference"
MALICIOUS = TESTDATA / "numpy" / "malicious"


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bits (NaN-safe)."""
    return a.dtype == b.dtype and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@pytest.mark.parametrize("path", sorted(REFERENCE.glob("*.np[yz]")), ids=lambda p: p.name)
def test_read_as_numpy_loads(path):
    theirs = np.load(path)
    if isinstance(theirs, np.ndarray):
        arrays = {path.stem: theirs}
    else:
        # Object and string members are named, not read (numpy itself needs allow_pickle).
        arrays = {}
        for k in theirs.files:
            try:
                a = theirs[k]
            except ValueError:
                continue
            if a.dtype.kind not in "OUS":
                arrays[k] = a
    with tensorkit.open(path) as f:
        assert sorted(f.keys()) == sorted(arrays)
        for name, a in arrays.items():
            ours = f[name]
            if a.dtype.kind in "Mm":
                # Dates and time spans: their integers, NumPy's type in the metadata.
                assert np.array_equal(ours, a.view(np.int64)), name
                assert f.metadata[f"{name}.numpy_dtype"] == a.dtype.name
            elif a.dtype.kind == "V" or a.dtype.name.startswith(("float4", "float6")):
                # 4- and 6-bit floats: tensorkit packs them; compared by value.
                assert np.array_equal(ours.astype(np.float32), a.astype(np.float32), equal_nan=True), name
            else:
                assert same(ours, a.astype(a.dtype.newbyteorder("="))), name


@pytest.mark.parametrize("ext", ["npz", "npy"])
def test_written_files_load_in_numpy(tmp_path, ext):
    rng = np.random.default_rng(2)
    arrays = {
        "w": rng.standard_normal((4, 5)).astype(np.float32),
        "ids": np.arange(7, dtype=np.int64),
        "mask": rng.standard_normal(6) > 0,
        "bf": rng.standard_normal((2, 3)).astype(ml_dtypes.bfloat16),
        "t": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    }
    if ext == "npy":
        arrays = {"w": arrays["t"]}
    path = tmp_path / f"out.{ext}"
    tensorkit.save(path, arrays)
    back = np.load(path)
    got = {path.stem: back} if ext == "npy" else {k: back[k] for k in back.files}
    if ext == "npy":
        got = {"w": back}
    assert sorted(got) == sorted(arrays)
    for k, a in arrays.items():
        assert same(got[k], np.ascontiguousarray(a)), k


def test_converted_checkpoint_loads_in_numpy(tmp_path):
    src = TESTDATA / "pytorch" / "reference" / "safetensors_dtypes.pt"
    out = tmp_path / "weights.npz"
    tensorkit.convert(src, out)
    back = np.load(out)
    with tensorkit.open(src) as f:
        assert sorted(back.files) == sorted(f.keys())
        for k in back.files:
            assert same(back[k], f[k]), k


@pytest.mark.parametrize("path", sorted(MALICIOUS.glob("*.np[yz]")), ids=lambda p: p.name)
def test_refused(path):
    with pytest.raises(tensorkit.TensorkitError) as e:
        tensorkit.open(path)
    assert e.value.kind in {"unsupported", "truncated"}
