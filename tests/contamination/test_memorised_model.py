"""A tiny model trained on a 20-item set in its canonical order is flagged by the worker's own code path;
the same model untrained is not.

The set is written as a ``local:`` data root (``te/test.jsonl``); the model is the tests' tiny random
Llama, fine-tuned with a plain loop on the set's items in file order, joined as the order test joins
them (what "has seen the set in its published order" means here).  Both copies go through
``run_contamination`` (the harness, the hf backend, the statistics) exactly as a worker runs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from backend.options import RunOptions
from backend.tracks.contamination.run import run_contamination
from eval_queue.requests import Precision
from leaderboard.tracks.contamination.definition import SEPARATOR
from tests.support.tiny_model import build_tiny_model

pytestmark = pytest.mark.slow

WORDS = ["sole", "luna", "mare", "monte", "fiume", "bosco", "vento", "pietra", "fiore", "nave"]


def _items() -> list[dict[str, str]]:
    return [
        {
            "text1": f"{WORDS[k % 10]} {WORDS[(3 * k + 1) % 10]} {k}",
            "text2": WORDS[(7 * k + 2) % 10],
            "entailment": "SI",
        }
        for k in range(20)
    ]


def _train(folder: Path, text: str, steps: int) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    ids = torch.tensor([tokenizer(text)["input_ids"]])
    torch.manual_seed(0)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    model.save_pretrained(folder)


def _p_value(folder: Path, data: Path, workdir: Path) -> float:
    request = SimpleNamespace(model=str(folder), revision="main", precision=Precision.FLOAT32, variant=None)
    evaluation = run_contamination(
        request, f"local:{data}", workdir, RunOptions(device="cpu"), set_ids=["te"]
    )  # type: ignore[arg-type]
    order = evaluation.body["sets"]["te"].order
    assert order is not None and order.shards == 6
    return order.p_value


def test_a_model_that_memorised_the_set_in_order_is_flagged_and_its_untrained_copy_is_not(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    (data / "te").mkdir(parents=True)
    lines = [json.dumps(item, ensure_ascii=False) for item in _items()]
    (data / "te" / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    clean = build_tiny_model(tmp_path / "clean")
    trained = build_tiny_model(tmp_path / "trained")
    # 80 steps (was 150: half the test's time): p ≈ 0.0015 with one torch thread, seven times under the
    # threshold; 20 steps already fall short (p ≈ 0.012) and the untrained copy gives p ≈ 0.3.
    _train(trained, SEPARATOR.join(lines), steps=80)

    p_trained = _p_value(trained, data, tmp_path / "w1")
    p_clean = _p_value(clean, data, tmp_path / "w2")
    print(f"order test on the 20-item set: memorised p={p_trained:.2g}, untrained p={p_clean:.2g}")
    assert p_trained < 0.01
    assert p_clean > 0.01
