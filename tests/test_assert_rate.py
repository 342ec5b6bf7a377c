"""The ``assert_rate`` fixture as a user's test suite meets it: a failing rate is one readable
message, the measured slope and interval against the law, at the user's own line (no frames
of the library, no raw data)."""

from __future__ import annotations

import subprocess
import sys

USER_TEST = '''
import numpy as np

def test_rate(assert_rate):
    n = np.array([1, 2, 4, 8, 16, 32])
    rng = np.random.default_rng(0)
    errors = [1.0 / np.sqrt(k) * rng.lognormal(0.0, 0.1, 32) for k in n]
    assert_rate(n, errors, law=-1.0, kind="matches", tolerance=0.1)
'''


def test_a_failing_rate_is_one_message_at_the_users_line(tmp_path):
    (tmp_path / "test_user.py").write_text(USER_TEST)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_user.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout
    assert proc.returncode == 1, out
    assert "RateAssertionError: rate check violated (expected holds): slope -0.5" in out, out
    assert "predicted -1" in out
    assert "verify/rate.py" not in out and "verify/verdict.py" not in out, out
    assert "lognormal" in out  # the failing line shown is the user's own
