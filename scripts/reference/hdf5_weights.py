"""Writes HDF5 files of weights into `testdata/hdf5/weights/`: a Keras 3 model saved whole
(`model.keras`, a zip archive) and its weights alone (`model.weights.h5`), by Keras with the
jax backend; a file in Keras 2's `.h5` layout (`model_weights/<layer>/<layer>/<var>:0` with
`layer_names` and `weight_names` attributes) and a plain one (groups, chunked and deflated,
big-endian, scalar and string datasets, attributes of several types), by h5py. Each has a
sidecar `<name>.json` of what h5py reads: every dataset of numbers by its path with dots
(dtype, shape, SHA-256 of its elements in C order, little-endian), every attribute by the
same name, and the datasets that hold no numbers. tensorkit's tests read them all.

    python -m venv env && env/bin/pip install keras==3.15.1 jax h5py==3.16.0 numpy
    KERAS_BACKEND=jax env/bin/python scripts/reference/hdf5_weights.py testdata/hdf5/weights
"""

import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

import h5py
import numpy as np


def dotted(path: str) -> str:
    return path.strip("/").replace("/", ".")


def attribute(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        items = [attribute(x) for x in v.reshape(-1)]
        return items[0] if len(items) == 1 else items
    if isinstance(v, np.generic):
        return v.item()
    return v


def describe(f: h5py.File) -> dict:
    tensors, left_out, attributes = {}, [], {}

    def attrs(name, obj):
        for k, v in obj.attrs.items():
            attributes[f"{dotted(name)}.{k}" if dotted(name) else k] = attribute(v)

    attrs("", f)

    def visit(name, obj):
        attrs(name, obj)
        if isinstance(obj, h5py.Dataset):
            if obj.dtype.kind in "biuf":
                a = np.array(obj[()], order="C")
                le = a.astype(a.dtype.newbyteorder("<"))
                tensors[dotted(name)] = {"dtype": str(a.dtype.newbyteorder("=").name), "shape": list(a.shape),
                                         "sha256": hashlib.sha256(le.tobytes()).hexdigest()}
            else:
                left_out.append(dotted(name))

    f.visititems(visit)
    return {"tensors": tensors, "attributes": attributes, "left_out": sorted(left_out)}


def keras_files(out: Path):
    import keras

    keras.utils.set_random_seed(3)
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="d1"),
                          keras.layers.LayerNormalization(name="ln"), keras.layers.Dense(2, name="d2")])
    m.save(out / "model.keras")
    m.save_weights(out / "model.weights.h5")
    with h5py.File(out / "model.weights.h5") as f:
        (out / "model.weights.json").write_text(json.dumps(describe(f), indent=1) + "\n")
    with zipfile.ZipFile(out / "model.keras") as z, h5py.File(io.BytesIO(z.read("model.weights.h5"))) as f:
        side = describe(f)
        side["config"] = json.loads(z.read("config.json"))
        (out / "model.json").write_text(json.dumps(side, indent=1) + "\n")


def keras2_layout(path: Path):
    rng = np.random.default_rng(5)
    with h5py.File(path, "w") as f:
        f.attrs["keras_version"] = "2.15.0"
        f.attrs["backend"] = "tensorflow"
        mw = f.create_group("model_weights")
        mw.attrs["layer_names"] = np.array([b"dense", b"dense_1"])
        for layer, shape in [("dense", (4, 3)), ("dense_1", (3, 2))]:
            g = mw.create_group(layer)
            g.attrs["weight_names"] = np.array([f"{layer}/kernel:0".encode(), f"{layer}/bias:0".encode()])
            inner = g.create_group(layer)
            inner.create_dataset("kernel:0", data=rng.standard_normal(shape).astype(np.float32))
            inner.create_dataset("bias:0", data=rng.standard_normal(shape[1]).astype(np.float32))


def plain(path: Path):
    rng = np.random.default_rng(6)
    with h5py.File(path, "w") as f:
        f.attrs["title"] = "plain h5py"
        f.attrs["version"] = np.int32(3)
        f.attrs["scale"] = np.array([0.5, 2.0])
        f.attrs["flags"] = np.array([1, 2, 3], dtype=np.uint8)
        g = f.create_group("encoder/block0")
        g.attrs["heads"] = np.int64(8)
        g.create_dataset("w", data=rng.standard_normal((16, 8)).astype(np.float16))
        g.create_dataset("chunked", data=rng.standard_normal((40, 30)), chunks=(8, 10), compression="gzip", shuffle=True)
        f.create_dataset("big_endian", data=np.arange(6, dtype=">i4").reshape(2, 3))
        f.create_dataset("scalar", data=np.float64(1.25))
        f.create_dataset("names", data=np.array([b"a", b"bc"]))
        f.create_dataset("compound", data=np.zeros(2, dtype=[("x", "<f4"), ("y", "<i2")]))


def main(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    keras_files(out)
    keras2_layout(out / "keras2_layout.h5")
    plain(out / "plain.h5")
    for name in ["keras2_layout", "plain"]:
        with h5py.File(out / f"{name}.h5") as f:
            (out / f"{name}.json").write_text(json.dumps(describe(f), indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
