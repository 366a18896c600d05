"""A multi-GB checkpoint loaded to a GPU: tensorkit against safetensors, cold and warm.

Run on a machine with a CUDA GPU, torch and safetensors (see ``device_load.sh``, which
installs a tensorkit wheel built elsewhere and runs this). Writes a checkpoint of
``--gb`` gigabytes in ``--tensors`` bfloat16 tensors with safetensors, then times
``load_file(path, device=args.device)`` from ``safetensors.torch``, from
``tensorkit.safetensors.torch`` and ``tensorkit.torch`` (with a few staging sizes and
reader counts), each with a cold page cache (the file evicted with
``posix_fadvise(DONTNEED)`` before each run, the eviction confirmed with ``mincore``) and a
warm one (read once before). Every load ends with ``torch.cuda.synchronize()``, and every
tensorkit result is checked against safetensors' bit for bit. The machine's own ``read()``
bandwidth of the file, cold and warm, is measured beside them.

With a GPU, CPU loads (every tensor summed, so that its bytes are read) are timed beside
them against ``safetensors.torch.load_file(path)``. Prints a table last (each ``x st``
against safetensors' load to the same device); ``--json PATH`` writes every timing.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

import bench_python  # (beside this script: the suite's eviction and read() probe)


def warm(path: str) -> None:
    with open(path, "rb", buffering=0) as f:
        while f.read(64 << 20):
            pass


def make_checkpoint(path: str, gb: float, count: int, device: str) -> int:
    import torch
    from safetensors.torch import save_file

    total = int(gb * 1e9) // 2  # bf16 elements
    per = total // count
    g = torch.Generator(device=device).manual_seed(0)
    tensors = {}
    for i in range(count):
        # Odd sizes so that tensors do not line up with staging buffers or pages.
        n = per + (i % 7) * 1031
        tensors[f"layers.{i:03d}.weight"] = (
            torch.randn(n, generator=g, device=device, dtype=torch.float32).to(torch.bfloat16).cpu()
        )
    save_file(tensors, path)
    del tensors
    gc.collect()
    return os.path.getsize(path)


def fingerprint(tensors) -> dict[str, tuple]:
    import torch

    return {
        k: (str(v.dtype), tuple(v.shape), int(v.view(torch.int16).to(torch.int64).sum().item()))
        for k, v in tensors.items()
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    ap.add_argument("--gb", type=float, default=4.0)
    ap.add_argument("--tensors", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of this script without a GPU")
    args = ap.parse_args()

    import safetensors
    import safetensors.torch
    import torch

    import tensorkit
    import tensorkit.safetensors.torch
    import tensorkit.torch

    device = torch.device(args.device)
    cuda = device.type == "cuda"
    gpu = torch.cuda.get_device_name(device) if cuda else "no GPU (dry run)"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    def free() -> None:
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()

    path = os.path.join(args.dir, "device-load.safetensors")
    t0 = time.perf_counter()
    size = make_checkpoint(path, args.gb, args.tensors, args.device)
    print(f"checkpoint: {size / 1e9:.2f} GB, {args.tensors} tensors, written in {time.perf_counter() - t0:.1f} s")
    print(
        f"torch {torch.__version__}, safetensors {safetensors.__version__}, tensorkit {tensorkit.__version__}, "
        f"{gpu}, {os.cpu_count()} CPUs"
    )

    loaders = {
        "safetensors": lambda: safetensors.torch.load_file(path, device=args.device),
        "tensorkit.safetensors": lambda: tensorkit.safetensors.torch.load_file(path, device=args.device),
        "tensorkit s=64M r=8": lambda: tensorkit.torch.load_file(path, args.device, staging_bytes=64 << 20, threads=8),
        "tensorkit s=256M r=16": lambda: tensorkit.torch.load_file(path, args.device, staging_bytes=256 << 20, threads=16),
        "tensorkit s=16M r=4": lambda: tensorkit.torch.load_file(path, args.device, staging_bytes=16 << 20, threads=4),
    }

    if cuda:
        # CPU loads beside them, every tensor touched (summed) so that the bytes are read:
        # safetensors and tensorkit both map lazily.
        def touched(tensors):
            for t in tensors.values():
                t.view(torch.int16).sum()
            return tensors

        loaders["cpu: safetensors"] = lambda: touched(safetensors.torch.load_file(path))
        loaders["cpu: tensorkit"] = lambda: touched(tensorkit.torch.load_file(path))
        loaders["cpu: tensorkit pread"] = lambda: touched(tensorkit.torch.load_file(path, backend="pread"))

    # Correctness first: every tensorkit loader gives safetensors' tensors, bit for bit.
    want = fingerprint(loaders["safetensors"]())
    for name, load in loaders.items():
        got = load()
        sync()
        if fingerprint(got) != want:
            print(f"MISMATCH: {name}")
            return 1
        del got
    free()

    results: dict[str, dict[str, list[float]]] = {name: {"cold": [], "warm": []} for name in loaders}
    evictions = []
    bandwidth = {"cold": [], "warm": []}
    for _ in range(args.repeats):
        evictions.append(bench_python.evict(Path(path)))
        bandwidth["cold"].append(bench_python.read_gbps(Path(path)))
        bandwidth["warm"].append(bench_python.read_gbps(Path(path)))
        for cache in ("cold", "warm"):
            for name, load in loaders.items():  # the same order each round
                if cache == "cold":
                    left = bench_python.evict(Path(path))
                    evictions.append(left)
                else:
                    warm(path)
                sync()
                start = time.perf_counter()
                got = load()
                sync()
                results[name][cache].append(time.perf_counter() - start)
                del got
                free()

    report = {
        "bytes": size,
        "tensors": args.tensors,
        "gpu": gpu,
        "torch": torch.__version__,
        "safetensors": safetensors.__version__,
        "resident_after_eviction_max": max(evictions),
        "read_bandwidth_gbps": bandwidth,
        "seconds": results,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)

    print(f"\npage cache after each eviction: at most {max(evictions) * 100:.2f}% of the file resident")
    print(
        "read() of the file: cold {:.2f} GB/s, warm {:.2f} GB/s (medians)".format(
            statistics.median(bandwidth["cold"]), statistics.median(bandwidth["warm"])
        )
    )
    base = {c: statistics.median(results["safetensors"][c]) for c in ("cold", "warm")}
    if "cpu: safetensors" in results:
        cpu_base = {c: statistics.median(results["cpu: safetensors"][c]) for c in ("cold", "warm")}
    print(f"\n{'loader':26} {'cold s':>8} {'GB/s':>6} {'x st':>6} {'warm s':>8} {'GB/s':>6} {'x st':>6}")
    for name, r in results.items():
        if name.startswith("cpu: "):
            base = cpu_base
        cold, hot = statistics.median(r["cold"]), statistics.median(r["warm"])
        print(
            f"{name:26} {cold:8.3f} {size / cold / 1e9:6.2f} {base['cold'] / cold:6.2f} "
            f"{hot:8.3f} {size / hot / 1e9:6.2f} {base['warm'] / hot:6.2f}"
        )
    os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
