"""Data sources: the upstream lm-eval task names read ``sample`` / ``local:<dir>`` files offline.

Loads the harness's task index once per module (about 20 s); everything else reuses it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from backend.tracks.evalita.data import (
    INCLUDE_DIR_NAME,
    SAMPLE_DATA_DIR,
    DataOverride,
    DataSource,
    DataSourceError,
    DataSourceKind,
    check_data_source,
    prepare_include_path,
    read_upstream_configs,
    read_upstream_tasks,
)
from backend.tracks.evalita.offline_rouge import install_offline_rouge
from leaderboard.tracks.evalita.definition import SUITE, TaskKind, all_harness_tasks, get_task

lm_eval_tasks = pytest.importorskip("lm_eval.tasks")

SUITE_TASKS = {
    name: (spec.id, spec.kind)
    for spec in SUITE
    for prompt in spec.prompts
    for name in prompt.harness_task_names
}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def offline_rouge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``evaluate.load("rouge")`` (run by the SUM hooks) served from a private modules cache."""
    from evaluate import config

    mp = pytest.MonkeyPatch()
    cache = tmp_path_factory.mktemp("hf-modules")
    mp.setattr(config, "HF_MODULES_CACHE", cache)
    mp.setattr(config, "HF_EVALUATE_OFFLINE", True)
    install_offline_rouge(cache)
    yield
    mp.undo()


@pytest.fixture(scope="module")
def datasets_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf-datasets")))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def sample_override(tmp_path_factory: pytest.TempPathFactory) -> DataOverride:
    return prepare_include_path("sample", tmp_path_factory.mktemp("work"))


@pytest.fixture(scope="module")
def task_manager(sample_override: DataOverride) -> Any:
    return lm_eval_tasks.TaskManager(**sample_override.task_manager_kwargs())


@pytest.fixture(scope="module")
def loaded(task_manager: Any, offline_rouge: None, datasets_cache: None) -> dict[str, Any]:
    """The whole upstream ``evalita-mp`` group, built with the sample data."""
    return task_manager.load(["evalita-mp"])["tasks"]


def test_every_upstream_task_is_overridden_with_existing_files(sample_override: DataOverride) -> None:
    upstream = {task.name for task in read_upstream_tasks()}
    assert set(sample_override.tasks) == upstream
    assert set(SUITE_TASKS) <= upstream
    assert sample_override.label == "sample"
    assert sample_override.include_path is not None
    written = {p.stem for p in sample_override.include_path.glob("*.yaml")}
    groups = {group.name for group in read_upstream_configs().groups}
    assert written == upstream | {f"group--{name}" for name in groups}
    assert {"evalita-mp", "evalita-mp_ner_group"} <= groups
    for files in sample_override.data_files.values():
        assert all(path.is_file() and path.is_relative_to(SAMPLE_DATA_DIR) for path in files.values())


def test_upstream_group_builds_every_suite_task_from_local_json(
    loaded: dict[str, Any], sample_override: DataOverride
) -> None:
    assert set(SUITE_TASKS) <= set(loaded)
    for name in SUITE_TASKS:
        task = loaded[name]
        assert task.config.dataset_path == "json", name
        wanted = {split: str(path) for split, path in sample_override.data_files[name].items()}
        assert task.config.dataset_kwargs["data_files"] == wanted, name


@pytest.mark.parametrize("name", sorted(SUITE_TASKS))
def test_suite_task_yields_the_sample_test_docs_and_five_shots(
    name: str, loaded: dict[str, Any], sample_override: DataOverride
) -> None:
    task = loaded[name]
    test_file = sample_override.data_files[name][task.config.test_split]
    assert [dict(doc) for doc in task.test_docs()] == read_jsonl(test_file)
    assert len(task.fewshot_docs()) >= 5


