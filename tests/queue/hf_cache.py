"""Build huggingface_hub cache entries in a temp dir, laid out as the client writes them."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

DEFAULT_SHA = "0123456789abcdef0123456789abcdef01234567"
LLAMA_CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "torch_dtype": "bfloat16",
}


def safetensors_bytes(shapes: dict[str, list[int]]) -> bytes:
    """A safetensors file whose header declares ``shapes`` (bf16); tensor bytes are zeros.

    Past 1 MB the tensor bytes are left out: only the header is ever read, and a
    "135M-parameter" fixture should not write 270 MB.
    """
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in shapes.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + bytes(offset if offset <= 1 << 20 else 0)


def make_cache_entry(
    cache: Path,
    model_id: str,
    *,
    sha: str = DEFAULT_SHA,
    refs: tuple[str, ...] = ("main",),
    config: dict[str, Any] | None = None,
    card: str | None = "---\nlicense: apache-2.0\ntags:\n- text-generation\n---\n# Model\n",
    shapes: dict[str, list[int]] | None = None,
) -> Path:
    """``models--org--name/{refs/<ref>, blobs/, snapshots/<sha>/…}`` with symlinked files."""
    repo = cache / f"models--{model_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / sha
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    for ref in refs:
        (repo / "refs" / ref).write_text(sha)
    files: dict[str, bytes] = {
        "config.json": json.dumps(config if config is not None else LLAMA_CONFIG).encode()
    }
    if card is not None:
        files["README.md"] = card.encode()
    files["model.safetensors"] = safetensors_bytes(shapes or {"embed": [1000, 64], "head": [64, 1000]})
    (repo / "blobs").mkdir(exist_ok=True)
    for name, data in files.items():
        blob = repo / "blobs" / f"{abs(hash((sha, name))):x}"
        blob.write_bytes(data)
        (snapshot / name).symlink_to(Path("../..") / "blobs" / blob.name)
    return repo
