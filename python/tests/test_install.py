"""`pip install .` from the checkout, offline, with Debian's setuptools: installed into a folder
(--target, so nothing of the system changes) from the build CTest runs in, then imported there."""
import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR


def test_pip_install_from_checkout(tmp_path):
    # Looked up, not imported: setuptools cannot be imported once distutils has been.
    for module in ("pip", "setuptools", "wheel"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    build = os.environ.get("LINKWISE_BUILD_DIR")
    if not build:
        pytest.skip("LINKWISE_BUILD_DIR (the CMake build to install from) is not set")
    target = tmp_path / "site"
    p = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
         "--disable-pip-version-check", "--target", str(target), SOURCE_DIR],
        capture_output=True, text=True, env=dict(os.environ, LINKWISE_BUILD_DIR=build))
    assert p.returncode == 0, p.stdout + p.stderr
    code = ("import linkwise; "
            "print(linkwise.__file__); "
            "print(linkwise.collective('dgx-h100', minbytes='1M', maxbytes='1M').ranks)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=str(target)))
    assert p.returncode == 0, p.stderr
    where, ranks = p.stdout.split()
    assert where.startswith(str(target)) and ranks == "8"