@pytest.mark.parametrize(
    "name", sorted(n for n, (_, kind) in SUITE_TASKS.items() if kind is TaskKind.MULTIPLE_CHOICE)
)
def test_multiple_choice_targets_are_in_range_of_the_choices(name: str, loaded: dict[str, Any]) -> None:
    task = loaded[name]
    docs = list(task.test_docs()) + list(task.fewshot_docs())
    for doc in docs:
        choices = task.doc_to_choice(doc)
        target = task.doc_to_target(doc)
        if isinstance(target, str):
            assert target in choices, (name, target, choices)
        else:
            assert 0 <= target < len(choices), (name, target, choices)
    assert docs


@pytest.mark.parametrize(
    "name", sorted(n for n, (_, kind) in SUITE_TASKS.items() if kind is TaskKind.GENERATIVE)
)
def test_generative_targets_render(name: str, loaded: dict[str, Any]) -> None:
    task = loaded[name]
    for doc in task.test_docs():
        target = task.doc_to_target(doc)
        assert isinstance(target, str) and target.strip(), (name, doc)
        assert task.doc_to_text(doc).strip()


def test_libyaml_reads_the_upstream_configs_as_pure_python_pyyaml_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from backend.tracks.evalita.data import upstream

    fast = read_upstream_configs()
    pure = type("PureConfigLoader", (yaml.SafeLoader,), {})
    pure.add_constructor("!function", upstream._ConfigLoader.yaml_constructors["!function"])
    monkeypatch.setattr(upstream, "_ConfigLoader", pure)
    assert read_upstream_configs() == fast and fast.tasks and fast.groups


def test_the_include_folder_alone_knows_exactly_the_evalita_tasks_and_groups(task_manager: Any) -> None:
    configs = read_upstream_configs()
    assert set(task_manager.all_subtasks) == {task.name for task in configs.tasks}
    assert set(task_manager.all_groups) == {group.name for group in configs.groups}


def test_with_builtin_tasks_kept_the_override_still_wins(
    sample_override: DataOverride, offline_rouge: None, datasets_cache: None
) -> None:
    assert sample_override.include_path is not None
    # What ``include_defaults=True`` does — the built-in folders indexed first, the include path
    # after, a later path's task replacing an earlier one of the same name — with the one built-in
    # folder that holds Evalita tasks: the same override of the same built-in task, without
    # indexing lm-eval's 14,000 other tasks (about 10 s of CPU).
    builtin_evalita = Path(lm_eval_tasks.__file__).parent / "evalita_llm"
    manager = lm_eval_tasks.TaskManager(
        include_path=[str(builtin_evalita), str(sample_override.include_path)], include_defaults=False
    )
    assert manager.task_index["evalita-mp_te_prompt-1"].yaml_path.is_relative_to(sample_override.include_path)
    task = manager.load(["evalita-mp_te_prompt-1"])["tasks"]["evalita-mp_te_prompt-1"]
    assert task.config.dataset_path == "json"
    assert task.test_docs()[0]["text1"].startswith("Giuseppe Verdi")


def test_a_task_loaded_by_name_reads_the_sample_data_too(
    task_manager: Any, offline_rouge: None, datasets_cache: None
) -> None:
    tasks = task_manager.load(["evalita-mp_te_prompt-1", "evalita-mp_ner_wn_p2"])["tasks"]
    assert {t.config.dataset_path for t in tasks.values()} == {"json"}
    assert tasks["evalita-mp_ner_wn_p2"].test_docs()[0]["text"].startswith("L'Agenzia Spaziale Italiana")


def test_prompts_and_metrics_are_the_upstream_ones(sample_override: DataOverride) -> None:
    from lm_eval.tasks._yaml_loader import load_yaml

    data_keys = {"dataset_path", "dataset_kwargs"}
    checked = 0
    for group in read_upstream_configs().groups:
        assert sample_override.include_path is not None
        ours = load_yaml(sample_override.include_path / f"group--{group.name}.yaml", resolve_func=False)
        assert ours == load_yaml(group.yaml_path, resolve_func=False), group.name
    for task in read_upstream_tasks():
        assert sample_override.include_path is not None
        ours = load_yaml(sample_override.include_path / f"{task.name}.yaml", resolve_func=False)
        theirs = load_yaml(task.yaml_path, resolve_func=False)
        assert {k: v for k, v in ours.items() if k not in data_keys} == {
            k: v for k, v in theirs.items() if k not in data_keys
        }, task.name
        checked += 1
    assert checked == len(sample_override.tasks)


