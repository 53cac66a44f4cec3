"""Submission validation: clear refusals, nothing written on refusal, metadata filled in."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from eval_queue.errors import SubmissionRejected
from eval_queue.queue import RequestQueue, submitter_key
from eval_queue.requests import ModelType, Precision, Status
from eval_queue.resolver import CacheModelResolver, FallbackResolver, HubModelResolver
from eval_queue.settings import Settings
from eval_queue.storage import LocalStorage
from eval_queue.submission import SubmissionForm, submit
from tests.queue.fake_hub import FakeHub
from tests.queue.hf_cache import DEFAULT_SHA, make_cache_entry, safetensors_bytes

MODEL = "tiny-org/tiny-llama"
NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    cache = tmp_path / "hf-cache"
    make_cache_entry(cache, MODEL)
    return cache


@pytest.fixture
def settings(tmp_path: Path, cache: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", hf_hub_cache=cache, hf_offline=True, submission_limit=3)


@pytest.fixture
def queue(settings: Settings) -> RequestQueue:
    return RequestQueue(LocalStorage(settings.data_dir / "requests"))


def offer(queue: RequestQueue, settings: Settings, form: SubmissionForm, now: datetime = NOW):
    return submit(queue, form, resolver=CacheModelResolver(settings.hf_hub_cache), settings=settings, now=now)


def refused(queue: RequestQueue, settings: Settings, form: SubmissionForm) -> str:
    before = queue.storage.list()
    with pytest.raises(SubmissionRejected) as info:
        offer(queue, settings, form)
    assert queue.storage.list() == before, "a refused submission wrote something"
    return info.value.message


def test_cached_model_is_queued_pinned_with_its_metadata(queue: RequestQueue, settings: Settings) -> None:
    (request,) = offer(queue, settings, SubmissionForm(MODEL, submitted_by="alice"))
    assert request.status is Status.PENDING
    assert request.revision == DEFAULT_SHA
    assert request.precision is Precision.BFLOAT16 and request.num_fewshot == 0
    assert request.license == "apache-2.0"
    assert request.architecture == "LlamaForCausalLM"
    assert request.params_b == pytest.approx(128_000 / 1e9)
    assert request.submitted_time == "2026-03-01T09:00:00Z"
    assert [r.request_id for r in queue.listing().requests] == [request.request_id]


def test_one_request_per_fewshot_setting(queue: RequestQueue, settings: Settings) -> None:
    requests = offer(queue, settings, SubmissionForm(MODEL, num_fewshot=(0, 5, 5)))
    assert [r.num_fewshot for r in requests] == [0, 5]


def test_revision_is_pinned_from_a_sha_prefix(queue: RequestQueue, settings: Settings) -> None:
    (request,) = offer(queue, settings, SubmissionForm(MODEL, revision=DEFAULT_SHA[:10]))
    assert request.revision == DEFAULT_SHA


def test_model_type_comes_from_the_form_or_the_model_name(
    queue: RequestQueue, settings: Settings, cache: Path
) -> None:
    make_cache_entry(cache, "org/chatty-Instruct")
    (guessed,) = offer(queue, settings, SubmissionForm("org/chatty-Instruct"))
    assert guessed.model_type is ModelType.INSTRUCTION_TUNED
    (given,) = offer(queue, settings, SubmissionForm(MODEL, model_type="merged"))
    assert given.model_type is ModelType.MERGED


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        (SubmissionForm("not a model"), "not a Hub model id"),
        (SubmissionForm("org--x/y"), "not a Hub model id"),
        (SubmissionForm(MODEL, precision="fp8"), "choose one of bfloat16, float16, float32"),
        (SubmissionForm(MODEL, num_fewshot=(3,)), "choose 0 or 5"),
        (SubmissionForm(MODEL, num_fewshot=()), "at least one few-shot setting"),
        (SubmissionForm(MODEL, model_type="great"), "choose one of pretrained"),
        (SubmissionForm(MODEL, revision="a b"), "not a valid revision"),
        (SubmissionForm(MODEL, submitted_by="<script>"), "not a usable submitter name"),
    ],
)
def test_bad_fields_are_refused_with_the_valid_choices(
    queue: RequestQueue, settings: Settings, form: SubmissionForm, expected: str
) -> None:
    assert expected in refused(queue, settings, form)


def test_unknown_model_offline_cannot_be_verified(queue: RequestQueue, settings: Settings) -> None:
    message = refused(queue, settings, SubmissionForm("no-such-org/no-such-model-xyz"))
    assert "cannot verify no-such-org/no-such-model-xyz offline" in message
    assert not settings.data_dir.exists()


def test_uncached_revision_offline_cannot_be_verified(queue: RequestQueue, settings: Settings) -> None:
    assert "cannot verify revision 'dev'" in refused(queue, settings, SubmissionForm(MODEL, revision="dev"))


def test_same_evaluation_twice_is_refused_as_duplicate(queue: RequestQueue, settings: Settings) -> None:
    offer(queue, settings, SubmissionForm(MODEL))
    assert refused(queue, settings, SubmissionForm(MODEL)).startswith("duplicate:")
    # a new setting alongside a queued one: all refused, nothing half-written
    assert "duplicate" in refused(queue, settings, SubmissionForm(MODEL, num_fewshot=(5, 0)))


def test_failed_evaluation_can_be_submitted_again(queue: RequestQueue, settings: Settings) -> None:
    (first,) = offer(queue, settings, SubmissionForm(MODEL))
    claimed = queue.claim_next("w", lease_s=60)
    assert claimed is not None
    queue.fail(first.request_id, "w", "CUDA out of memory")
    (again,) = offer(queue, settings, SubmissionForm(MODEL), now=NOW + timedelta(hours=1))
    assert again.status is Status.PENDING and again.error is None
    assert [h["status"] for h in again.history] == ["PENDING", "RUNNING", "FAILED", "PENDING"]


def test_remote_code_models_are_refused_unless_allowed(
    queue: RequestQueue, settings: Settings, cache: Path
) -> None:
    config = {"architectures": ["Custom"], "auto_map": {"AutoModelForCausalLM": "modeling.Custom"}}
    make_cache_entry(cache, "org/custom", config=config)
    assert "needs trust_remote_code" in refused(queue, settings, SubmissionForm("org/custom"))
    allowed = Settings(data_dir=settings.data_dir, hf_hub_cache=cache, allow_remote_code=True)
    assert offer(queue, allowed, SubmissionForm("org/custom"))


def test_submitter_is_rate_limited_over_the_period(
    queue: RequestQueue, settings: Settings, cache: Path
) -> None:
    for i in range(3):
        make_cache_entry(cache, f"org/m{i}")
        offer(
            queue, settings, SubmissionForm(f"org/m{i}", submitted_by="bob"), now=NOW - timedelta(minutes=i)
        )
    message = refused(queue, settings, SubmissionForm(MODEL, submitted_by="Bob"))
    assert message.startswith("rate limit: Bob has submitted 3 request(s) in the last 7 days")
    assert "Try again after 2026-03-08T08:58:00Z" in message
    assert offer(queue, settings, SubmissionForm(MODEL, submitted_by="carol"))
    later = NOW + timedelta(days=7, minutes=1)
    assert offer(queue, settings, SubmissionForm(MODEL, submitted_by="bob", num_fewshot=(5,)), now=later)


def test_rate_limit_and_fair_order_group_submitters_by_the_same_key(
    queue: RequestQueue, settings: Settings, cache: Path
) -> None:
    for i, name in enumerate(("Dana", " dana ", "DANA")):
        make_cache_entry(cache, f"org/d{i}")
        offer(queue, settings, SubmissionForm(f"org/d{i}", submitted_by=name), now=NOW - timedelta(minutes=i))
    assert len({submitter_key(r.submitted_by) for r in queue.listing().requests}) == 1
    assert refused(queue, settings, SubmissionForm(MODEL, submitted_by="dAnA")).startswith("rate limit:")


def test_hub_resolver_pins_the_head_and_reads_metadata(fake_hub: FakeHub) -> None:
    repo = fake_hub.add_repo(
        "models",
        "org/online",
        cardData={"license": "mit", "base_model": "org/base"},
        config={"architectures": ["MistralForCausalLM"]},
        safetensors={"parameters": {"BF16": 7_241_732_096}, "total": 7_241_732_096},
        tags=["text-generation"],
    )
    resolved = HubModelResolver(HfApi(endpoint=fake_hub.url)).resolve("org/online", "main")
    assert resolved.sha == repo.head
    assert (resolved.license, resolved.params_b, resolved.architecture) == (
        "mit",
        7.242,
        "MistralForCausalLM",
    )
    assert resolved.model_type is ModelType.FINE_TUNED
    assert resolved.remote_code is None


def test_hub_resolver_refuses_a_model_the_hub_does_not_have(fake_hub: FakeHub, cache: Path) -> None:
    make_cache_entry(cache, "org/deleted")  # a stale cache entry must not resurrect it
    resolver = FallbackResolver(HubModelResolver(HfApi(endpoint=fake_hub.url)), CacheModelResolver(cache))
    with pytest.raises(SubmissionRejected, match="was not found on the Hub"):
        resolver.resolve("org/deleted", "main")
    fake_hub.add_repo("models", "org/present")
    with pytest.raises(SubmissionRejected, match="has no revision 'nope'"):
        resolver.resolve("org/present", "nope")


def test_unreachable_hub_falls_back_to_the_cache(online_client: None, cache: Path) -> None:
    unreachable = HfApi(endpoint="http://127.0.0.1:9")  # discard port: connection refused
    resolver = FallbackResolver(HubModelResolver(unreachable), CacheModelResolver(cache))
    resolved = resolver.resolve(MODEL, "main")
    assert (resolved.sha, resolved.source) == (DEFAULT_SHA, "cache")


def test_parameters_of_sharded_and_legacy_checkpoints(cache: Path) -> None:
    sharded = make_cache_entry(cache, "org/sharded") / "snapshots" / DEFAULT_SHA
    (sharded / "model.safetensors").unlink()
    for n in (1, 2):
        (sharded / f"model-0000{n}.safetensors").write_bytes(safetensors_bytes({f"w{n}": [1000, 1000]}))
    index = {
        "metadata": {"total_size": 4_000_000},
        "weight_map": {"a": "model-00001.safetensors", "b": "model-00002.safetensors"},
    }
    (sharded / "model.safetensors.index.json").write_text(json.dumps(index))
    legacy = make_cache_entry(cache, "org/legacy") / "snapshots" / DEFAULT_SHA
    (legacy / "model.safetensors").unlink()
    (legacy / "pytorch_model.bin").write_bytes(bytes(6_000_000))  # bfloat16: 2 bytes a parameter
    resolver = CacheModelResolver(cache)
    assert resolver.resolve("org/sharded", "main").params_b == 0.002
    assert resolver.resolve("org/legacy", "main").params_b == 0.003
