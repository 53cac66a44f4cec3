"""Resolving a submitted model id + revision to a pinned commit and its metadata.

:class:`ModelResolver` is the small interface :func:`eval_queue.submission.submit`
depends on.  Three implementations:

* :class:`HubModelResolver` asks the Hub (``HfApi.model_info``);
* :class:`CacheModelResolver` reads a standard huggingface_hub cache entry
  (``models--org--name/refs/<rev>`` → sha, ``snapshots/<sha>/config.json``, ``README.md``,
  ``*.safetensors``) — the embedded model is one, and HPC nodes often have only this;
* :class:`FallbackResolver` tries the hub and, when it cannot be reached, the cache.

A resolver raises :class:`~eval_queue.errors.SubmissionRejected` with a message for
the user when the model or revision does not exist or cannot be verified, and
:class:`HubUnreachable` when the hub could not answer (so a fallback can step in).
"""

from __future__ import annotations

import json
import logging
import math
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from eval_queue.errors import EvalitaError, SubmissionRejected
from eval_queue.hubclient import transport_errors
from eval_queue.requests import ModelType
from eval_queue.settings import Settings
from eval_queue.vocabulary import short_revision

if TYPE_CHECKING:
    from huggingface_hub import HfApi

logger = logging.getLogger(__name__)

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_HEADER_LIMIT = 100 * 1024 * 1024  # a safetensors header larger than this is not one
_BYTES_PER_PARAM = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


class HubUnreachable(EvalitaError):
    """The hub could not be asked (offline mode, network or server error)."""


@dataclass(frozen=True)
class ResolvedModel:
    """What the queue records about a model at a pinned commit."""

    model_id: str
    sha: str
    params_b: float | None = None
    license: str | None = None
    model_type: ModelType | None = None
    architecture: str | None = None
    # Why transformers would need trust_remote_code, or None if it would not.
    remote_code: str | None = None
    source: str = "hub"
    tags: tuple[str, ...] = field(default=())


class ModelResolver(Protocol):
    def resolve(self, model_id: str, revision: str) -> ResolvedModel:
        """Pin ``revision`` of ``model_id`` to a commit sha and read its metadata."""
        ...


# -- metadata helpers shared by both sources -------------------------------------


def remote_code_reason(config: dict[str, Any] | None, tags: tuple[str, ...] = ()) -> str | None:
    """Why loading needs ``trust_remote_code`` (``auto_map`` in config.json), else None."""
    if config and config.get("auto_map"):
        return "its config.json has an auto_map (custom modelling code)"
    if "custom_code" in tags:
        return "the Hub tags it custom_code"
    return None


def architecture_of(config: dict[str, Any] | None) -> str | None:
    architectures = (config or {}).get("architectures") or []
    return str(architectures[0]) if architectures else None


def guess_model_type(model_id: str, card: dict[str, Any], tags: tuple[str, ...]) -> ModelType | None:
    """A conservative guess from the model card; None when the card does not say.

    Merges are tagged ``merge``; chat/instruct models are named or tagged so; a card
    with a ``base_model`` is a fine-tune of it.  Anything else stays unknown rather
    than being called "pretrained" on no evidence.
    """
    words = {t.lower() for t in (*tags, *(card.get("tags") or []))}
    name = model_id.rsplit("/", 1)[-1].lower()
    if "merge" in words or "mergekit" in words:
        return ModelType.MERGED
    if {"conversational", "instruct", "chat"} & words or re.search(r"(instruct|chat|-it\b|-sft)", name):
        return ModelType.INSTRUCTION_TUNED
    if card.get("base_model"):
        return ModelType.FINE_TUNED
    return None


def card_license(card: dict[str, Any], tags: tuple[str, ...]) -> str | None:
    license_ = card.get("license")
    if isinstance(license_, list):
        license_ = license_[0] if license_ else None
    if license_:
        return str(license_)
    for tag in tags:
        if tag.startswith("license:"):
            return tag.removeprefix("license:")
    return None