def test_local_source_reads_a_copy_of_the_files(tmp_path: Path) -> None:
    copy = tmp_path / "my-data"
    shutil.copytree(SAMPLE_DATA_DIR, copy)
    override = prepare_include_path(f"local:{copy}", tmp_path / "work")
    assert override.label == "local:my-data"
    assert override.source == DataSource(DataSourceKind.LOCAL, copy.resolve())
    for files in override.data_files.values():
        assert all(path.is_relative_to(copy.resolve()) for path in files.values())
    # The generated YAML names the copy, so the harness reads it (shown above for the sample).
    assert override.include_path is not None
    text = (override.include_path / "evalita-mp_te_prompt-1.yaml").read_text(encoding="utf-8")
    assert str(copy.resolve() / "te" / "test.jsonl") in text


def test_local_source_loads_through_the_harness(
    tmp_path: Path, offline_rouge: None, datasets_cache: None
) -> None:
    copy = tmp_path / "other"
    shutil.copytree(SAMPLE_DATA_DIR, copy)
    rows = read_jsonl(copy / "te" / "test.jsonl")[:3]
    (copy / "te" / "test.jsonl").write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )
    override = prepare_include_path(f"local:{copy}", tmp_path / "work")
    manager = lm_eval_tasks.TaskManager(**override.task_manager_kwargs())
    task = manager.load(["evalita-mp_te_prompt-2"])["tasks"]["evalita-mp_te_prompt-2"]
    assert [dict(doc) for doc in task.test_docs()] == rows


def test_local_source_missing_a_split_file_names_it(tmp_path: Path) -> None:
    copy = tmp_path / "partial"
    shutil.copytree(SAMPLE_DATA_DIR, copy)
    (copy / "ner" / "fic" / "trial.jsonl").unlink()
    with pytest.raises(DataSourceError, match=r"ner/fic/trial\.jsonl \(task ner, split 'trial'"):
        prepare_include_path(f"local:{copy}", tmp_path / "work")


def _wic_and_sa_only(tmp_path: Path, *, sa_train: bool = True) -> Path:
    folder = tmp_path / "wic-sa"
    for task in ("wic", "sa"):
        shutil.copytree(SAMPLE_DATA_DIR / task, folder / task)
    if not sa_train:
        (folder / "sa" / "train.jsonl").unlink()
    return folder


def test_every_missing_file_is_named_at_once(tmp_path: Path) -> None:
    with pytest.raises(DataSourceError) as info:
        check_data_source(f"local:{_wic_and_sa_only(tmp_path)}")
    message = str(info.value)
    for missing in ("te/test.jsonl", "te/dev.jsonl", "hs/test_all.jsonl", "faq/test_1.jsonl", "at/dev.jsonl",
                    "ls/test.jsonl", "ner/adg/reduced_test.jsonl", "ner/wn/trial.jsonl", "re/dev.jsonl",
                    "sum/test.jsonl", "sum/dev.jsonl"):  # fmt: skip
        assert missing in message
    assert message.count("te/test.jsonl") == 1  # six prompts read it: named once
    assert "--tasks" in message


def test_sa_train_is_required_even_zero_shot_and_the_message_says_why(tmp_path: Path) -> None:
    sa = all_harness_tasks([get_task("sa")])
    with pytest.raises(
        DataSourceError,
        match=r"sa/train\.jsonl \(task sa, split 'train'; the few-shot split, which lm-eval reads even for a zero-shot run\)",
    ):
        check_data_source(f"local:{_wic_and_sa_only(tmp_path, sa_train=False)}", sa)


