"""Writes testdata/{safetensors,ztensor,tensogram}/reference/: small files written by the
reference packages themselves,
with a JSON sidecar per file saying what each tensor holds, for tensorkit's interop trials
(crates/tensorkit-cli/tests/cli/reference.rs).

Run in a virtual environment with the pinned references:
    pip install numpy ml_dtypes torch huggingface_hub safetensors==0.8.0 ztensor==2.1.2
    python scripts/reference/interop.py
"""
import json
import math
import pathlib
import struct

import ml_dtypes
import numpy as np
import safetensors
import safetensors.numpy
import safetensors.torch
import torch
import ztensor

TESTDATA = pathlib.Path(__file__).parents[2] / "testdata"
# Each file goes to the reference folder of the format it is written in.
ST, ZT, TG = (TESTDATA / f / "reference" for f in ("safetensors", "ztensor", "tensogram"))
for d in (ST, ZT, TG):
    d.mkdir(parents=True, exist_ok=True)


def value_text(v):
    """A value as tensorkit's `get` prints it."""
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def describe(dtype, shape, data, values):
    return {"dtype": dtype, "shape": list(shape), "hex": bytes(data).hex(), "values": values}


def sidecar(name, package, version, tensors, **extra):
    doc = {"written_by": f"{package} {version}", "tensors": tensors, **extra}
    out = {"st": ST, "zt": ZT, "tg": TG}[name[:2]]
    (out / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


# --- safetensors: the dtypes added in 0.7/0.8, through torch (the path users take) ---------
u8 = lambda xs: torch.tensor(xs, dtype=torch.uint8)
f4_codes = [0x1, 0x2, 0x3, 0xC, 0x7, 0xF]  # 0.5 1 1.5 -2 6 -6
f4_bytes = bytes(f4_codes[i] | f4_codes[i + 1] << 4 for i in range(0, 6, 2))
nan_payload = struct.unpack("<f", bytes.fromhex("0100c0ff"))[0]  # a negative NaN with payload
c64 = np.array([1 + 2j, complex(math.inf, -math.inf), complex(nan_payload, -0.0)], np.complex64)
tensors = {
    "f4": u8(list(f4_bytes)).view(torch.float4_e2m1fn_x2),
    "e8m0": u8([127, 128, 0, 254, 255]).view(torch.float8_e8m0fnu),
    "e4m3fnuz": u8([0x00, 0x38, 0x80, 0xFF, 0x7F]).view(torch.float8_e4m3fnuz),
    "e5m2fnuz": u8([0x00, 0x3C, 0x80, 0xFF, 0x7F]).view(torch.float8_e5m2fnuz),
    "c64": torch.from_numpy(c64.copy()),
}
path = ST / "st_new_dtypes.safetensors"
safetensors.torch.save_file(tensors, path)
codes = np.array(f4_codes, np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
side = {
    "f4": describe("float4_e2m1", [6], f4_bytes, [value_text(v) for v in codes]),
    "c64": describe("complex64", [3], c64.tobytes(), None),
}
for name, ml in [("e8m0", "float8_e8m0fnu"), ("e4m3fnuz", "float8_e4m3fnuz"), ("e5m2fnuz", "float8_e5m2fnuz")]:
    data = tensors[name].view(torch.uint8).numpy().tobytes()
    vals = np.frombuffer(data, np.uint8).view(getattr(ml_dtypes, ml)).astype(np.float32)
    ours = {"e8m0": "float8_e8m0", "e4m3fnuz": "float8_e4m3fnuz", "e5m2fnuz": "float8_e5m2fnuz"}[name]
    side[name] = describe(ours, [len(data)], data, [value_text(v) for v in vals])
sidecar("st_new_dtypes", "safetensors", safetensors.__version__, side)

# --- zTensor 2: every registered logical type, an odd f4 count included --------------------
def zt_add(w, name, data, shape, dtype, logical):
    w.add(name, bytes(data), shape, dtype, logical=logical)

c128 = np.array([complex(-math.inf, math.inf), complex(struct.unpack("<d", bytes.fromhex("01000000000008f8"))[0], 2.5)], np.complex128)
f4_odd = bytes([0x21, 0xC3, 0x07])  # five elements: 0.5 1 1.5 -2 6, the last high nibble unused
logical = [  # name, data, shape, storage, logical, our dtype
    ("bool", bytes([1, 0, 1]), [3], "u8", "bool", "bool"),
    ("c128", c128.tobytes(), [2], "f64", "complex128", "complex128"),
    ("c64", c64.tobytes(), [3], "f32", "complex64", "complex64"),
    ("e4m3fn", bytes([0x38, 0xFE, 0x7F]), [3], "u8", "f8_e4m3fn", "float8_e4m3"),
    ("e4m3fnuz", bytes([0x38, 0x80]), [2], "u8", "f8_e4m3fnuz", "float8_e4m3fnuz"),
    ("e5m2", bytes([0x3C, 0x7C]), [2], "u8", "f8_e5m2", "float8_e5m2"),
    ("e5m2fnuz", bytes([0x3C, 0x80]), [2], "u8", "f8_e5m2fnuz", "float8_e5m2fnuz"),
    ("e8m0", bytes([127, 255]), [2], "u8", "f8_e8m0", "float8_e8m0"),
    ("e8m0fnu", bytes([126]), [1], "u8", "f8_e8m0fnu", "float8_e8m0"),
    ("f4", f4_odd, [5], "u8", "f4_e2m1", "float4_e2m1"),
]
path = ZT / "zt2_logical.zt"
with ztensor.Writer(str(path)) as w:
    for name, data, shape, storage, lt, _ in logical:
        zt_add(w, name, data, shape, storage, lt)
src = ztensor.open(str(path))
assert src.verify().checked == len(logical)
sidecar("zt2_logical", "ztensor", "2.1.2",
        {name: describe(ours, shape, data, None) for name, data, shape, _, _, ours in logical})

# --- zTensor 2: a file appended to (the first manifest stays behind, unreferenced) ---------
path = ZT / "zt2_appended.zt"
path.unlink(missing_ok=True)
a = np.arange(4, dtype=np.float32)
b = np.arange(3, dtype=np.int16)
with ztensor.Writer(str(path)) as w:
    w.add("a", a.tobytes(), [4], "f32")
with ztensor.Writer(str(path), canonical=False, append=True) as w:
    w.add("b", b.tobytes(), [3], "i16")
assert sorted(ztensor.open(str(path)).keys()) == ["a", "b"]
sidecar("zt2_appended", "ztensor", "2.1.2", {
    "a": describe("float32", [4], a.tobytes(), None),
    "b": describe("int16", [3], b.tobytes(), None),
})

# --- zTensor 2 canonical bytes: the same tensors as a safetensors file and as ztensor's ----
# canonical writer laid them out (blobs in name order, whatever order the source has).
canon = {
    "zeta": np.arange(5, dtype=np.float32),
    "alpha": np.arange(6, dtype=np.int64).reshape(2, 3),
    "Mid": np.array([1, 0, 1], dtype=np.bool_),
}
safetensors.numpy.save_file(canon, ZT / "zt2_canonical.safetensors", metadata={"origin": "reference"})
short = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64"}
with ztensor.Writer(str(ZT / "zt2_canonical.zt")) as w:
    w.set_attributes({"origin": "reference"})
    for name in sorted(canon):
        arr = canon[name]
        if arr.dtype == np.bool_:
            w.add(name, arr.view(np.uint8).tobytes(), list(arr.shape), "u8", logical="bool")
        else:
            w.add(name, arr.tobytes(), list(arr.shape), short[arr.dtype])
print("wrote", sorted(p.name for d in (ST, ZT, TG) for p in d.iterdir()))

# --- A Hugging Face shard set, as huggingface_hub writes one (index + three shards) --------
import huggingface_hub
import shutil

shard_dir = ST / "sharded"
shutil.rmtree(shard_dir, ignore_errors=True)
shard_dir.mkdir()
state = {
    "model.embed.weight": torch.arange(40, dtype=torch.float32).reshape(10, 4),
    "model.layers.0.w": torch.ones(8, 8),
    "model.layers.1.w": torch.zeros(8, 8, dtype=torch.float16),
    "lm_head.bias": torch.arange(5, dtype=torch.int64),
}
huggingface_hub.save_torch_state_dict(state, str(shard_dir), max_shard_size=300)

# --- Tensogram: szip with the restricted flag (128) on 8-bit samples, which the reference
# accepts and ignores ---------------------------------------------------------------------
import tensogram

u = (np.arange(64) % 3).astype(np.uint8)
desc = {"type": "ntensor", "ndim": 1, "shape": [64], "strides": [1], "dtype": "uint8",
        "byte_order": "little", "encoding": "none", "filter": "none", "compression": "szip",
        "szip_rsi": 4, "szip_block_size": 16, "szip_flags": 128 | 8}
(TG / "tgm_szip_restricted_flag.tgm").write_bytes(tensogram.encode({"base": [{"name": "u"}]}, [(desc, u)]))
sidecar("tgm_szip_restricted_flag", "tensogram", tensogram.__version__,
        {"u": describe("uint8", [64], u.tobytes(), None)})

# --- Tensogram: a NaN mask compressed with blosc2 (bit-shuffled, LZ4 inside) -------------
nan_field = np.array([1.0, np.nan, 3.0] * 100)
desc = {"type": "ntensor", "ndim": 1, "shape": [300], "strides": [1], "dtype": "float64",
        "byte_order": "little", "encoding": "none", "filter": "none", "compression": "none"}
(TG / "tgm_blosc2_mask.tgm.bin").write_bytes(tensogram.encode(
    {"base": [{"name": "m"}]}, [(desc, nan_field)], allow_nan=True, nan_mask_method="blosc2",
    small_mask_threshold_bytes=0))

# --- Tensogram: what tensorkit writes with --pipeline, decoded by tensogram itself --------
# Needs the tensorkit binary (TENSORKIT, default target/debug/tensorkit) and tensogram 0.24.
import hashlib
import os
import subprocess
import tempfile

import tensogram

rng = np.random.default_rng(1)
mixed = {
    "t2m": (280 + 10 * rng.standard_normal((30, 40))).astype(np.float64),
    "odd": rng.standard_normal(7),
    "w": rng.standard_normal(7).astype(np.float32),
    "h": np.arange(6, dtype=np.float16),
    "idx": np.arange(11, dtype=np.int32),
    "mask": np.array([True, False] * 5),
}
src = ST / "mixed.safetensors"
safetensors.numpy.save_file(mixed, src)
binary = os.environ.get("TENSORKIT", str(TESTDATA.parent / "target/debug/tensorkit"))
decoded = {}
for spec in ["simple_packing:16,szip", "simple_packing:12,shuffle,szip", "simple_packing:24,szip", "shuffle,zstd:-5", "lz4"]:
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "out.tgm"
        subprocess.run([binary, "convert", str(src), str(out), "--pipeline", spec], check=True, capture_output=True)
        msg = tensogram.decode(out.read_bytes())
        names = [b["name"] for b in msg.metadata.base]
        decoded[spec] = {
            n: hashlib.sha256(np.ascontiguousarray(o[1]).astype(o[1].dtype.newbyteorder("<")).tobytes()).hexdigest()
            for n, o in zip(names, msg.objects)
        }
(ST / "mixed.json").write_text(json.dumps({
    "written_by": f"safetensors {safetensors.__version__}",
    "decoded_by": f"tensogram {tensogram.__version__}",
    "note": "sha256 of each tensor's little-endian elements as tensogram decodes tensorkit's --pipeline output",
    "tensogram_decodes": decoded,
}, indent=1, sort_keys=True) + "\n")
print("wrote", sorted(p.name for d in (ST, ZT, TG) for p in d.iterdir()))
