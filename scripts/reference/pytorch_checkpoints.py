"""Writes PyTorch checkpoints with torch.save into `testdata/pytorch/reference/`, each with a sidecar
`<name>.json` of what `torch.load` gives: every tensor by dotted name (dtype, shape, and the
SHA-256 of its elements in C order, little-endian), and the values that are not tensors.
Also `<name>.safetensors` where `safetensors.torch.save_file(torch.load(...))` (shared
storages removed as `save_model` removes them) writes one: what `tensorkit convert` must
give byte for byte. And hostile files in `testdata/pytorch/malicious/`: pickles that call
`os.system` and friends (written by hand, never loaded here), archives whose layout lies.
`crates/tensor-pytorch/tests/pytorch/` reads them all.

    python -m venv env && env/bin/pip install torch==2.11.0 safetensors==0.8.0 numpy
    env/bin/python scripts/reference/pytorch_checkpoints.py testdata/pytorch
"""

import collections
import hashlib
import io
import json
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import _remove_duplicate_names, save_file

DTYPES = [
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.uint16, torch.uint32, torch.uint64, torch.bool,
    torch.complex64, torch.complex128, torch.float8_e4m3fn, torch.float8_e5m2,
    torch.float8_e4m3fnuz, torch.float8_e5m2fnuz, torch.float8_e8m0fnu,
]


def elements(t: torch.Tensor) -> bytes:
    t = t.detach().contiguous()
    return t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


def describe(obj, prefix=""):
    """What tensorkit makes of a loaded object: tensors by dotted name, other parts as
    metadata values."""
    tensors, metadata = {}, {}

    def holds(v):
        if isinstance(v, (torch.Tensor, np.ndarray)):
            return True
        if isinstance(v, dict):
            return any(holds(x) for x in v.values())
        if isinstance(v, (list, tuple)):
            return any(holds(x) for x in v)
        return False

    def walk(v, name):
        if isinstance(v, np.ndarray):
            v = torch.from_numpy(np.ascontiguousarray(v.astype(v.dtype.newbyteorder("="))))
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, torch.Tensor):
            tensors[name] = {
                "dtype": str(v.dtype).removeprefix("torch."),
                "shape": list(v.shape),
                "sha256": hashlib.sha256(elements(v)).hexdigest(),
            }
        elif isinstance(v, dict) and holds(v):
            for k, x in v.items():
                walk(x, f"{name}.{k}" if name else str(k))
        elif isinstance(v, (list, tuple)) and holds(v):
            for i, x in enumerate(v):
                walk(x, f"{name}.{i}" if name else str(i))
        else:
            metadata[name or "value"] = json.loads(json.dumps(v, default=str))

    if isinstance(obj, torch.Tensor):
        walk(obj, "tensor")
    elif isinstance(obj, dict) and not holds(obj):
        for k, x in obj.items():
            metadata[str(k)] = json.loads(json.dumps(x, default=str))
    else:
        walk(obj, prefix)
    return {"tensors": tensors, "metadata": metadata}


def save(out: Path, name: str, obj, legacy=False, safetensors=False, weights_only=True):
    path = out / f"{name}.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
    # NumPy values need torch.load's full unpickler (this script trusts what it wrote).
    loaded = torch.load(path, weights_only=weights_only)
    (out / f"{name}.json").write_text(json.dumps(describe(loaded), indent=1, sort_keys=True) + "\n")
    if safetensors:
        sd = dict(loaded)
        metadata = None
        for kept, removed in _remove_duplicate_names(sd).items():
            for r in removed:
                metadata = metadata or {}
                metadata.setdefault(r, kept)
                del sd[r]
        sd = {k: v.contiguous() for k, v in sd.items()}
        save_file(sd, out / f"{name}.safetensors", metadata=metadata)


def state_dict(dtypes=DTYPES):
    g = torch.Generator().manual_seed(7)
    sd = collections.OrderedDict()
    for d in dtypes:
        base = torch.randn(2, 3, generator=g) * 4
        name = str(d).removeprefix("torch.")
        if d.is_complex:
            sd[name] = torch.complex(base, -base).to(d)
        elif d == torch.bool:
            sd[name] = base > 0
        elif d.is_floating_point:
            sd[name] = base.to(d)
        else:
            sd[name] = (base * 10).abs().to(torch.int64).to(d)
    sd["scalar"] = torch.tensor(3.5)
    sd["empty"] = torch.zeros(0, 4)
    return sd


def module_state():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 10))
    model[2].weight = model[0].weight  # tied, as language models tie embeddings and head
    return model


def shared():
    w = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    sd = collections.OrderedDict()
    sd["embed.weight"] = w
    sd["lm_head.weight"] = w  # tied: the same tensor twice
    sd["row"] = w[1]  # a view with a storage offset
    sd["transposed"] = w.t()  # not contiguous
    sd["every_other"] = w[:, ::2]  # strided
    return sd


def training():
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.ones(1, 3)).sum().backward()
    opt.step()
    return {"state_dict": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
            "best": 0.25, "tags": ["a", "b"], "note": None}


