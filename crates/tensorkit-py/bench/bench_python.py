"""The Python package against the Python peers, on the same files in the same run.

Run by ``cargo xtask bench --with-python VENV`` (which installs a release build of the
package into VENV first); prints a JSON report, or writes it with ``--json PATH``. Each row
is one workload: our median, the peer's median, and the target the issue sets.

Workloads (issue 18):
  open_get_one   open a 2000-tensor safetensors file and get one tensor
                 (peer: safetensors.safe_open(...).get_tensor)
  zero_copy_big  a 1 GiB float32 tensor as a zero-copy array, file opened (target < 1 ms)
  owned_load     the same tensor loaded into an owned array (peer: np.load of the same bytes)
  tgm_decode     decode a multi-object Tensogram message (peer: tensogram.decode; target 5x)

Workloads (issue 21), when the environment has the peers (``eccodes`` for GRIB):
  grib_<packing>      open a GRIB file of one global 0.25° field (1440 × 721) and get its
                      values (peer: eccodes, codes_new_from_message + codes_get_values;
                      target: at least as fast)
  grib_grid_ccsds_every_core
                      the CCSDS field read on every core against a process whose pool has
                      one thread (target: 1.8x on 2 cores)
  grib_grid_jpeg_eight_fields
                      every field of a file of eight such fields, JPEG 2000-packed, with
                      ``File.load`` (decodes them side by side; peer: eccodes, a loop over
                      the file's messages)
  tgm_<codec>_decode  decode a Tensogram message of one 1440 × 721 × 8 float64 field
  tgm_<codec>_encode  encode it (peer: tensogram.decode / tensogram.encode; target: within
                      1.2x of the peer) for blosc2 (lz4 after a shuffle), zfp (fixed rate
                      16) and SZ3 (absolute bound 1e-4; tensorkit decodes each SZ3 stream
                      in a child process, docs/decisions/0013)

Workloads (issue 50), torch against safetensors' torch module, on a checkpoint of
``--torch-n`` tensors (a ``torch.nn.Sequential`` of linear layers) in ``--torch-mib`` MiB,
every page of every tensor touched after a load (both map the file lazily):
  torch_load_file_warm      load_file to the CPU, warm page cache (target: at least as fast)
  torch_load_file_cold      the same, the file evicted before each run, eviction confirmed
                            with mincore (target: 1.5x)
  torch_load_model          load_model into the module (target: faster)
  torch_cold_load_peak_rss  peak RSS of a process making one cold load, above what it held
                            with its modules imported (target: no higher, to 1 MiB)
GB/s and the machine's own read() bandwidth of the file are given beside them.

Workloads (issue 71), a PyTorch checkpoint (``torch.save`` of a state dict of ``--torch-n``
linear layers' weights in ``--torch-mib`` MiB, one tied pair) converted to safetensors:
  pytorch_convert_to_safetensors  tensorkit.convert(header_reserve=0), never running the
                            pickle (peer: safetensors.torch.save_model's rule over
                            torch.load(weights_only=True), then save_file; the two outputs
                            checked byte for byte; target: 3x)
  pytorch_convert_peak_rss  peak RSS of a process making one conversion, above what it held
                            with its modules imported (target: at most half the peer's)

Workloads (issue 53), GRIB as cubes through xarray against cfgrib (``indexpath=""``), on
files ecCodes writes (16-bit simple packing): ``xr.open_dataset`` then ``.load()``, each run
on a freshly opened file (tensorkit's engine keeps no file open between runs)
  cube_ensemble_1deg     t and u, 5 members × 4 steps × 5 pressure levels on a 1° grid
                         (200 messages)
  cube_40_fields_0.25deg 4 parameters × 10 pressure levels on a 0.25° grid
  cube_5000_tiny         5 parameters × 10 levels × 100 steps on a 6 × 6 grid
  (target: 5x each), and cube_<case>_peak_rss: the peak RSS of a process making one open
  and load, above what it held with its modules imported (target: no higher than cfgrib's)

Workloads (issue 54), when VirtualiZarr and kerchunk are there:
  virtualize_40_fields_0.25deg
                         tensorkit.virtualizarr.GribParser()(url, registry) on the 40-field
                         file against kerchunk.grib2.scan_grib (target: 10x)
  dask_convert_two_workers
                         12 GRIB files of 40 fields at 1° repacked to Tensogram
                         (simple_packing:12,szip) by tensorkit.dask.convert on a LocalCluster
                         of two single-threaded worker processes, against one (target: 1.8x,
                         best against best; the last run's outputs are removed untimed)

Workloads (issue 51), GGUF against gguf-py (``gguf``), on files gguf-py wrote:
  gguf_open_list      open a GGUF file of ``--gguf-n`` tensors (and a 32 000-token
                      vocabulary) and list every tensor's name, shape and type
                      (peer: GGUFReader; target: 20x)
  gguf_dequant_<type> every value of a ``--gguf-mib`` MiB (as float32) tensor of Q4_K,
                      Q6_K or Q8_0, dequantized on every core into a new array (peer:
                      gguf.quants.dequantize; target: 10x, judged best against best as
                      saves are, decision 0010: both fill new pages), with its output
                      bandwidth as a fraction of the machine's memcpy (numpy's copyto of
                      the same bytes)

Workloads (issue 70), NetCDF-3 against netCDF4-python (``netCDF4``, libnetcdf), on a file
netCDF4 wrote (64-bit offset; 199 small variables and a record variable of ``--nc-mib`` MiB):
  netcdf3_list_200_variables   open and list every variable's name and shape (target: 2x)
  netcdf3_read_record_variable the record variable read into a new native-order array
                               (target: at least the peer, best against best)
  netcdf4_list_200_variables   the same as NetCDF-4 (HDF5), listed (target: 10x)
  netcdf4_read_deflated_variable  its large variable, chunked, shuffled and deflated, read
                               into a new array, chunks on every core (target: the peer)
  netcdf4_convert_to_tensogram the NetCDF-4 file converted to Tensogram (peer: xarray's load
                               and tensogram.encode, written; target 2x)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def timed(fn, runs: int, before=None) -> dict[str, float]:
    """Median, fastest and slowest of ``runs`` calls (one untimed warm-up call first), each
    after an untimed call of ``before`` when it is given."""
    if before:
        before()
    fn()
    samples = []
    for _ in range(runs):
        if before:
            before()
        gc.collect()
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return {"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples)}


def make_files(root: Path, small_n: int, small_mib: int, big_mib: int, tg_objects: int, tg_mib: int) -> dict[str, Path]:
    import safetensors.numpy as st
    import tensogram

    rng = np.random.default_rng(1)
    per = max(1, small_mib * (1 << 20) // small_n // 4)
    small = {f"layer.{i}.w": rng.standard_normal(per, dtype=np.float32) for i in range(small_n)}
    paths = {"small": root / "small.safetensors", "big": root / "big.safetensors", "npy": root / "big.npy", "tgm": root / "fields.tgm"}
    st.save_file(small, paths["small"])
    del small
    big = np.ones(big_mib * (1 << 20) // 4, dtype=np.float32)
    big[::4097] = np.arange(big[::4097].size, dtype=np.float32)
    st.save_file({"w": big}, paths["big"])
    np.save(paths["npy"], big)
    del big
    n = tg_mib * (1 << 20) // 8 // tg_objects
    side = int(np.sqrt(n))
    objects = []
    for i in range(tg_objects):
        y, x = np.mgrid[0:side, 0:side]
        field = 250.0 + 30.0 * np.sin(x / 37.0 + i) * np.cos(y / 23.0) + rng.normal(0, 0.5, (side, side))
        desc = {"type": "ntensor", "shape": [side, side], "dtype": "float64", "encoding": "simple_packing", "sp_bits_per_value": 16}
        if i % 2 == 0:
            desc.update(compression="szip", szip_rsi=128, szip_block_size=16, szip_flags=8)
        else:
            desc.update(compression="zstd", zstd_level=3)
        objects.append((desc, field))
    meta = {"base": [{"name": f"field{i}"} for i in range(tg_objects)]}
    paths["tgm"].write_bytes(tensogram.encode(meta, objects))
    return paths


def run(args: argparse.Namespace) -> dict:
    import safetensors
    import tensogram

    import tensorkit
    import tensorkit.safetensors
    from tensorkit import tensogram as tk_tensogram

    rows = []

    def row(case: str, ours, peer, peer_name: str, target: str, check) -> None:
        r = {"case": case, "ours": ours, "peer": peer, "peer_name": peer_name, "target": target}
        r["speedup"] = peer["median_s"] / ours["median_s"] if peer else None
        r["met"] = bool(check(r))
        rows.append(r)

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        p = make_files(Path(tmp), args.small_n, args.small_mib, args.big_mib, args.tg_objects, args.tg_mib)
        # Warm the page cache: every workload reads files already in memory.
        for path in p.values():
            path.read_bytes()
        name = f"layer.{args.small_n // 2}.w"

        def ours_one():
            with tensorkit.open(p["small"]) as f:
                f[name]

        def peer_one():
            with safetensors.safe_open(p["small"], framework="np") as f:
                f.get_tensor(name)

        row("open_get_one", timed(ours_one, args.runs * 10), timed(peer_one, args.runs * 10),
            "safetensors.safe_open().get_tensor", "faster than the peer", lambda r: r["speedup"] > 1.0)

        def ours_view():
            f = tensorkit.open(p["big"])
            a = f["w"]
            assert not a.flags.writeable and a.nbytes == args.big_mib << 20

        def peer_view():
            np.load(p["npy"], mmap_mode="r")

        row("zero_copy_big", timed(ours_view, args.runs * 10), timed(peer_view, args.runs * 10),
            "np.load(mmap_mode='r')", "< 1 ms", lambda r: r["ours"]["median_s"] < 1e-3)

        def ours_owned():
            a = tensorkit.safetensors.load_file(p["big"])["w"]
            assert a.flags.writeable

        def peer_owned():
            np.load(p["npy"])

        row("owned_load", timed(ours_owned, args.runs), timed(peer_owned, args.runs),
            "np.load", "at least as fast as the peer", lambda r: r["speedup"] >= 1.0)

        buf = p["tgm"].read_bytes()
        row("tgm_decode", timed(lambda: tk_tensogram.decode(buf), args.runs), timed(lambda: tensogram.decode(buf), args.runs),
            "tensogram.decode", ">= 5x the peer", lambda r: r["speedup"] >= 5.0)
        row("tgm_decode_one_thread", timed(lambda: tk_tensogram.decode(buf, threads=1), args.runs),
            timed(lambda: tensogram.decode(buf, threads=1), args.runs), "tensogram.decode(threads=1)",
            "(reported)", lambda r: True)

        weather(rows, row, Path(tmp), args)
        cube_rows(rows, row, Path(tmp), args)
        torch_loads(rows, row, Path(tmp), args)
        checkpoint_rows(rows, row, Path(tmp), args)
        gguf_rows(rows, row, Path(tmp), args)
        netcdf_rows(rows, row, Path(tmp), args)

    versions = {}
    try:
        import eccodes

        versions["eccodes"] = eccodes.__version__
    except ImportError:
        pass
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "versions": {"tensorkit": tensorkit.__version__, "safetensors": safetensors.__version__,
                     "torch": __import__("torch").__version__,
                     "tensogram": tensogram.__version__, "numpy": np.__version__, **versions},
        "scale": {"small_n": args.small_n, "small_mib": args.small_mib, "big_mib": args.big_mib,
                  "torch_n": args.torch_n, "torch_mib": args.torch_mib,
                  "gguf_n": args.gguf_n, "gguf_mib": args.gguf_mib, "nc_mib": args.nc_mib,
                  "tg_objects": args.tg_objects, "tg_mib": args.tg_mib, "runs": args.runs},
        "rows": rows,
    }


def global_field(seed: int) -> np.ndarray:
    """A smooth global 0.25° field with some noise, as weather fields are."""
    rng = np.random.default_rng(seed)
    lat = np.linspace(90, -90, 721)[:, None]
    lon = np.linspace(0, 359.75, 1440)[None, :]
    return 250.0 + 40.0 * np.cos(np.radians(lat)) + 5.0 * np.sin(np.radians(3 * lon)) + rng.normal(0, 0.3, (721, 1440))


def grib_message(ec, values: np.ndarray, packing: str) -> bytes:
    """One GRIB 2 message of ``values`` on the global 0.25° grid, packed as ``packing`` by
    ecCodes (16 bits per value, 32 for IEEE)."""
    h = ec.codes_grib_new_from_samples("regular_ll_sfc_grib2")
    for k, v in [("Ni", 1440), ("Nj", 721), ("latitudeOfFirstGridPointInDegrees", 90.0),
                 ("longitudeOfFirstGridPointInDegrees", 0.0),
                 ("latitudeOfLastGridPointInDegrees", -90.0),
                 ("longitudeOfLastGridPointInDegrees", 359.75),
                 ("iDirectionIncrementInDegrees", 0.25), ("jDirectionIncrementInDegrees", 0.25)]:
        ec.codes_set(h, k, v)
    if packing == "grid_second_order":
        ec.codes_set_values(h, values.ravel())
    ec.codes_set(h, "packingType", packing)
    ec.codes_set(h, "bitsPerValue", 32 if packing == "grid_ieee" else 16)
    ec.codes_set_values(h, values.ravel())
    message = ec.codes_get_message(h)
    ec.codes_release(h)
    return message


# The keys of the global 0.25° field, as tensorkit writes GRIB from them.
GLOBAL_KEYS = {
    "shortName": "2t", "dataDate": 20261129, "dataTime": 0, "stepRange": "0", "centre": 98,
    "gridType": "regular_ll", "Ni": 1440, "Nj": 721, "latitudeOfFirstGridPointInDegrees": 90.0,
    "longitudeOfFirstGridPointInDegrees": 0.0, "latitudeOfLastGridPointInDegrees": -90.0,
    "longitudeOfLastGridPointInDegrees": 359.75, "iDirectionIncrementInDegrees": 0.25,
    "jDirectionIncrementInDegrees": 0.25,
}


def grib_encode_rows(ec, values: np.ndarray, row, args: argparse.Namespace) -> None:
    """Encoding a 0.25° field (issue 69): tensorkit's writer against ecCodes' binding
    (`codes_set_values` + `codes_get_message` on a handle of the same grid and packing), and
    against a copy of the values (memcpy) in the same run."""
    import tensorkit

    flat = np.ascontiguousarray(values.ravel())
    copy_time = timed(lambda: flat.copy(), args.runs)
    for packing, spec in [("grid_simple", "simple:16"), ("grid_ccsds", "ccsds:16")]:
        # ecCodes reads a handle's message from the bytes given, without a copy: they are
        # kept alive as long as the handle.
        sample = grib_message(ec, values, packing)
        template = ec.codes_new_from_message(sample)

        def peer(template=template):
            h = ec.codes_clone(template)
            ec.codes_set_values(h, flat)
            message = ec.codes_get_message(h)
            ec.codes_release(h)
            return message

        def ours(spec=spec):
            return tensorkit.serialize({"t": values}, format="grib", pipeline=spec, attributes={"t": GLOBAL_KEYS})

        theirs_bytes, mine_bytes = peer(), ours()
        theirs = ec.codes_new_from_message(theirs_bytes)
        mine = ec.codes_new_from_message(mine_bytes)
        assert np.array_equal(ec.codes_get_values(theirs), ec.codes_get_values(mine)), packing
        ec.codes_release(theirs)
        ec.codes_release(mine)
        ours_time = timed(ours, args.runs)
        row(f"grib_encode_{packing}", ours_time, timed(peer, args.runs),
            "eccodes codes_set_values + codes_get_message",
            ">= 2x the peer, best against best (decision 0010: the host is shared)",
            lambda r: r["peer"]["min_s"] / r["ours"]["min_s"] >= 2.0)
        ec.codes_release(template)
        row(f"grib_encode_{packing}_vs_memcpy", ours_time, copy_time,
            "a copy of the float64 values (memcpy)",
            "within 16x of memcpy, best against best (the packing's arithmetic per value)",
            lambda r: r["peer"]["min_s"] / r["ours"]["min_s"] >= 1 / 16)


# Times reading a file's first tensor in a process of its own (run with RAYON_NUM_THREADS=1
# for a one-core baseline); prints what `timed` returns, as JSON.
_ONE_CORE_READ = """
import gc, json, statistics, sys, time
import tensorkit
path, runs = sys.argv[1], int(sys.argv[2])
def read():
    with tensorkit.open(path) as f:
        return f[next(iter(f))]
