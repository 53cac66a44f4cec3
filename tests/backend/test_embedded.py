"""backend.embedded: the SmolLM2 GGUF becomes a standard hub cache entry the queue accepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from backend.embedded import (
    EMBEDDED_MODEL_ID,
    file_sha1,
    find_gguf,
    install_embedded,
    install_snapshot,
    repo_cache_dir,
)
from eval_queue.requests import ModelType
from eval_queue.resolver import CacheModelResolver
from eval_queue.settings import hub_cache_dir
from tests.backend.conftest import REPO_ROOT, worker_env


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HF_HUB_CACHE": "/a/hub", "HF_HOME": "/b"}, "/a/hub"),
        ({"HF_HOME": "/b"}, "/b/hub"),
        ({"XDG_CACHE_HOME": "/x"}, "/x/huggingface/hub"),
    ],
)
def test_hub_cache_dir_follows_huggingface_hub_rules(env: dict[str, str], expected: str) -> None:
    assert hub_cache_dir(env) == Path(expected)


def test_install_snapshot_lays_out_blobs_snapshot_links_and_ref(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "sub").mkdir(parents=True)
    (source / "config.json").write_text("{}")
    (source / "sub" / "a.txt").write_text("a")
    revision = "1" * 40

    snapshot = install_snapshot(source, "org/name", revision, tmp_path / "hub")

    repo = repo_cache_dir(tmp_path / "hub", "org/name")
    assert snapshot == repo / "snapshots" / revision
    assert (repo / "refs" / "main").read_text() == revision
    assert (snapshot / "config.json").is_symlink() and (snapshot / "config.json").read_text() == "{}"
    assert (snapshot / "sub" / "a.txt").read_text() == "a"
    assert len(list((repo / "blobs").iterdir())) == 2


@pytest.mark.slow
def test_embedded_model_installs_once_loads_offline_and_is_accepted_by_the_resolver(tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    env = worker_env(cache, tmp_path / "datasets", tmp_path / "data")
    done = subprocess.run(
        [sys.executable, "-m", "backend", "install-embedded", "--check"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    revision = file_sha1(find_gguf())
    assert f"installed: revision {revision}" in done.stdout
    assert "Paris" in done.stdout  # a real generation: "The capital of France is Paris."

    repo = repo_cache_dir(cache, EMBEDDED_MODEL_ID)
    assert (repo / "refs" / "main").read_text() == revision
    snapshot = repo / "snapshots" / revision
    for name in ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "README.md"):
        assert (snapshot / name).is_file(), name
    card = (snapshot / "README.md").read_text()
    assert card.startswith("---\n") and "license: apache-2.0" in card

    resolved = CacheModelResolver(cache).resolve(EMBEDDED_MODEL_ID, "main")
    assert resolved.sha == revision
    assert resolved.license == "apache-2.0"
    assert resolved.model_type is ModelType.INSTRUCTION_TUNED

    # Installed once: a second install converts and writes nothing (the weights file is the same
    # file, untouched), rather than a timing threshold that depends on the machine's load.
    weights = (snapshot / "model.safetensors").stat()
    again = install_embedded(cache)
    assert not again.created and again.revision == revision
    after = (snapshot / "model.safetensors").stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        weights.st_ino,
        weights.st_mtime_ns,
        weights.st_size,
    )
