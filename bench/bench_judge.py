"""Time a judge run of SmolLM2-135M-Instruct on the bundled sample, through the queue and the worker.

    python bench/bench_judge.py [--protocol paper|project] [--examples FILE] [--limit N]
                                [--model ID] [--out FILE]

The exact route of a submission: a request in a fresh local store (``--judge-protocol``),
then ``python -m backend --once --data sample [--judge-examples FILE]`` in a subprocess,
timed end to end.  The ``paper`` protocol needs an examples file: without ``--examples`` the
bench writes invented ones (two per criterion, a 1 and a 5; never the paper's, which are
under a no-derivatives licence).  Prints a table (wall time, answers, seconds per answer,
parsed share, answer length in characters, answers cut at the token budget) and what the
results file records (protocol, examples digest, generation settings, worker id), and
writes JSON to ``artifacts/bench_judge_<timestamp>.json`` (gitignored).

Run offline: ``HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1``; the model must be in the HF cache
(``python -m backend install-embedded``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from statistics import fmean, median
from typing import Any

from _common import REPO_ROOT

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
CRITERIA = ("coherence", "consistency", "fluency", "relevance", "ordering")
_ARTICLE = (
    "La giunta regionale ha stanziato ieri 3 milioni di euro per rinnovare la linea ferroviaria tra "
    "Castelmonte e Valrosa. I lavori inizieranno a settembre e dureranno otto mesi; durante il cantiere "
    "i treni saranno sostituiti da autobus. L'assessore ai trasporti Giulia Ferri ha spiegato che il "
    "progetto ridurrà di dieci minuti il tempo di viaggio. I comitati dei pendolari chiedono però orari "
    "garantiti per gli autobus sostitutivi."
)
_GOOD = (
    "La Regione ha stanziato 3 milioni per rinnovare la ferrovia Castelmonte-Valrosa: lavori da settembre "
    "per otto mesi, con autobus al posto dei treni. Il viaggio sarà più breve di dieci minuti; i pendolari "
    "chiedono orari garantiti."
)
_BAD = {
    "coherence": "I pendolari chiedono orari. Tre milioni. Settembre. Autobus e treni, inoltre, la ferrovia.",
    "consistency": "La Regione ha stanziato 30 milioni per chiudere la ferrovia; i lavori dureranno tre anni.",
    "fluency": "la regione a stanziato 3 milione per rinova la ferovia, i lavori inizzierano settembre",
    "relevance": "L'assessore si chiama Giulia Ferri. Settembre è un mese in cui spesso piove.",
    "ordering": "I pendolari chiedono orari. Il viaggio sarà più breve. I lavori dureranno otto mesi. "
    "La Regione ha stanziato 3 milioni.",
}


def invented_examples(path: Path) -> Path:
    """Two invented examples per criterion (scores 1 and 5), in the examples file's format."""
    rows = []
    for criterion in CRITERIA:
        rows.append(
            {
                "criterion": criterion,
                "document": _ARTICLE,
                "summary": _BAD[criterion],
                "score": 1,
                "explanation": f"Il riassunto è molto carente per il criterio {criterion}.",
            }
        )
        rows.append(
            {
                "criterion": criterion,
                "document": _ARTICLE,
                "summary": _GOOD,
                "score": 5,
                "explanation": "Il riassunto riporta in modo chiaro, corretto e ordinato i punti essenziali.",
            }
        )
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALITA_")}
    env |= {
        "EVALITA_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    return env


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=("paper", "project"), default="paper")
    parser.add_argument(
        "--examples", type=Path, help="the paper protocol's examples (default: invented ones)"
    )
    parser.add_argument("--limit", type=int, help="items per criterion (a partial, non-comparable run)")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--worker-id", default="bench-judge")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    from eval_queue.settings import Settings
    from eval_queue.storage import open_stores
    from leaderboard.tracks.judge.schema import JudgeDetail, JudgeResultsFile

    work = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    data_dir = work / "eval-data"
    env = _env(data_dir)
    examples = args.examples or invented_examples(work / "examples.jsonl")
    submit = [sys.executable, "-m", "eval_queue", "submit", args.model, "--track", "judge",
              "--precision", "float32", "--judge-protocol", args.protocol]  # fmt: skip
    submitted = _run(submit, env)
    if submitted.returncode != 0:
        print(submitted.stderr, file=sys.stderr)
        return 1
    log_file = work / "worker.log"  # the run's progress (ETA lines), while it runs
    print(f"worker log: {log_file}", flush=True)
    worker = [sys.executable, "-m", "backend", "--once", "--data", "sample", "--worker-id", args.worker_id,
              "--log-file", str(log_file)]  # fmt: skip
    if args.protocol == "paper":
        worker += ["--judge-examples", str(examples)]
    if args.limit:
        worker += ["--limit", str(args.limit)]
    started = time.perf_counter()
    done = _run(worker, env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        print(done.stderr[-4000:], file=sys.stderr)
        return 1

    stores = open_stores(Settings(data_dir=data_dir))
    [path] = [p for p in stores.results.list() if p.endswith(".json")]
    results = JudgeResultsFile.from_json(stores.results.read(path), path)
    body = results.judge
    details = [
        JudgeDetail.model_validate_json(line)
        for p in stores.details.list()
        for line in stores.details.read(p).decode().splitlines()
        if line.strip()
    ]
    lengths = [len(d.raw) for d in details]
    budget = body.generation.max_gen_toks if body.generation else None
    row: dict[str, Any] = {
        "model": args.model,
        "protocol": body.protocol.value,
        "limit": args.limit,
        "wall_s": round(wall, 1),
        "harness_s": results.run.duration_s,
        "model_load_s": results.run.model_load_s,
        "answers": len(details),
        "s_per_answer": round(wall / len(details), 2) if details else None,
        "parsed": sum(d.score is not None for d in details),
        "answer_chars_median": median(lengths) if lengths else None,
        "answer_chars_mean": round(fmean(lengths)) if lengths else None,
        "with_thinking": sum(d.thinking is not None for d in details),
        "results_path": path,
        "worker_id": results.run.worker_id,
        "data": results.run.data,
        "comparable": results.comparable,
        "few_shot": body.few_shot.model_dump(mode="json") if body.few_shot else None,
        "generation": body.generation.model_dump(mode="json") if body.generation else None,
        "annotated": body.annotated.model_dump(mode="json") if getattr(body, "annotated", None) else None,
        "overall": body.overall.model_dump(mode="json"),
        "hardware": results.run.hardware,
        "batch_size": results.run.batch_size,
        "work_dir": str(work),
    }
    print(
        f"{'protocol':<9} {'answers':>7} {'wall s':>8} {'s/answer':>9} {'parsed':>7} {'chars med':>9} budget"
    )
    print(
        f"{row['protocol']:<9} {row['answers']:>7} {row['wall_s']:>8} {row['s_per_answer']:>9} "
        f"{row['parsed']:>7} {row['answer_chars_median']!s:>9} {budget}"
    )
    print(
        f"recorded: protocol={row['protocol']} worker_id={row['worker_id']} "
        f"examples sha256={(row['few_shot'] or {}).get('sha256')} generation={row['generation']}"
    )
    out = args.out or REPO_ROOT / "artifacts" / f"bench_judge_{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(row, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