read()
samples = []
for _ in range(runs):
    gc.collect()
    t = time.perf_counter()
    read()
    samples.append(time.perf_counter() - t)
print(json.dumps({"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples)}))
"""


def weather(rows: list, row, tmp: Path, args: argparse.Namespace) -> None:
    """GRIB decoding against ecCodes, and Tensogram's blosc2 and zfp against tensogram."""
    import tensogram

    import tensorkit
    from tensorkit import tensogram as tk_tensogram

    try:
        import eccodes as ec
    except ImportError:
        ec = None
    if ec is not None:
        values = global_field(3)
        for packing in ["grid_simple", "grid_ccsds", "grid_complex_spatial_differencing",
                        "grid_second_order", "grid_jpeg", "grid_png", "grid_ieee"]:
            path = tmp / f"{packing}.grib2"
            path.write_bytes(grib_message(ec, values, packing))
            data = path.read_bytes()

            def ours(path=path):
                with tensorkit.open(path) as f:
                    return f[next(iter(f))]

            def peer(data=data):
                g = ec.codes_new_from_message(data)
                v = ec.codes_get_values(g)
                ec.codes_release(g)
                return v

            a, b = ours(), peer()
            assert np.array_equal(a.ravel(), b), packing
            row(f"grib_{packing}", timed(ours, args.runs), timed(peer, args.runs),
                "eccodes codes_get_values", "at least as fast as the peer", lambda r: r["speedup"] >= 1.0)

        grib_encode_rows(ec, values, row, args)

        # The CCSDS field on every core against one (a child process whose rayon pool has one
        # thread): the stream's reference sample intervals decoded side by side.
        ccsds = tmp / "grid_ccsds.grib2"

        def ours_ccsds():
            with tensorkit.open(ccsds) as f:
                return f[next(iter(f))]

        one = subprocess.run(
            [sys.executable, "-c", _ONE_CORE_READ, str(ccsds), str(args.runs)],
            env={**os.environ, "RAYON_NUM_THREADS": "1"}, check=True, capture_output=True, text=True,
        )
        row("grib_grid_ccsds_every_core", timed(ours_ccsds, args.runs), json.loads(one.stdout),
            "tensorkit, 1 thread", ">= 1.8x one core (2 cores), best against best (decision 0010: the "
            "second core is shared with the machine)",
            lambda r: r["peer"]["min_s"] / r["ours"]["min_s"] >= 1.8)

        # Eight fields in one file, every one read: `File.load` decodes them side by side.
        path = tmp / "eight_jpeg.grib2"
        path.write_bytes(b"".join(grib_message(ec, global_field(s), "grid_jpeg") for s in range(8)))

        def ours_all():
            with tensorkit.open(path) as f:
                return list(f.load().values())

        def peer_all():
            out = []
            with open(path, "rb") as fh:
                while (g := ec.codes_grib_new_from_file(fh)) is not None:
                    out.append(ec.codes_get_values(g))
                    ec.codes_release(g)
            return out

        assert all(np.array_equal(a.ravel(), b) for a, b in zip(ours_all(), peer_all(), strict=True))
        row("grib_grid_jpeg_eight_fields", timed(ours_all, args.runs), timed(peer_all, args.runs),
            "eccodes codes_grib_new_from_file + codes_get_values", "at least as fast as the peer",
            lambda r: r["speedup"] >= 1.0)

    field = np.stack([global_field(s) for s in range(8)])
    for codec, params in [
        ("blosc2", {"filter": "shuffle", "shuffle_element_size": 8, "compression": "blosc2",
                    "blosc2_codec": "lz4", "blosc2_clevel": 5}),
        ("zfp", {"compression": "zfp", "zfp_mode": "fixed_rate", "zfp_rate": 16.0}),
        ("sz3", {"compression": "sz3", "sz3_error_bound_mode": "abs", "sz3_error_bound": 1e-4}),
    ]:
        desc = {"type": "ntensor", "shape": list(field.shape), "dtype": "float64", **params}
        meta = {"base": [{"name": "t"}]}
        buf = tensogram.encode(meta, [(desc, field)])
        same = tk_tensogram.decode(buf).objects[0][1]
        assert np.array_equal(same, tensogram.decode(buf).objects[0][1]), codec
        row(f"tgm_{codec}_decode", timed(lambda: tk_tensogram.decode(buf), args.runs),
            timed(lambda: tensogram.decode(buf), args.runs), "tensogram.decode",
            "within 1.2x of the peer", lambda r: r["speedup"] >= 1 / 1.2)
        row(f"tgm_{codec}_encode", timed(lambda: tk_tensogram.encode(meta, [(desc, field)]), args.runs),
            timed(lambda: tensogram.encode(meta, [(desc, field)]), args.runs), "tensogram.encode",
            "within 1.2x of the peer", lambda r: r["speedup"] >= 1 / 1.2)


def cube_file(ec, path: Path, params, levels, steps, members, ni: int, nj: int) -> Path:
    """A GRIB 2 file of every parameter × member × step × pressure level on a global
    ``ni`` × ``nj`` grid, written by ecCodes from one template message."""
    template = ec.codes_grib_new_from_samples("GRIB2")
    for k, v in [("Ni", ni), ("Nj", nj), ("latitudeOfFirstGridPointInDegrees", 90.0),
                 ("longitudeOfFirstGridPointInDegrees", 0.0),
                 ("latitudeOfLastGridPointInDegrees", -90.0),
                 ("longitudeOfLastGridPointInDegrees", 360.0 - 360.0 / ni),
                 ("iDirectionIncrementInDegrees", 360.0 / ni), ("jDirectionIncrementInDegrees", 180.0 / (nj - 1)),
                 ("typeOfLevel", "isobaricInhPa"), ("dataDate", 20261120), ("bitsPerValue", 16)]:
        ec.codes_set(template, k, v)
    if members:
        ec.codes_set(template, "productDefinitionTemplateNumber", 1)
        ec.codes_set(template, "numberOfForecastsInEnsemble", members)
    rng = np.random.default_rng(5)
    base = rng.normal(280.0, 10.0, ni * nj)
    k = 0
    with open(path, "wb") as out:
        for p in params:
            for m in range(1, (members or 1) + 1):
                for s in steps:
                    for lev in levels:
                        h = ec.codes_clone(template)
                        ec.codes_set(h, "shortName", p)
                        ec.codes_set(h, "level", lev)
                        ec.codes_set(h, "forecastTime", s)
                        if members:
                            ec.codes_set(h, "perturbationNumber", m)
                        k += 1
                        ec.codes_set_values(h, base + k * 0.01)
                        ec.codes_write(h, out)
                        ec.codes_release(h)
    ec.codes_release(template)
    return path


_CUBE_PEAK_RSS = """
import sys, warnings
import xarray as xr
import cfgrib, tensorkit.xarray
warnings.simplefilter("ignore")
def hwm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))
base = hwm()
kwargs = {"indexpath": ""} if sys.argv[1] == "cfgrib" else {}
xr.open_dataset(sys.argv[2], engine=sys.argv[1], **kwargs).load()
print(hwm() - base)
"""


def cube_rows(rows: list, row, tmp: Path, args: argparse.Namespace) -> None:
    """GRIB cubes through xarray: tensorkit's engine against cfgrib's."""
    try:
        import cfgrib  # noqa: F401
        import eccodes as ec
        import xarray as xr
    except ImportError:
        return
    import warnings

    import tensorkit._open_files as tkx

    warnings.simplefilter("ignore")
    levels = [1000, 925, 850, 700, 600, 500, 400, 300, 250, 200]
    files = {
        "ensemble_1deg": cube_file(ec, tmp / "ensemble.grib2", ["t", "u"], levels[::2], [0, 6, 12, 18], 5, 360, 181),
        "40_fields_0.25deg": cube_file(ec, tmp / "quarter.grib2", ["t", "u", "v", "q"], levels, [0], 0, 1440, 721),
        "5000_tiny": cube_file(ec, tmp / "tiny.grib2", ["t", "u", "v", "z", "q"], levels, range(0, 600, 6), 0, 6, 6),
    }
    for case, path in files.items():
        path.read_bytes()

        def ours(path=path):
            ds = xr.open_dataset(path, engine="tensorkit").load()
            for f in tkx._OPEN.values():
                f.close()
            tkx._OPEN.clear()
            return ds

        def peer(path=path):
            return xr.open_dataset(path, engine="cfgrib", indexpath="").load()

        a, b = ours(), peer()
        for v in b.data_vars:
            assert np.array_equal(a[v].values, b[v].values, equal_nan=True), (case, v)
        row(f"cube_{case}", timed(ours, args.runs), timed(peer, args.runs),
            "xr.open_dataset(engine='cfgrib', indexpath='').load()", ">= 5x the peer",
            lambda r: r["speedup"] >= 5.0)

        def peak(engine: str, path=path) -> int:
            out = subprocess.run([sys.executable, "-c", _CUBE_PEAK_RSS, engine, str(path)], check=True,
                                 capture_output=True, text=True)
            return int(out.stdout.split()[-1])

        if case == "40_fields_0.25deg":
            virtualize_row(rows, row, path, args)
            convert_on_workers_row(rows, row, ec, tmp, args)

        ours_rss = min(peak("tensorkit") for _ in range(2))
        peer_rss = min(peak("cfgrib") for _ in range(2))
        rows.append({
            "case": f"cube_{case}_peak_rss", "ours": None, "peer": None,
            "peer_name": "xr.open_dataset(engine='cfgrib').load()",
            "target": "no higher than the peer's", "speedup": None, "met": ours_rss <= peer_rss,
            "note": f"{ours_rss / 2**20:.0f} MiB against {peer_rss / 2**20:.0f} MiB above the process with "
                    "its modules imported (the lower of two runs each)",
        })


def virtualize_row(rows: list, row, path: Path, args: argparse.Namespace) -> None:
    """Virtualizing a GRIB file: tensorkit's VirtualiZarr parser against kerchunk's
    scan_grib (ecCodes and cfgrib underneath), the same file, the same machine."""
    try:
        from kerchunk.grib2 import scan_grib
        from obspec_utils.registry import ObjectStoreRegistry
        from obstore.store import LocalStore

        import tensorkit.virtualizarr as tv
    except ImportError:
        return
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    url = "file://" + str(path.resolve())
    ours = timed(lambda: tv.GribParser()(url, registry), args.runs)
    peer = timed(lambda: scan_grib(str(path)), max(1, args.runs // 2))
    row("virtualize_40_fields_0.25deg", ours, peer, "kerchunk.grib2.scan_grib", ">= 10x the peer",
        lambda r: r["speedup"] >= 10.0)


def convert_on_workers_row(rows: list, row, ec, tmp: Path, args: argparse.Namespace) -> None:
    """An archive converted by tensorkit.dask.convert on a LocalCluster of two worker
    processes against one (each worker one thread, its rayon pool one thread): the scaling
    dask gives the conversions."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        return
    import shutil

    import tensorkit.dask

    archive = tmp / "archive"
    archive.mkdir(exist_ok=True)
    levels = [1000, 850, 700, 500, 250]
    first = cube_file(ec, archive / "f00.grib2", ["t", "u"], levels, [0, 6, 12, 18], 0, 360, 181)
    for i in range(1, 12):
        shutil.copy(first, archive / f"f{i:02d}.grib2")
    inputs = sorted(archive.glob("*.grib2"))
    out = tmp / "converted"
    saved = os.environ.get("RAYON_NUM_THREADS")
    os.environ["RAYON_NUM_THREADS"] = "1"  # the workers' pools, set before they start
    try:
        times = {}
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
                def run(client=client):
                    tensorkit.dask.convert(inputs, out, to="tensogram", pipeline="simple_packing:12,szip", client=client)

                # The last run's outputs go first (a finished output is verified and
                # skipped), untimed: removing files is the main process's, on one core.
                times[workers] = timed(run, max(1, args.runs // 2), before=lambda: shutil.rmtree(out, ignore_errors=True))
    finally:
        if saved is None:
            os.environ.pop("RAYON_NUM_THREADS", None)
        else:
            os.environ["RAYON_NUM_THREADS"] = saved
    # Best against best, as the other both-cores rows (decision 0010: the second core is
    # shared with the machine; with one worker the scheduler and client keep about 1.06
    # cores busy, so two cores give at most about 1.9x).
    row("dask_convert_two_workers", times[2], times[1], "tensorkit.dask.convert on one worker",
        ">= 1.8x one worker (2 cores), best against best",
        lambda r: r["peer"]["min_s"] / r["ours"]["min_s"] >= 1.8)
    best = times[1]["min_s"] / times[2]["min_s"]
    rows[-1]["note"] = f"best against best {best:.2f}x"


def evict(path: Path) -> float:
    """Drops ``path`` from the page cache; returns the fraction of its pages still resident
    (:func:`cached_fraction`), so that a cold run is known to be cold."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return cached_fraction(path)


def cached_fraction(path: Path) -> float:
    """The fraction of ``path``'s pages in the page cache (``mincore`` over a mapping of it
    that is never touched)."""
    import ctypes
    import mmap

    size = path.stat().st_size
    page = os.sysconf("SC_PAGE_SIZE")
    pages = (size + page - 1) // page
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_COPY) as m:
        vec = (ctypes.c_ubyte * pages)()
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        if libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
        del addr
    return sum(v & 1 for v in vec) / pages


def cold(fn, path: Path, runs: int) -> dict[str, float]:
    """Like :func:`timed`, with ``path`` evicted from the page cache before every call
    (eviction confirmed: at most 1 % of its pages left)."""
    samples = []
    for _ in range(runs):
        gc.collect()
        left = evict(path)
        if left > 0.01:
            raise RuntimeError(f"{path}: {left:.1%} of the file still cached after eviction")
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return {"median_s": statistics.median(samples), "min_s": min(samples), "max_s": max(samples)}


def read_gbps(path: Path) -> float:
    """GB/s of plain sequential ``read()``s of 16 MiB into one buffer."""
    buf = memoryview(bytearray(16 << 20))
    n, t = 0, time.perf_counter()
    with open(path, "rb", buffering=0) as fh:
        while got := fh.readinto(buf):
            n += got
    return n / (time.perf_counter() - t) / 1e9


# Peak resident memory of a process that loads and touches a checkpoint: VmHWM, which
# starts afresh with the process's memory (getrusage's ru_maxrss would carry the parent's
# peak across exec).
_PEAK_RSS = """
import sys, torch
def hwm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))
mod = __import__(sys.argv[1], fromlist=["load_file"])
base = hwm()
state = mod.load_file(sys.argv[2])
for t in state.values():
    t.reshape(-1).view(torch.uint8)[::4096].sum()
print(hwm() - base)
"""


# Peak resident memory of a process converting a checkpoint to safetensors, ours or
# torch's, above what it held with its modules imported.
_CONVERT_PEAK_RSS = """
import sys
def hwm():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))
who, src, dst = sys.argv[1:4]
if who == "tensorkit":
    import tensorkit
    base = hwm()
    tensorkit.convert(src, dst, header_reserve=0)
else:
    import torch, safetensors.torch
    base = hwm()
    state = torch.load(src, weights_only=True)
    metadata = {}
    for kept, removed in safetensors.torch._remove_duplicate_names(state).items():
        for name in removed:
            metadata.setdefault(name, kept)
            del state[name]
    safetensors.torch.save_file(state, dst, metadata=metadata or None)
print(hwm() - base)
"""


def checkpoint_rows(rows: list, row, tmp: Path, args: argparse.Namespace) -> None:
    """A PyTorch checkpoint converted to safetensors (issue 71): tensorkit reads the pickle
    without running it; the peer is the usual way, torch.load then safetensors' save_file
    with save_model's rule for tied weights. Time and peak memory."""
    import safetensors.torch
    import torch

    import tensorkit

    layers = args.torch_n // 2
    side = int((args.torch_mib * (1 << 20) / 4 / layers) ** 0.5)
    torch.manual_seed(1)
    model = torch.nn.Sequential(*(torch.nn.Linear(side, side) for _ in range(layers)))
    model[-1].weight = model[0].weight
    src = tmp / "pytorch_model.bin"
    torch.save(model.state_dict(), src)
    del model
    ours_out, peer_out = tmp / "ours.safetensors", tmp / "peer.safetensors"

    def ours():
        tensorkit.convert(src, ours_out, header_reserve=0)

    def peer():
        # save_model's rule: one name of tied weights written, the others in the metadata.
        state = torch.load(src, weights_only=True)
        metadata = {}
        for kept, removed in safetensors.torch._remove_duplicate_names(state).items():
            for name in removed:
                metadata.setdefault(name, kept)
                del state[name]
        safetensors.torch.save_file(state, peer_out, metadata=metadata or None)

    src.read_bytes()
    ours()
    peer()
    same = ours_out.read_bytes() == peer_out.read_bytes()
    row("pytorch_convert_to_safetensors", timed(ours, args.runs), timed(peer, max(1, args.runs // 2)),
        "torch.load(weights_only=True) + safetensors.torch.save_file", ">= 3x the peer, the same bytes",
        lambda r: same and r["speedup"] >= 3.0)

    def peak(who: str) -> int:
        out = subprocess.run([sys.executable, "-c", _CONVERT_PEAK_RSS, who, str(src), str(tmp / f"{who}.rss.safetensors")],
                             check=True, capture_output=True, text=True)
        return int(out.stdout.split()[-1])

    ours_rss = min(peak("tensorkit") for _ in range(2))
    peer_rss = min(peak("torch") for _ in range(2))
    rows.append({
        "case": "pytorch_convert_peak_rss", "ours": None, "peer": None,
        "peer_name": "torch.load + safetensors.torch.save_file",
        "target": "at most half the peer's", "speedup": None, "met": ours_rss * 2 <= peer_rss,
        "note": f"{ours_rss / 2**20:.0f} MiB against {peer_rss / 2**20:.0f} MiB above the process with its modules "
                f"imported (the lower of two runs each; a {src.stat().st_size / 2**20:.0f} MiB checkpoint)",
    })


def torch_loads(rows: list, row, tmp: Path, args: argparse.Namespace) -> None:
    """A checkpoint of ``--torch-n`` tensors in ``--torch-mib`` MiB loaded into torch on the
    CPU: tensorkit's safetensors drop-in against ``safetensors.torch``, warm and cold, into
    a real ``nn.Module``, and peak memory of a cold load. Every tensor's every page is
    touched after a load, since both map the file lazily."""

    import safetensors.torch
    import torch

    import tensorkit.safetensors.torch

    layers = args.torch_n // 2
    side = int((args.torch_mib * (1 << 20) / 4 / layers) ** 0.5)

    def model() -> torch.nn.Module:
        return torch.nn.Sequential(*(torch.nn.Linear(side, side) for _ in range(layers)))

    torch.manual_seed(0)
    path = tmp / "checkpoint.safetensors"
    safetensors.torch.save_model(model(), path)
    size = path.stat().st_size

    def touched(state: dict) -> dict:
        for t in state.values():
            t.reshape(-1).view(torch.uint8)[::4096].sum()
        return state

    ours = lambda: touched(tensorkit.safetensors.torch.load_file(path))  # noqa: E731
    peer = lambda: touched(safetensors.torch.load_file(path))  # noqa: E731
    a, b = ours(), peer()
    assert all(torch.equal(a[k], b[k]) for k in b), "tensorkit and safetensors disagree"
    del a, b
    path.read_bytes()
    warm_read, cold_read = read_gbps(path), None
    evict(path)
    cold_read = read_gbps(path)
    note = f"{size / 1e9:.2f} GB; read() {warm_read:.1f} GB/s warm, {cold_read:.1f} GB/s cold"

    def gbps(r: dict) -> str:
        return f"{size / r['median_s'] / 1e9:.2f} GB/s"

    runs = max(3, args.runs)
    o, p = timed(ours, runs), timed(peer, runs)
    row("torch_load_file_warm", o, p, "safetensors.torch.load_file", "at least as fast as the peer",
        lambda r: r["speedup"] >= 1.0)
    rows[-1]["note"] = f"{gbps(o)} against {gbps(p)}; {note}"
    o, p = cold(ours, path, runs), cold(peer, path, runs)
    row("torch_load_file_cold", o, p, "safetensors.torch.load_file", ">= 1.5x the peer",
        lambda r: r["speedup"] >= 1.5)
    rows[-1]["note"] = f"{gbps(o)} against {gbps(p)}; evicted before each run"

    def load_into(lib):
        m = model()
        return lambda: lib.load_model(m, path)

    path.read_bytes()
    row("torch_load_model", timed(load_into(tensorkit.safetensors.torch), runs),
        timed(load_into(safetensors.torch), runs), "safetensors.torch.load_model", "faster than the peer",
        lambda r: r["speedup"] > 1.0)

    def peak(module: str) -> int:
        evict(path)
        out = subprocess.run([sys.executable, "-c", _PEAK_RSS, module, str(path)], check=True,
                             capture_output=True, text=True)
        return int(out.stdout.split()[-1])

    ours_rss = min(peak("tensorkit.safetensors.torch") for _ in range(2))
    peer_rss = min(peak("safetensors.torch") for _ in range(2))
    rows.append({
        "case": "torch_cold_load_peak_rss", "ours": None, "peer": None,
        "peer_name": "safetensors.torch.load_file",
        "target": "no higher than the peer's, to 1 MiB (Python objects, not tensor bytes)",
        "speedup": None, "met": ours_rss <= peer_rss + (1 << 20),
        "note": f"{ours_rss / 2**20:.0f} MiB against {peer_rss / 2**20:.0f} MiB above the process with "
                "its modules imported (the lower of two runs each)",
    })


def netcdf_rows(rows: list, row, tmp: Path, args: argparse.Namespace) -> None:
    """NetCDF-3 and NetCDF-4 (issue 70) against netCDF4-python (libnetcdf): a file of 200
    variables, one of ``--nc-mib`` MiB, written by netCDF4 in each format; listing every
    variable's name and shape, and reading the large one into a new native-order array
    (ours decodes into it with `get(out=)`: big-endian to native, or chunks inflated, on
    both cores)."""
    try:
        import netCDF4
    except ImportError:
        return

    import tensorkit

    lat, lon = 721, 1440
    records = max(1, (args.nc_mib << 20) // (lat * lon * 4))
    shape = (records, lat, lon)
    # NetCDF-3 (64-bit offset), the large variable a record variable; NetCDF-4, the same
    # variables, the large one chunked a field a chunk and deflated (level 1) after shuffle,
    # as netCDF4-python writes CF archives.
    variants = [
        ("netcdf3", "archive.nc", "NETCDF3_64BIT_OFFSET", {}, "netcdf3_read_record_variable",
         f"netCDF4 var[...] ({records} records of a 0.25° float32 field)",
         "at least as fast as the peer, best against best (both fill new pages, decision 0010)"),
        ("netcdf4", "archive4.nc", "NETCDF4",
         dict(zlib=True, complevel=1, shuffle=True, chunksizes=(1, lat, lon)), "netcdf4_read_deflated_variable",
         f"netCDF4 var[...] ({records} deflated, shuffled chunks, both cores for ours)",
         "at least as fast as the peer, best against best"),
    ]
    for kind, name, fmt, storage, read_case, read_peer, read_target in variants:
        path = tmp / name
        with netCDF4.Dataset(path, "w", format=fmt) as ds:
            ds.createDimension("time", None)
            ds.createDimension("lat", lat)
            ds.createDimension("lon", lon)
            ds.createDimension("n", 10)
            for i in range(199):
                v = ds.createVariable(f"v{i:03d}", "f4", ("n",))
                v[:] = np.arange(10, dtype="f4")
                v.units = "K"
            t = ds.createVariable("t2m", "f4", ("time", "lat", "lon"), **storage)
            t.units = "K"
            for r in range(records):
                t[r] = global_field(r).astype("f4")
        path.read_bytes()

        def ours_list(path=path):
            with tensorkit.open(path) as f:
                return [(n, f.info(n)["shape"]) for n in f]

        def peer_list(path=path):
            with netCDF4.Dataset(path) as ds:
                return [(n, v.shape) for n, v in ds.variables.items()]

        assert [n for n, _ in ours_list()] == [n for n, _ in peer_list()]
        # Issue 70's 10x is NetCDF-4's (libnetcdf reads an HDF5 file's metadata in ~12 ms).
        # A NetCDF-3 header takes libnetcdf ~2 ms, less than Python spends on 200 `info`
        # dicts at 10x; there the target is 2x.
        factor = 10.0 if kind == "netcdf4" else 2.0
        row(f"{kind}_list_200_variables", timed(ours_list, args.runs * 10), timed(peer_list, args.runs * 10),
            "netCDF4.Dataset, every variable's name and shape", f">= {factor:g}x the peer",
            lambda r, factor=factor: r["speedup"] >= factor)

        def ours_read(path=path):
            with tensorkit.open(path) as f:
                return f.get("t2m", out=np.empty(shape, dtype="f4"))

        def peer_read(path=path, raw=kind == "netcdf3"):
            with netCDF4.Dataset(path) as ds:
                if raw:
                    ds.set_auto_maskandscale(False)
                return ds["t2m"][...]

        assert np.array_equal(ours_read(), peer_read())
        row(read_case, timed(ours_read, args.runs), timed(peer_read, args.runs), read_peer, read_target,
            lambda r: r["peer"]["min_s"] / r["ours"]["min_s"] >= 1.0)
        if kind == "netcdf4":
            convert_row(row, path, tmp, args)


def convert_row(row, path: Path, tmp: Path, args: argparse.Namespace) -> None:
    """A NetCDF-4 file converted to Tensogram (issue 70): ours in one call, against the
    pipeline tensogram's users run without its NetCDF importer — xarray (netCDF4 engine)
    loading the dataset, then tensogram's encoder writing every variable, unencoded, as one
    message (target: 2x)."""
    try:
        import tensogram
        import xarray as xr
    except ImportError:
        return

    import tensorkit

    ours_out, peer_out = tmp / "ours.tgm", tmp / "peer.tgm"

    def ours():
        tensorkit.convert(path, ours_out)

    def peer():
        with xr.open_dataset(path, engine="netcdf4") as ds:
            ds = ds.load()
            names = list(ds.variables)
            objects = [({"type": "ntensor", "shape": list(ds[n].shape), "dtype": str(ds[n].dtype)},
                        np.ascontiguousarray(ds[n].values)) for n in names]
            peer_out.write_bytes(tensogram.encode({"base": [{"name": n} for n in names]}, objects))

    ours()
    peer()
    with tensorkit.open(ours_out) as f:
        theirs = tensogram.decode(peer_out.read_bytes())
        for (desc, values), base in zip(theirs.objects, theirs.metadata.base):
            assert np.array_equal(f[base["name"]], values), base["name"]
    row("netcdf4_convert_to_tensogram", timed(ours, args.runs), timed(peer, args.runs),
        "xarray.open_dataset().load() + tensogram.encode, written", ">= 2x the peer",
        lambda r: r["speedup"] >= 2.0)


def gguf_rows(rows: list, row, tmp: Path, args: argparse.Namespace) -> None:
    """GGUF files gguf-py wrote: listing a many-tensor model, and dequantizing the common
    quantized types, against gguf-py, with our bandwidth as a fraction of memcpy's."""
    try:
        import gguf
    except ImportError:
        return

    import tensorkit

    rng = np.random.default_rng(51)
    model = tmp / "model.gguf"
    w = gguf.GGUFWriter(model, "llama")
    w.add_token_list([f"token{i}" for i in range(32000)])
    w.add_token_scores([float(i) for i in range(32000)])
    for i in range(args.gguf_n):
        w.add_tensor(f"blk.{i // 10}.t{i % 10}.weight", np.zeros((4, 32), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    model.read_bytes()

    def ours_list():
        f = tensorkit.open(model)
        return [(n, f.info(n)["shape"], f.info(n)["encoding"]) for n in f]

    def peer_list():
        r = gguf.GGUFReader(model)
        return [(t.name, tuple(t.shape), t.tensor_type) for t in r.tensors]

    assert len(ours_list()) == len(peer_list()) == args.gguf_n
    runs = max(3, args.runs)
    row("gguf_open_list", timed(ours_list, runs), timed(peer_list, runs), "gguf.GGUFReader",
        ">= 20x the peer", lambda r: r["speedup"] >= 20.0)

    elements = (args.gguf_mib << 20) // 4
    cols = 4096
    x = (rng.standard_normal((elements // cols, cols)) * 0.02).astype(np.float32)
    src, dst = np.empty_like(x), np.empty_like(x)
    copy = timed(lambda: np.copyto(dst, src), runs)
    memcpy_gbps = x.nbytes / copy["median_s"] / 1e9
    for qtype in ("Q4_K", "Q6_K", "Q8_0"):
        q = gguf.GGMLQuantizationType[qtype]
        block, size = gguf.GGML_QUANT_SIZES[q]
        if qtype == "Q8_0":
            blocks = gguf.quants.quantize(x, q)
        else:
            # gguf-py has no K quantizer: random blocks whose scales are kept finite.
            blocks = rng.integers(0, 256, size=(x.size // block, size), dtype=np.uint8)
            blocks[:, 1::2] &= 0xBF
            blocks = blocks.reshape(x.shape[0], -1)
        path = tmp / f"{qtype}.gguf"
        w = gguf.GGUFWriter(path, "llama")
        w.add_tensor("w", blocks, raw_dtype=q)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        path.read_bytes()
        f = tensorkit.open(path)
        r = gguf.GGUFReader(path)
        data = np.asarray(r.tensors[0].data)
        assert f["w"].tobytes() == gguf.quants.dequantize(data, q).tobytes(), qtype
        o = timed(lambda: f["w"], runs)
        p = timed(lambda: gguf.quants.dequantize(data, q), runs)
        # Both sides fill new memory, whose pages the host sometimes hands back slowly:
        # judged best against best, as saves are (docs/decisions/0010).
        row(f"gguf_dequant_{qtype}", o, p, "gguf.quants.dequantize", ">= 10x the peer, best against best",
            lambda r: r["peer"]["min_s"] / r["ours"]["min_s"] >= 10.0)
        gbps = x.nbytes / o["min_s"] / 1e9
        best = p["min_s"] / o["min_s"]
        rows[-1]["note"] = (f"best against best {best:.1f}x; {gbps:.1f} GB/s of float32 out at our best, "
                            f"{gbps / memcpy_gbps:.0%} of memcpy ({memcpy_gbps:.1f} GB/s); {x.nbytes >> 20} MiB")
        del f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--small-n", type=int, default=2000)
    ap.add_argument("--small-mib", type=int, default=64)
    ap.add_argument("--big-mib", type=int, default=1024)
    ap.add_argument("--tg-objects", type=int, default=8)
    ap.add_argument("--tg-mib", type=int, default=256, help="decoded size of the Tensogram message")
    ap.add_argument("--torch-mib", type=int, default=2048, help="size of the torch checkpoint")
    ap.add_argument("--torch-n", type=int, default=300, help="tensors in the torch checkpoint")
    ap.add_argument("--gguf-n", type=int, default=2000, help="tensors in the GGUF model listed")
    ap.add_argument("--gguf-mib", type=int, default=256, help="float32 size of each dequantized tensor")
    ap.add_argument("--nc-mib", type=int, default=512, help="size of the NetCDF record variable read")
    ap.add_argument("--dir", default=None, help="where the temporary files go")
    ap.add_argument("--json", default=None, help="write the report here instead of printing it")
    args = ap.parse_args()
    report = run(args)
    text = json.dumps(report, indent=2)
    if args.json:
        Path(args.json).write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
