import os
import pathlib

import pytest


@pytest.fixture(scope="session")
def testdata() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TENSORKIT_TESTDATA", pathlib.Path(__file__).parents[4] / "testdata"))