def test_a_subset_override_holds_only_its_tasks_and_nothing_falls_back_to_the_hub(tmp_path: Path) -> None:
    names = all_harness_tasks([get_task("wic"), get_task("sa")])
    override = prepare_include_path(f"local:{_wic_and_sa_only(tmp_path)}", tmp_path / "work", tasks=names)
    assert set(override.data_files) == set(names)
    manager = lm_eval_tasks.TaskManager(**override.task_manager_kwargs())
    assert "evalita-mp_wic_prompt-1" in manager.all_tasks
    # A task the override lacks is unknown: it can never be read from the hub instead.
    assert "evalita-mp_te_prompt-1" not in manager.all_tasks
    with pytest.raises(Exception, match="evalita-mp_te_prompt-1"):
        manager.load(["evalita-mp_te_prompt-1"])


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"text1": "a", "text2": "b"}\n', r"line 1: missing field\(s\) entailment"),
        (b'{"text1": "a", "text2": "b", "entailment": "SI"}\n{"text1": \n', r"line 2: invalid JSON"),
        (b'["SI"]\n', r"line 1: not a JSON object"),
        ('{"text1": "citt\u00e0"}\n'.encode("latin-1"), r"not UTF-8"),
        (b"\n", r"no rows"),
    ],
)
def test_local_source_with_a_bad_file_names_file_and_line(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    copy = tmp_path / "bad"
    shutil.copytree(SAMPLE_DATA_DIR, copy)
    (copy / "te" / "dev.jsonl").write_bytes(content)
    with pytest.raises(DataSourceError, match=r"te/dev\.jsonl: .*" + problem):
        prepare_include_path(f"local:{copy}", tmp_path / "work")
    assert not (tmp_path / "work" / INCLUDE_DIR_NAME).exists()


def test_local_source_may_carry_extra_fields(tmp_path: Path) -> None:
    copy = tmp_path / "extra"
    shutil.copytree(SAMPLE_DATA_DIR, copy)
    rows = [{**row, "source": "tweets"} for row in read_jsonl(copy / "hs" / "test_all.jsonl")]
    (copy / "hs" / "test_all.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert prepare_include_path(f"local:{copy}", tmp_path / "work").label == "local:extra"


@pytest.mark.parametrize("spec", ["", "hubs", "sample:x", "local:", "hub:foo", "local:/no/such/dir"])
def test_invalid_source_specs_are_rejected_with_the_valid_ones(spec: str) -> None:
    with pytest.raises(DataSourceError, match=r"Unknown data source|does not exist"):
        DataSource.parse(spec)


def test_hub_source_overrides_nothing(tmp_path: Path) -> None:
    override = prepare_include_path("hub", tmp_path)
    assert override.include_path is None
    assert override.task_manager_kwargs() == {}
    assert override.label == "hub" and override.tasks == ()
    assert not (tmp_path / INCLUDE_DIR_NAME).exists()


def test_preparing_again_replaces_stale_task_files(tmp_path: Path) -> None:
    first = prepare_include_path("sample", tmp_path)
    assert first.include_path is not None
    stale = first.include_path / "stale-task.yaml"
    stale.write_text("task: stale\n", encoding="utf-8")
    second = prepare_include_path("sample", tmp_path)
    assert second.include_path == first.include_path
    assert not stale.exists()


@pytest.mark.slow
def test_harness_scores_sample_data_end_to_end(
    task_manager: Any, offline_rouge: None, datasets_cache: None, tmp_path: Path
) -> None:
    """A tiny random model through ``simple_evaluate``: every metric hook runs on the sample rows."""
    import lm_eval

    from tests.support.tiny_model import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny")
    names = [
        "evalita-mp_wic_prompt-1",
        "evalita-mp_ner_fic_p1",
        "evalita-mp_re_prompt-2",
        "evalita-sp_sum_task_fp_p1",
    ]
    out = lm_eval.simple_evaluate(
        model="hf",
        model_args=f"pretrained={folder},dtype=float32",
        tasks=names,
        task_manager=task_manager,
        num_fewshot=5,
        limit=3,
        batch_size=4,
        gen_kwargs="max_gen_toks=8",
        device="cpu",
        bootstrap_iters=0,
    )
    assert out is not None
    results = out["results"]
    for name, metric in zip(names, ["f1,none", "f1,none", "f1,none", "rouge1,none"], strict=True):
        assert 0.0 <= float(results[name][metric]) <= 1.0, (name, results[name])
