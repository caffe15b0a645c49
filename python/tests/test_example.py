"""examples/notebook.py runs as a script and writes its PNG; bench/python_collective.py runs."""
import os
import subprocess
import sys

from conftest import source


def test_notebook_writes_png(tmp_path):
    out = tmp_path / "candidates.png"
    p = subprocess.run([sys.executable, source("examples/notebook.py"), str(out)],
                       capture_output=True, text=True, env=dict(os.environ, MPLBACKEND="Agg"))
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "saved" in p.stdout and "training-appliance" in p.stdout


def test_bench_script_runs():
    p = subprocess.run([sys.executable, source("bench/python_collective.py"), "--calls", "3"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "3 calls, by name" in p.stdout
