"""Writes ONNX models with the onnx package into `testdata/onnx/reference/`, each with a
sidecar `<name>.json` of what `onnx.numpy_helper.to_array` gives of its graph's
initializers: by name, dtype, shape, and the SHA-256 of the elements in C order,
little-endian (4-bit types: as stored, two to a byte); the initializers that hold no
numbers (strings) named; the model's `metadata_props`. And models tensorkit must refuse in
`testdata/onnx/malicious/`. `crates/tensor-onnx/tests/onnx/` reads them all.

    python -m venv env && env/bin/pip install onnx==1.23.2 numpy ml_dtypes
    env/bin/python scripts/reference/onnx_models.py testdata/onnx
"""

import hashlib
import json
import shutil
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NAMES = {
    TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64", TensorProto.FLOAT16: "float16",
    TensorProto.BFLOAT16: "bfloat16", TensorProto.INT8: "int8", TensorProto.INT16: "int16",
    TensorProto.INT32: "int32", TensorProto.INT64: "int64", TensorProto.UINT8: "uint8",
    TensorProto.UINT16: "uint16", TensorProto.UINT32: "uint32", TensorProto.UINT64: "uint64",
    TensorProto.BOOL: "bool", TensorProto.COMPLEX64: "complex64", TensorProto.COMPLEX128: "complex128",
    TensorProto.FLOAT8E4M3FN: "float8_e4m3fn", TensorProto.FLOAT8E5M2: "float8_e5m2",
    TensorProto.FLOAT8E4M3FNUZ: "float8_e4m3fnuz", TensorProto.FLOAT8E5M2FNUZ: "float8_e5m2fnuz",
}


def describe(model_path: Path) -> dict:
    m = onnx.load(model_path, load_external_data=False)
    base = str(model_path.parent)
    tensors, left_out = {}, []
    for t in m.graph.initializer:
        if t.data_type == TensorProto.STRING:
            left_out.append(t.name)
            continue
        a = numpy_helper.to_array(t, base_dir=base)
        c = np.ascontiguousarray(a)
        tensors[t.name] = {"dtype": NAMES[t.data_type], "shape": list(t.dims),
                           "sha256": hashlib.sha256(c.tobytes()).hexdigest()}
    meta = {p.key: p.value for p in m.metadata_props}
    return {"tensors": tensors, "left_out": left_out, "metadata": meta,
            "producer": m.producer_name, "ir_version": m.ir_version}


def model(initializers, name="m", meta=None):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    node = helper.make_node("Identity", ["x"], ["y"])
    g = helper.make_graph([node], name, [x], [y], initializer=initializers)
    m = helper.make_model(g, producer_name="tensorkit-fixtures", opset_imports=[helper.make_opsetid("", 21)])
    for k, v in (meta or {}).items():
        p = m.metadata_props.add()
        p.key, p.value = k, v
    return m


def arrays():
    rng = np.random.default_rng(9)
    base = rng.standard_normal((3, 4)) * 4
    out = {}
    for t in ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16",
              "uint32", "uint64", "bool", "complex64", "complex128"]:
        if t == "bool":
            out[t] = base > 0
        elif t.startswith("complex"):
            out[t] = (base + 1j * base).astype(t)
        elif t.startswith("u"):
            out[t] = np.abs(base).astype(t)
        else:
            out[t] = base.astype(t)
    for t in ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]:
        out[t] = base.astype(getattr(ml_dtypes, t))
    return out


def main(root: Path):
    ref, bad = root / "reference", root / "malicious"
    for d in (ref, bad):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    every = arrays()
    # raw_data, as exporters write initializers.
    raw = [numpy_helper.from_array(a, name) for name, a in every.items()]
    onnx.save(model(raw, meta={"license": "MIT", "author": "fixtures"}), ref / "raw.onnx")
    # Typed fields (float_data, int32_data, int64_data, double_data, uint64_data).
    typed = []
    for name, a in every.items():
        dt = helper.np_dtype_to_tensor_dtype(a.dtype)
        typed.append(helper.make_tensor(name, dt, a.shape, a.reshape(-1).tolist() if a.dtype.kind in "biufc" else a.reshape(-1), raw=False))
    typed.append(helper.make_tensor("scalar", TensorProto.FLOAT, [], [1.5]))
    typed.append(helper.make_tensor("empty", TensorProto.INT64, [0, 3], []))
    typed.append(helper.make_tensor("labels", TensorProto.STRING, [2], [b"cat", b"dog"]))
    onnx.save(model(typed), ref / "typed.onnx")
    # External data: every initializer in one file beside the model.
    ext = model([numpy_helper.from_array(every[k], k) for k in ["float32", "int64", "bfloat16", "float16"]])
    (ref / "external").mkdir()
    onnx.save_model(ext, ref / "external" / "model.onnx", save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    for p in [ref / "raw.onnx", ref / "typed.onnx", ref / "external" / "model.onnx"]:
        p.with_suffix(".json").write_text(json.dumps(describe(p), indent=1) + "\n")
    # Hostile: external data that climbs out of the model's folder, or runs past its file;
    # raw data shorter than the shape.
    for name, location, extra in [("traversal", "../../../etc/passwd", {}), ("absolute", "/etc/passwd", {}),
                                  ("past_end", "weights.bin", {"offset": "0", "length": "1000000"})]:
        m = model([numpy_helper.from_array(every["float32"], "w")])
        t = m.graph.initializer[0]
        t.data_location = TensorProto.EXTERNAL
        t.ClearField("raw_data")
        for k, v in {"location": location, **extra}.items():
            e = t.external_data.add()
            e.key, e.value = k, v
        (bad / name).mkdir()
        (bad / name / "weights.bin").write_bytes(every["float32"].tobytes())
        onnx.save(m, bad / name / "model.onnx")
    short = model([numpy_helper.from_array(every["float32"], "w")])
    short.graph.initializer[0].raw_data = short.graph.initializer[0].raw_data[:10]
    onnx.save(short, bad / "raw_too_short.onnx")
    (bad / "README.md").write_text(
        "ONNX models tensorkit refuses, written by `scripts/reference/onnx_models.py`: external data\n"
        "whose location climbs out of the model's folder or is absolute, or whose range runs past its\n"
        "file, and raw data shorter than its shape.\n"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
