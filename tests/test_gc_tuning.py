"""The serving process's collector settings (in a child: the test process keeps its own)."""

from __future__ import annotations

import subprocess
import sys

from scholarstream.gc_tuning import THRESHOLDS


def test_serving_freezes_what_start_up_loaded_and_collects_less_often() -> None:
    script = (
        "import gc; from scholarstream.gc_tuning import tune_for_serving; "
        "tune_for_serving(); print(gc.get_threshold(), gc.get_freeze_count() > 1000)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"{THRESHOLDS} True"
