"""The UI is a CPU Space: it must import and build without torch or lm-eval, doing no work on import."""

from __future__ import annotations

import subprocess
import sys

from tests.ui.conftest import REPO

BLOCKED = "import sys; sys.modules['torch'] = None; sys.modules['lm_eval'] = None; sys.modules['transformers'] = None\n"


def _run(code: str, tmp_path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "EVALITA_DATA_DIR": str(tmp_path / "missing-store"),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-c", BLOCKED + code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_app_imports_and_builds_without_torch_or_lm_eval(tmp_path) -> None:
    code = (
        "import app\n"
        "from eval_queue.settings import Settings\n"
        "from leaderboard.ui import build_app\n"
        "from leaderboard.ui.context import AppContext\n"
        "ctx = AppContext.from_settings(Settings.from_env())\n"
        "demo = build_app(ctx)\n"
        "assert ctx._store is None, 'building the UI must not read the store'\n"
        "print('built', type(demo).__name__)\n"
    )
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "built Blocks" in result.stdout
    # Nothing was read or created: the store folder does not even exist.
    assert not (tmp_path / "missing-store").exists()


def test_importing_app_does_no_work(tmp_path) -> None:
    result = _run("import app, sys\nprint('gradio' in sys.modules)\n", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "False"  # gradio is imported only when main() runs
