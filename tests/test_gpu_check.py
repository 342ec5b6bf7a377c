"""``.ci/gpu-check`` (the one-command GPU checks) fails clearly where there is no GPU."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bilevel_theory.problems import cupy_available

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(cupy_available()[0], reason="a GPU is present: the script would run")
def test_gpu_check_without_a_gpu_is_one_line_and_exit_2(tmp_path):
    out = subprocess.run(["bash", str(ROOT / ".ci" / "gpu-check"), "tests"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "RESULTS": str(tmp_path)})
    assert out.returncode == 2
    assert "gpu-check needs CuPy and a CUDA GPU" in out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    assert (tmp_path / "device.txt").exists()