def params_in_billions(count: float | None) -> float | None:
    """Billions of parameters to 4 significant digits (7.242, 0.1348; tiny test models stay non-zero)."""
    return None if not count else float(f"{count / 1e9:.4g}")


# -- hub ---------------------------------------------------------------------------


class HubModelResolver:
    """Resolves through ``HfApi.model_info`` (one request)."""

    def __init__(self, api: HfApi, *, token: str | None = None, timeout_s: float = 10.0) -> None:
        self.api = api
        self.token = token
        # A node without network should fall back to the cache quickly, not hang.
        self.timeout_s = timeout_s

    def resolve(self, model_id: str, revision: str) -> ResolvedModel:
        from huggingface_hub.errors import (
            GatedRepoError,
            HfHubHTTPError,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        try:
            info = self.api.model_info(model_id, revision=revision, token=self.token, timeout=self.timeout_s)
        except GatedRepoError:
            raise SubmissionRejected(
                f"{model_id} is gated on the Hub: the leaderboard can only evaluate models anyone can download."
            ) from None
        except RevisionNotFoundError:
            raise SubmissionRejected(
                f"{model_id} has no revision {revision!r}: use a branch, tag or commit sha that exists on the Hub."
            ) from None
        except RepositoryNotFoundError:
            raise SubmissionRejected(
                f"{model_id} was not found on the Hub: check the spelling (organisation/model) "
                "and that the model is public."
            ) from None
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else None
            raise HubUnreachable(f"the Hub answered HTTP {status}") from None
        except transport_errors() as exc:  # offline mode, no route, timeout
            raise HubUnreachable(type(exc).__name__) from None
        return self._resolved(model_id, info)

    def _resolved(self, model_id: str, info: Any) -> ResolvedModel:
        tags = tuple(info.tags or ())
        card = _card_dict(info.card_data)
        config = info.config if isinstance(info.config, dict) else None
        total = info.safetensors.total if info.safetensors else None
        return ResolvedModel(
            model_id=model_id,
            sha=info.sha,
            params_b=params_in_billions(total),
            license=card_license(card, tags),
            model_type=guess_model_type(model_id, card, tags),
            architecture=architecture_of(config),
            remote_code=remote_code_reason(config, tags),
            source="hub",
            tags=tags,
        )


def _card_dict(card_data: Any) -> dict[str, Any]:
    if card_data is None:
        return {}
    if isinstance(card_data, dict):
        return card_data
    return card_data.to_dict()


# -- local cache -------------------------------------------------------------------


class CacheModelResolver:
    """Resolves from a huggingface_hub cache directory, without any network."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = Path(cache_dir)

    def resolve(self, model_id: str, revision: str) -> ResolvedModel:
        repo = self.cache_dir / f"models--{model_id.replace('/', '--')}"
        if not repo.is_dir():
            raise SubmissionRejected(
                f"cannot verify {model_id} offline: it is not in the local Hugging Face cache "
                f"({self.cache_dir}). Download it there first, or submit when the Hub is reachable."
            )
        sha = self._pin(repo, model_id, revision)
        snapshot = repo / "snapshots" / sha
        config = _read_json(snapshot / "config.json")
        if config is None:
            raise SubmissionRejected(
                f"cannot verify {model_id} offline: the cached snapshot {short_revision(sha)} has no readable "
                "config.json. Download the complete model first."
            )
        card = _read_card(snapshot / "README.md")
        tags = tuple(str(t) for t in card.get("tags") or ())
        return ResolvedModel(
            model_id=model_id,
            sha=sha,
            params_b=params_in_billions(_count_parameters(snapshot, config)),
            license=card_license(card, tags),
            model_type=guess_model_type(model_id, card, tags),
            architecture=architecture_of(config),
            remote_code=remote_code_reason(config, tags),
            source="cache",
            tags=tags,
        )

    def _pin(self, repo: Path, model_id: str, revision: str) -> str:
        """The commit sha ``revision`` names in this cache entry (branch/tag ref, sha or sha prefix)."""
        ref = repo / "refs" / revision
        if ref.is_file():
            sha = ref.read_text().strip()
            if (repo / "snapshots" / sha).is_dir():
                return sha
        snapshots = repo / "snapshots"
        if re.fullmatch(r"[0-9a-f]{7,40}", revision) and snapshots.is_dir():
            matches = [p.name for p in snapshots.iterdir() if p.name.startswith(revision)]
            if len(matches) == 1:
                return matches[0]
        raise SubmissionRejected(
            f"cannot verify revision {revision!r} of {model_id} offline: the local Hugging Face cache "
            f"has no snapshot for it. Use a revision that is cached, or submit when the Hub is reachable."
        )


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _read_card(path: Path) -> dict[str, Any]:
    """The YAML metadata block at the top of a model card ({} if none or unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", text, re.DOTALL)
    if not match:
        return {}
    import yaml  # a dependency of huggingface_hub

    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        logger.warning("ignoring unreadable model card metadata in %s", path)
        return {}
    return meta if isinstance(meta, dict) else {}


def _count_parameters(snapshot: Path, config: dict[str, Any]) -> int | None:
    """Parameters from the safetensors headers (exact), else estimated from weight bytes and dtype."""
    single = snapshot / "model.safetensors"
    if single.is_file():
        return _safetensors_parameters(single)
    width = _BYTES_PER_PARAM.get(str(config.get("torch_dtype") or config.get("dtype")), 2)
    index = _read_json(snapshot / "model.safetensors.index.json")
    if index is None:
        # No safetensors: estimate from the size of PyTorch weight files, if any.
        size = sum(p.stat().st_size for p in snapshot.glob("pytorch_model*.bin") if p.is_file())
        return int(size / width) if size else None
    shards = sorted(set((index.get("weight_map") or {}).values()))
    counts = [_safetensors_parameters(snapshot / shard) for shard in shards]
    if shards and all(c is not None for c in counts):
        return sum(c for c in counts if c is not None)
    total_size = (index.get("metadata") or {}).get("total_size")
    if not isinstance(total_size, int | float):
        return None
    return int(total_size / width)


def _safetensors_parameters(path: Path) -> int | None:
    try:
        with path.open("rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if length > _HEADER_LIMIT:
                return None
            header = json.loads(handle.read(length))
    except (OSError, ValueError, struct.error):
        return None
    return sum(
        math.prod(tensor.get("shape") or [])
        for name, tensor in header.items()
        if name != "__metadata__" and isinstance(tensor, dict)
    )


# -- choosing ----------------------------------------------------------------------


class FallbackResolver:
    """The hub first; the local cache when the hub cannot be reached.

    A model the hub says does not exist is refused; it is not looked up in the cache,
    since a stale cache entry must not resurrect a deleted or renamed model.
    """

    def __init__(self, primary: ModelResolver, fallback: ModelResolver) -> None:
        self.primary = primary
        self.fallback = fallback

    def resolve(self, model_id: str, revision: str) -> ResolvedModel:
        try:
            return self.primary.resolve(model_id, revision)
        except HubUnreachable as exc:
            logger.info("hub unreachable (%s); resolving %s from the local cache", exc, model_id)
            return self.fallback.resolve(model_id, revision)


def resolver_for(settings: Settings) -> ModelResolver:
    """The resolver an entry point should use: cache only when offline, else hub then cache."""
    cache = CacheModelResolver(settings.hf_hub_cache)
    if settings.hf_offline:
        return cache
    from huggingface_hub import HfApi

    api = HfApi(endpoint=settings.hf_endpoint, token=settings.hf_token)
    return FallbackResolver(HubModelResolver(api, token=settings.hf_token), cache)
