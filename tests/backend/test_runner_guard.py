"""The override guard (issue 15 §1): the runner's TaskManager knows the local override's tasks only.

``TaskManager(**override.task_manager_kwargs())`` (``include_defaults=False``): a task the
local data lacks is *unknown* — the run fails naming it — instead of being read from its
hub dataset; and no "overrides existing task" warning is logged (one per task before).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from backend.tracks.evalita.data import SAMPLE_DATA_DIR, prepare_include_path
from tests.support.tiny_model import TinyModel

pytestmark = pytest.mark.slow

WIC = "evalita-mp_wic_prompt-1"
TE = "evalita-mp_te_prompt-1"


def test_a_task_absent_from_a_local_override_fails_the_run_and_nothing_else_is_read(
    tiny_model: TinyModel, tmp_path: Path, datasets_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from backend.runner import HarnessError, ModelRef, RunOptions, run_harness

    data = tmp_path / "wic-only"
    shutil.copytree(SAMPLE_DATA_DIR / "wic", data / "wic")
    override = prepare_include_path(f"local:{data}", tmp_path / "work", tasks=[WIC])
    model = ModelRef(str(tiny_model.folder), "main", "float32")
    options = RunOptions(device="cpu", batch_size=4, bootstrap_iters=0, limit=1, progress_interval_s=60)

    caplog.set_level(logging.INFO)
    done = run_harness(model, [WIC], 0, options, task_manager_kwargs=override.task_manager_kwargs())
    assert done.n_samples[WIC]["effective"] == 1
    assert "overrides existing task" not in caplog.text

    caplog.clear()
    with pytest.raises(HarnessError, match=f"could not load task {TE}") as info:
        run_harness(model, [WIC, TE], 0, options, task_manager_kwargs=override.task_manager_kwargs())
    # Unknown to the task manager: nothing was looked up on the hub or in its cache.
    reason = str(info.value) + caplog.text
    assert "textual_entailment" not in reason and "evalitahf" not in reason
