"""ROUGE, computed exactly as the Hugging Face ``evaluate`` metric ``rouge`` does, for offline use.

``lm_eval/tasks/evalita_llm/sum_utils.py`` calls ``evaluate.load("rouge")``, which downloads
``evaluate-metric/rouge`` from the hub.  This script is a project-written drop-in with the
same interface and the same numbers: it wraps Google's ``rouge_score`` package with the
same defaults (``rouge_types`` rouge1/rouge2/rougeL/rougeLsum, ``use_stemmer=False``, the
package's default tokenizer, ``BootstrapAggregator`` mid F-measure when aggregating).
:func:`backend.tracks.evalita.offline_rouge.install_offline_rouge` places it where ``evaluate`` looks for a
cached hub module.  It must stay importable as a standalone file (no project imports).

Note: ``rouge_score``'s default tokenizer keeps only ``[a-z0-9]`` after lower-casing, so
accented letters are dropped ("città" → "citt").  That is upstream behaviour and is kept
on purpose, so scores stay comparable with published Evalita-LLM numbers.
"""

import datasets
import evaluate
from rouge_score import rouge_scorer, scoring

_DESCRIPTION = """\
ROUGE (Lin, 2004) through Google Research's `rouge_score` package, with the defaults of the
Hugging Face `evaluate` metric `rouge`. Case-insensitive; no stemming unless asked.
"""

_CITATION = """\
@inproceedings{lin-2004-rouge,
    title = "{ROUGE}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    year = "2004",
    pages = "74--81",
}
"""

_KWARGS_DESCRIPTION = """\
Args:
    predictions: list of strings, one per example.
    references: list of strings, or list of lists of strings (several references per example).
    rouge_types: subset of "rouge1".."rouge9", "rougeL", "rougeLsum"; default all four usual ones.
    use_aggregator: if True (default), one bootstrap-aggregated (mid) F-measure per type;
        otherwise a list of per-example F-measures.
    use_stemmer: apply the Porter stemmer (English); default False.
    tokenizer: optional callable str -> list[str] replacing rouge_score's default tokenizer.
Returns:
    {"rouge1": float, "rouge2": float, "rougeL": float, "rougeLsum": float} (or lists).
"""


class _TokenizerAdapter:
    """Gives a plain callable the ``tokenize`` method that ``rouge_score`` expects."""

    def __init__(self, func):
        self._func = func

    def tokenize(self, text):
        return self._func(text)


class Rouge(evaluate.Metric):
    def _info(self):
        string = datasets.Value("string", id="sequence")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": string, "references": datasets.Sequence(string)}),
                datasets.Features({"predictions": string, "references": string}),
            ],
            codebase_urls=["https://github.com/google-research/google-research/tree/master/rouge"],
        )

    def _compute(
        self,
        predictions,
        references,
        rouge_types=None,
        use_aggregator=True,
        use_stemmer=False,
        tokenizer=None,
    ):
        types = list(rouge_types) if rouge_types is not None else ["rouge1", "rouge2", "rougeL", "rougeLsum"]
        scorer = rouge_scorer.RougeScorer(
            rouge_types=types,
            use_stemmer=use_stemmer,
            tokenizer=_TokenizerAdapter(tokenizer) if tokenizer is not None else None,
        )
        several_refs = isinstance(references[0], list)
        per_example = [
            scorer.score_multi(ref, pred) if several_refs else scorer.score(ref, pred)
            for ref, pred in zip(references, predictions, strict=False)
        ]
        if not use_aggregator:
            return {key: [score[key].fmeasure for score in per_example] for key in per_example[0]}
        aggregator = scoring.BootstrapAggregator()
        for score in per_example:
            aggregator.add_scores(score)
        return {key: value.mid.fmeasure for key, value in aggregator.aggregate().items()}
