"""tensorkit.safetensors judged by safetensors' own tests: safetensors 0.8.0's Python
test-suite, fetched from its sdist on PyPI at test time (never copied here), run against the
drop-in through a conftest that aliases it as ``safetensors``; and every drop-in function's
and class's parameters compared with safetensors 0.8's by introspection."""

from __future__ import annotations

import inspect
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import safetensors
import safetensors.numpy
import safetensors.torch

import tensorkit.safetensors
import tensorkit.safetensors.numpy
import tensorkit.safetensors.torch

VERSION = "0.8.0"
# The tests of the frameworks tensorkit's drop-in covers here (torch and numpy, handles,
# both backends, threads); tensorflow's has no drop-in, and flax, mlx and paddle are
# tested apart (test_safetensors_torch.py).
SUITE = [
    "test_pt_comparison.py",
    "test_pt_model.py",
    "test_simple.py",
    "test_handle.py",
    "test_pread_backend.py",
    "test_threadable.py",
    "test_multithreaded.py",
]
CONFTEST = '''import sys
import tensorkit.safetensors
import tensorkit.safetensors.numpy
import tensorkit.safetensors.torch

sys.modules["safetensors"] = tensorkit.safetensors
sys.modules["safetensors.numpy"] = tensorkit.safetensors.numpy
sys.modules["safetensors.torch"] = tensorkit.safetensors.torch
'''


def _sdist_tests(cache: Path) -> Path:
    """safetensors' ``bindings/python/tests`` from its sdist, downloaded once into ``cache``."""
    tests = cache / f"safetensors-{VERSION}" / "bindings" / "python" / "tests"
    if tests.is_dir():
        return tests
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "--no-binary", ":all:", "--no-deps", f"safetensors=={VERSION}", "-d", str(cache)],
        check=True,
    )
    with tarfile.open(cache / f"safetensors-{VERSION}.tar.gz") as tar:
        members = [m for m in tar.getmembers() if "/bindings/python/tests/" in m.name]
        tar.extractall(cache, members=members, filter="data")
    return tests


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path(__file__).parents[4] / "target"))
    tests = _sdist_tests(target / "safetensors-sdist")
    root = tmp_path_factory.mktemp("safetensors-suite")
    (root / "tests" / "data").mkdir(parents=True)
    for name in SUITE:
        shutil.copy(tests / name, root / "tests" / name)
    (root / "tests" / "conftest.py").write_text(CONFTEST)
    return root


def test_safetensors_own_suite_passes_against_the_drop_in(suite):
    # Run where safetensors runs it (bindings/python: the tests write ./tests/data/...).
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=suite, capture_output=True, text=True, timeout=600,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", summary)) else 0
    assert run.returncode == 0 and "failed" not in summary and "error" not in summary, run.stdout[-6000:]
    # safetensors 0.8.0 itself passes 66 of them here (the others skip: Windows, s3, GPUs).
    assert passed >= 66, summary


def _parameters(obj):
    """``obj``'s parameters as (name, kind, default), ``self`` left out."""
    params = inspect.signature(obj).parameters.values()
    return [(p.name, p.kind, p.default) for p in params if p.name != "self"]


# Parameters the drop-in adds beyond safetensors (keyword-only, with defaults).
EXTENSIONS = {("safetensors", "TensorSpec"): {"data"}}


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (tensorkit.safetensors, safetensors),
        (tensorkit.safetensors.numpy, safetensors.numpy),
        (tensorkit.safetensors.torch, safetensors.torch),
    ],
    ids=["safetensors", "numpy", "torch"],
)
def test_every_function_takes_safetensors_parameters(ours, theirs):
    module = theirs.__name__.rsplit(".", 1)[-1] if "." in theirs.__name__ else "safetensors"
    checked = 0
    for name in dir(theirs):
        obj = getattr(theirs, name)
        if name.startswith("__") or not callable(obj) or inspect.ismodule(obj):
            continue
        if not getattr(obj, "__module__", "").startswith("safetensors"):
            continue  # typing's, numpy's, torch's names the module imports
        try:
            expected = _parameters(obj)
        except (TypeError, ValueError):
            continue  # no signature to compare (an exception type)
        if name.startswith("_") and not hasattr(ours, name):
            continue  # safetensors' internals; those callers import (transformers) are here
        assert hasattr(ours, name), f"{theirs.__name__}.{name} is missing"
        got = _parameters(getattr(ours, name))
        extra = EXTENSIONS.get((module, name), set())
        kept = [p for p in got if p[0] not in extra]
        assert kept == expected, f"{theirs.__name__}.{name}: {kept} != {expected}"
        for p in got:
            if p[0] in extra:
                assert p[1] == inspect.Parameter.KEYWORD_ONLY and p[2] is not inspect.Parameter.empty, (name, p)
        checked += 1
    assert checked >= 3