def hostile(out: Path):
    out.mkdir(parents=True, exist_ok=True)

    def archive(name, pkl, extra=()):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
            z.writestr("archive/data.pkl", pkl)
            z.writestr("archive/byteorder", "little")
            for entry, data in extra:
                z.writestr(entry, data)
        (out / name).write_bytes(buf.getvalue())

    marker = "/tmp/tensorkit-pickle-ran"
    # GLOBAL os system; the argument; REDUCE; STOP.
    call = lambda mod, fn, arg: (b"\x80\x02c" + mod + b"\n" + fn + b"\n" + b"X" + struct.pack("<I", len(arg)) + arg + b"\x85R.")
    archive("os_system.pt", call(b"os", b"system", f"touch {marker}".encode()))
    archive("posix_system.pt", call(b"posix", b"system", f"touch {marker}".encode()))
    archive("builtins_eval.pt", call(b"builtins", b"eval", f"open('{marker}','w')".encode()))
    archive("subprocess.pt", call(b"subprocess", b"Popen", b"touch " + marker.encode()))
    # A REDUCE of a global hidden as the argument of another REDUCE.
    archive("nested_reduce.pt", b"\x80\x02ccollections\nOrderedDict\n(" + call(b"os", b"system", marker.encode())[2:-1] + b"\x85R.")
    # STACK_GLOBAL assembling the name from memoized strings.
    archive("stack_global.pt", b"\x80\x04\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x04true\x94\x85R.")
    archive("memo_undefined.pt", b"\x80\x02h\x07.")
    archive("long4_huge.pt", b"\x80\x02\x8b\xff\xff\xff\x7f.")
    archive("binbytes_huge.pt", b"\x80\x03B\xff\xff\xff\x7f.")
    archive("binunicode8_huge.pt", b"\x80\x04\x8d" + struct.pack("<Q", 1 << 62) + b".")
    archive("newobj.pt", b"\x80\x02c__main__\nNet\n)\x81.")
    archive("inst.pt", b"(ios\nsystem\nX\x04\x00\x00\x00true.")
    # Deeply nested tuples and lists.
    archive("deep_tuples.pt", b"\x80\x02)" + b"\x85" * 50_000 + b".")
    archive("deep_lists.pt", b"\x80\x02" + b"]" * 50_000 + b"a" * 49_999 + b".")
    # A storage that claims more elements than its entry holds.
    sd = io.BytesIO()
    torch.save({"w": torch.ones(4)}, sd)
    z = zipfile.ZipFile(io.BytesIO(sd.getvalue()))
    pkl = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    archive("storage_too_long.pt", pkl.replace(b"K\x04t", b"J\x00\x00\x00\x01t", 1), [("archive/data/0", b"\x00" * 16)])
    archive("storage_missing.pt", pkl)
    # The same entry name twice.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zz:
        zz.writestr("archive/data.pkl", pkl)
        zz.writestr("archive/data/0", b"\x00" * 16)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            zz.writestr("archive/data/0", b"\x01" * 16)
    (out / "duplicate_entry.pt").write_bytes(buf.getvalue())
    # An entry that climbs out of its folder.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zz:
        zz.writestr("archive/data.pkl", pkl)
        zz.writestr("archive/../../etc/passwd", b"x")
        zz.writestr("archive/data/0", b"\x00" * 16)
    (out / "path_traversal.pt").write_bytes(buf.getvalue())
    # A zip bomb of overlapping entries: every directory entry points at one deflated body.
    body = zipfile.ZipFile(io.BytesIO(), "w")
    import zlib
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = comp.compress(b"\x00" * (64 << 20)) + comp.flush()
    crc = zlib.crc32(b"\x00" * (64 << 20))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), 64 << 20, 8, 0) + b"archive/"
    # Entries named differently than the one local header: refused before anything inflates.
    first = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, zlib.crc32(pkl), len(pkl), len(pkl), 16, 0) + b"archive/data.pkl" + pkl
    cd = b""
    names = [b"archive/data.pkl"] + [f"archive/data/{i}".encode() for i in range(8)]
    offsets = [0] + [len(first)] * 8
    sizes = [(zlib.crc32(pkl), len(pkl), len(pkl), 0)] + [(crc, len(data), 64 << 20, 8)] * 8
    for n, off, (c, cs, us, m) in zip(names, offsets, sizes):
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, m, 0, 0, c, cs, us, len(n), 0, 0, 0, 0, 0, off) + n
    blob = first + local + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(names), len(names), len(cd), len(blob), 0)
    (out / "overlapping_bomb.pt").write_bytes(blob + cd + end)
    (out / "README.md").write_text(
        "Hostile PyTorch checkpoints written by `scripts/reference/pytorch_checkpoints.py`: each must be\n"
        "refused with an error, in bounded time and memory, and none may run anything (the\n"
        f"pickles would create `{marker}`).\n"
    )


def main(root: Path):
    out = root / "reference"
    out.mkdir(parents=True, exist_ok=True)
    save(out, "state_dict", state_dict())
    from safetensors.torch import _SIZE
    save(out, "safetensors_dtypes", state_dict([d for d in DTYPES if d in _SIZE]), safetensors=True)
    legacy_types = torch.storage._dtype_to_storage_type_map()
    save(out, "legacy", state_dict([d for d in DTYPES if d in legacy_types]), legacy=True)
    save(out, "module_state", module_state().state_dict(), safetensors=True)
    # Views safetensors' save_model cannot take (it fails on non-contiguous ones).
    save(out, "shared", shared())
    save(out, "training", training())
    save(out, "tensor", torch.arange(5, dtype=torch.int16))
    # NumPy arrays and scalars pickled beside tensors, as training scripts save statistics.
    save(out, "numpy_values", {
        "w": torch.ones(2, 2),
        "mean": np.array([[0.5, 1.5, 2.5]], dtype=np.float32),
        "counts": np.asfortranarray(np.arange(6, dtype=">i8").reshape(2, 3)),
        "mask": np.array([True, False]),
        "best": np.float64(0.875),
        "step": np.int64(1200),
    }, weights_only=False)
    # A whole module: what torch.load(weights_only=True) refuses, and so do we.
    torch.save(module_state(), out / "whole_module.pt")
    hostile(root / "malicious")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
