"""The app server computes one thread per computation (mha_core.threads): checked in a fresh process, since the
setting is process-wide."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import numpy, torch
from mha_core import threads
torch.set_num_threads(2)
threads.one_thread_each()
threads.one_thread_each()  # idempotent
print(threads.blas_threads(), torch.get_num_threads())
"""


def test_numpy_s_openblas_and_torch_end_with_one_thread_each():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[1]", "1"]  # numpy's wheel ships OpenBLAS: found and set, not skipped


def test_no_torch_is_imported_for_it():
    code = "import sys; from mha_core import threads; threads.one_thread_each(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
