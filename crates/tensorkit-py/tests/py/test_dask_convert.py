"""tensorkit.dask.convert: one task per file, restartable, on the local threads or a
LocalCluster of worker processes, one of them killed halfway."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import grib_cubes
import tensorkit
import tensorkit.dask

pytest.importorskip("eccodes")


def archive(d, n, ni=72, nj=37):
    d.mkdir()
    return [grib_cubes.ensemble(d / f"f{i:03d}.grib2", params=("t",), members=2, steps=(0, 6), levels=(850, 500), ni=ni, nj=nj, d=5.0) for i in range(n)]


def assert_exact(src, dst):
    with tensorkit.open(src) as a, tensorkit.open(dst) as b:
        assert sorted(a) == sorted(b)
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])


def test_local_threads_convert_and_a_rerun_skips(tmp_path):
    inputs = archive(tmp_path / "in", 6)
    out = tmp_path / "out"
    report = tensorkit.dask.convert(inputs, out, to="tensogram")
    assert [r["status"] for r in report] == ["converted"] * 6
    assert [r["output"] for r in report] == [str(out / f"f{i:03d}.tgm") for i in range(6)]
    assert all(r["tensors"] == 8 and r["left_out"] == [] for r in report)
    for src in inputs:
        assert_exact(src, out / (src.stem + ".tgm"))
    # A damaged output is converted again; the sound ones are skipped.
    damaged = out / "f002.tgm"
    damaged.write_bytes(damaged.read_bytes()[:-10])
    again = tensorkit.dask.convert(inputs, out, to="tgm")
    assert [r["status"] for r in again] == ["skipped", "skipped", "converted", "skipped", "skipped", "skipped"]
    assert_exact(inputs[2], damaged)


def test_failures_are_reported_or_raised(tmp_path):
    inputs = archive(tmp_path / "in", 2)
    bad = tmp_path / "in" / "bad.grib2"
    bad.write_bytes(b"GRIB" + bytes(40))
    with pytest.raises(tensorkit.InvalidArgumentError, match="1 of 3 conversions failed"):
        tensorkit.dask.convert(inputs + [bad], tmp_path / "out")
    report = tensorkit.dask.convert(inputs + [bad], tmp_path / "out", errors="report")
    assert [r["status"] for r in report] == ["skipped", "skipped", "failed"]
    assert "bad.grib2" in report[2]["input"] and report[2]["error"]
    assert not (tmp_path / "out" / "bad.tgm").exists()
    with pytest.raises(tensorkit.InvalidArgumentError, match="not a format"):
        tensorkit.dask.convert(inputs, tmp_path / "out", to="hdf5")


def test_a_killed_worker_leaves_every_output_complete(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    inputs = archive(tmp_path / "in", 50, ni=360, nj=181)
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            pids = list(client.run(os.getpid).values())
            result = {}
            runner = threading.Thread(target=lambda: result.update(report=tensorkit.dask.convert(inputs, out, client=client)))
            runner.start()
            # Kill one worker once some outputs exist and others are still to come.
            deadline = time.monotonic() + 60
            while len(list(out.glob("*.tgm"))) < 5 and time.monotonic() < deadline:
                time.sleep(0.005)
            os.kill(pids[0], signal.SIGKILL)
            killed_at = len(list(out.glob("*.tgm")))
            runner.join(timeout=240)
    assert killed_at < 50, "the worker was killed after the run had finished"
    report = result["report"]
    assert len(report) == 50 and all(r["status"] in ("converted", "skipped") for r in report)
    assert sorted(p.name for p in out.iterdir()) == [f"f{i:03d}.tgm" for i in range(50)]
    for src in inputs:
        assert_exact(src, out / (src.stem + ".tgm"))


@pytest.mark.parametrize("cluster", [False, True])
def test_an_archive_becomes_one_zarr_store_region_by_region(tmp_path, cluster):
    xr = pytest.importorskip("xarray")
    days = [grib_cubes.analyses(tmp_path / f"day{k}.grib2", dates=((20261101 + k, 0), (20261101 + k, 1200)))
            for k in range(4)]
    store = tmp_path / "archive.zarr"
    if cluster:
        distributed = pytest.importorskip("dask.distributed")
        with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as c:
            with distributed.Client(c) as client:
                report = tensorkit.dask.to_zarr(days, store, client=client)
    else:
        report = tensorkit.dask.to_zarr(days, store)
    assert [r["region"] for r in report] == [[0, 2], [2, 4], [4, 6], [6, 8]]
    ds = xr.open_zarr(store, consolidated=False, zarr_format=3)
    want = xr.concat([xr.open_dataset(p, engine="tensorkit") for p in days], dim="time")
    assert sorted(ds.data_vars) == sorted(want.data_vars)
    for v in want.data_vars:
        assert ds[v].dims == want[v].dims and ds[v].encoding["chunks"] == (1, 7, 12)
        np.testing.assert_array_equal(ds[v].values, want[v].values)
    for c in want.coords:
        np.testing.assert_array_equal(ds[c].values, want[c].values, err_msg=c)
    with pytest.raises(tensorkit.InvalidArgumentError, match="no dimension 'number'"):
        tensorkit.dask.to_zarr(days, tmp_path / "other.zarr", dim="number")
