"""Writes `.npy` and `.npz` files with numpy (and ml_dtypes for the machine-learning floats)
into `testdata/numpy/reference/`, each with a sidecar `<name>.json` of what numpy.load gives:
every array by name (dtype, shape, and the SHA-256 of its elements in C order,
little-endian); and files numpy writes that tensorkit refuses in `testdata/numpy/malicious/`
(object arrays, whose elements are pickles; structured arrays; a header that lies).
`crates/tensor-numpy/tests/numpy/` reads them all.

    python -m venv env && env/bin/pip install numpy==2.4.6 ml_dtypes==0.6.0
    env/bin/python scripts/reference/numpy_files.py testdata/numpy
"""

import hashlib
import io
import json
import sys
from pathlib import Path

import ml_dtypes
import numpy as np


def describe(a: np.ndarray) -> dict:
    if a.dtype.kind in "Mm":
        # Dates and time spans: their 64-bit counts of the unit, NumPy's type beside them.
        d = describe(a.view(np.int64))
        d["numpy_dtype"] = a.dtype.name
        return d
    c = np.ascontiguousarray(a)
    if c.dtype.byteorder == ">":
        c = c.astype(c.dtype.newbyteorder("<"))
    name = c.dtype.name
    return {"dtype": name, "shape": list(a.shape), "sha256": hashlib.sha256(c.tobytes()).hexdigest()}


def arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    base = rng.standard_normal((3, 4)) * 8
    out = {}
    for t in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]:
        if t == "bool":
            out[t] = base > 0
        elif t.startswith("complex"):
            out[t] = (base + 1j * base[::-1]).astype(t)
        else:
            out[t] = np.abs(base).astype(t) if t.startswith("u") else base.astype(t)
    for t in ML_DTYPES:
        out[t] = (np.abs(base) if t == "float8_e8m0fnu" else base).astype(getattr(ml_dtypes, t))
    return out


ML_DTYPES = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
             "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"]


def save(path: Path, a: np.ndarray):
    """numpy.save, but for ml_dtypes' types: numpy.save writes those as raw void ('<V2'),
    losing the type, so their header names it ('bfloat16'), as tensorkit writes them and as
    numpy.load reads them back once ml_dtypes is imported (checked here)."""
    if a.dtype.name not in ML_DTYPES:
        np.save(path, a)
        return
    header = {"descr": a.dtype.name, "fortran_order": bool(a.flags.f_contiguous and not a.flags.c_contiguous), "shape": a.shape}
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
        f.write(a.tobytes(order="F" if header["fortran_order"] else "C"))
    back = np.load(path)
    assert back.dtype == a.dtype and np.array_equal(bits(back), bits(a)), path


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def main(root: Path):
    ref = root / "reference"
    bad = root / "malicious"
    ref.mkdir(parents=True, exist_ok=True)
    bad.mkdir(parents=True, exist_ok=True)
    every = arrays()
    for name, a in every.items():
        save(ref / f"{name}.npy", a)
        (ref / f"{name}.json").write_text(json.dumps({"arrays": {name: describe(a)}}, indent=1) + "\n")
    special = {
        "big_endian": np.arange(6, dtype=">f8").reshape(2, 3),
        "fortran": np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)),
        "scalar": np.array(2.5, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.int16),
        "fortran_bf16": np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3).astype(ml_dtypes.bfloat16)),
        "datetime": np.array(["2020-01-01T00:00", "2026-11-29T12:30"], dtype="datetime64[s]"),
        "timedelta": np.array([1, -2, 3], dtype="timedelta64[ms]"),
    }
    for name, a in special.items():
        save(ref / f"{name}.npy", a)
        (ref / f"{name}.json").write_text(json.dumps({"arrays": {name: describe(a)}}, indent=1) + "\n")
    for version in [(2, 0), (3, 0)]:
        a = np.arange(5, dtype=np.uint16)
        name = f"version_{version[0]}"
        with open(ref / f"{name}.npy", "wb") as f:
            np.lib.format.write_array(f, a, version=version)
        (ref / f"{name}.json").write_text(json.dumps({"arrays": {name: describe(a)}}, indent=1) + "\n")
    plain = {k: every[k] for k in ["float32", "int64", "bool", "complex64"]} | {"fortran": special["fortran"]}
    np.savez(ref / "savez.npz", **plain)
    np.savez_compressed(ref / "savez_compressed.npz", **plain)
    for n in ["savez", "savez_compressed"]:
        (ref / f"{n}.json").write_text(json.dumps({"arrays": {k: describe(v) for k, v in plain.items()}}, indent=1) + "\n")
    np.save(bad / "void_bfloat16.npy", every["bfloat16"])  # '<V2': the type is lost
    np.save(bad / "object_array.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    # An archive of arrays and an object array: the arrays read, the object array named.
    np.savez(ref / "object_member.npz", ok=np.arange(3.0), obj=np.array([1, "x"], dtype=object),
             words=np.array(["ab", "c"]))
    (ref / "object_member.json").write_text(json.dumps(
        {"arrays": {"ok": describe(np.arange(3.0))}, "left_out": ["obj", "words"]}, indent=1) + "\n")
    np.save(bad / "structured.npy", np.zeros(3, dtype=[("x", "<f4"), ("y", "<i2")]))
    np.save(bad / "strings.npy", np.array(["ab", "c"]))
    # A header that claims more elements than the file holds.
    buf = io.BytesIO()
    np.save(buf, np.zeros(4, dtype=np.float64))
    (bad / "shape_too_large.npy").write_bytes(buf.getvalue().replace(b"(4,)", b"(9,)"))
    (bad / "README.md").write_text(
        "Files numpy writes that tensorkit refuses (object arrays need pickle; structured and\n"
        "string arrays are not tensors; numpy.save of an ml_dtypes array writes raw void\n"
        "elements, '<V2', which say nothing of their type) and a `.npy` whose header claims more elements than it\n"
        "holds, written by `scripts/reference/numpy_files.py`.\n"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
