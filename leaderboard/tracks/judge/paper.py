"""The paper's own judge prompts: Appendix A of Donati et al., one template per criterion.  Pure.

Attribution.  The five templates below are quoted from Appendix A ("Prompts") of
N. Donati, G. Savino and P. Torroni, *Do Large Language Models understand how to be judges?*
(University of Bologna and Zanichelli editore; ``shared/seeds/002_98e8420543dc4412.txt``),
so that a judge run with the ``paper`` protocol is prompted as the paper's judges were for
its Table 1.  The paper's code, prompts, data and results are at
https://github.com/ZanichelliEditore/llm-summarization-evaluation; its few-shot examples and
annotations are published there under a no-derivatives licence (CC BY-NC-ND) and are *not*
part of this project: the worker reads them from a file a maintainer holds
(``python -m backend --judge-examples FILE``, format in :mod:`leaderboard.tracks.judge.data`).

How the text was transcribed.  The paper prints the templates as Jinja (``{{document}}``,
``{{summary}}``, ``{{few_shot_examples_<criterion>}}``, a ``{% raw %}`` guard around the JSON
template) in a two-column PDF.  Here the PDF's line breaks are reflowed (one line per
sentence group, four spaces per nesting level), the Jinja guard is rendered away and the
three slots are filled by :func:`render_paper_prompt`.  The wording is the paper's, its
slips included, because the judges of Table 1 read them: "spigazione" in the JSON template,
"assign a coherence score" in the fluency template, "Assign a Consistency Score" in the
relevance one, "Assign a Ordering Score".  Where the PDF's text extraction lost words, they
are restored from the template's own pattern and marked ``[restored]`` in a comment: the
JSON-template line of the fluency and relevance templates (identical in the other three) and
the last word of the ordering template's level 3 ("… less coherent than the source").

What the paper does not print is how its repository lays out one example in the few-shot
slot: here each example takes the form of the item being judged — the ``<Input>`` block of
the template, then ``<Output>`` with the answer in the template's own JSON shape (the score
as a string, as the template's placeholder has it) and ``</Output>`` — one blank line apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from leaderboard.tracks.judge.definition import EXPLANATION_KEY, SCORE_KEY, Criterion
from leaderboard.tracks.judge.prompts import FewShotExample

#: Version of the paper protocol's prompts, stored in each results file as its ``rubric``
#: (bump it if the transcription changes: figures from other prompts are never mixed).
PAPER_RUBRIC_VERSION = "donati-appendix-a/1"

#: The JSON template every criterion asks for (Appendix A, the ``{% raw %}`` guard rendered).
JSON_TEMPLATE = (
    f"```{{'{SCORE_KEY}': '<score between 1 and 5 from very poor to excellent>', "
    f"'{EXPLANATION_KEY}': '<spigazione del voto dato al riassunto basandosi sullo specifico "
    "criterio di valutazione>'}```"
)

#: Where the prompt hands over to the judge (the template's last line).
PAPER_OUTPUT_OPEN = "<Output>"
PAPER_OUTPUT_CLOSE = "</Output>"
#: Words that open the item to judge, after the few-shot slot.
PAPER_NOW_EVALUATE = "Now Evaluate:"
#: Stop sequences of the paper protocol besides the model's end of turn: only the tag that closes
#: an answer.  A reasoning model may well write ``<Input>`` or "Now Evaluate" while it thinks
#: about the prompt; stopping there would cut its answer before it is given.
PAPER_STOP_SEQUENCES: tuple[str, ...] = (PAPER_OUTPUT_CLOSE,)

_COHERENCE = """\
As an impartial evaluator, your task is to assess the coherence of a given summary in relation to its source material by assigning a score from 1 to 5 and providing a detailed explanation in Italian that justifies your rating.
Focus on how well the summary is organized and whether it presents the source's information in a logical and structured way.
Coherence refers to how well the sentences in the summary flow together to form a unified whole. A coherent summary should present the main ideas in a clear, logical progression, avoiding any abrupt shifts or disjointed facts. The goal is for the reader to easily follow the line of reasoning or narrative without confusion.
Evaluation Criteria
To conduct a thorough assessment, consider the following sub-criteria:
    Logical Structure and Organization: Assess whether the summary follows a clear progression of ideas (introduction, body, conclusion) that mirrors the source material.
    Transitions: Evaluate if there are smooth transitions between sentences and paragraphs that facilitate the reader's understanding.
    Clarity and Conciseness: Determine if the language is precise and unambiguous, effectively conveying the core ideas without unnecessary complexity.
Evaluation Process
Review the Source Material: Thoroughly read the source document to understand its main facts, events, and details.
Analyze the summary: Compare the summary against the source material, evaluating it based on the sub-criteria outlined above.
Assign a Coherence Score and provide an Explanation:
    Based on your analysis, assign a coherence score from 1 to 5, where the levels are defined as follows.
    Score 1 (Very Poor Coherence):
        The summary is highly disorganized with abrupt transitions. The summary exhibits little to no logical flow. It is difficult to understand the relationship between concepts.
    Score 2 (Poor Coherence):
        The summary shows some attempt at organization but remains fragmented with several abrupt shifts. Key points are only partially integrated in a fluent narrative. The sentences are fragmented with abrupt transitions. The lack of clear connections between ideas results in a choppy reading experience.
    Score 3 (Moderate Coherence):
        The summary is reasonably organized with a generally logical progression. Transitions exist but may be uneven, they could be smoother.
    Score 4 (Good Coherence):
        The summary is well-structured with a clear and logical order of ideas. It features smooth transitions between sentences and paragraphs, making it easy to follow. The summary is coherent and flows well, with clear connections between ideas.
    Score 5 (Excellent Coherence):
        The summary exhibits exceptional coherence. The transitions are flawless and the presentation of the source material is clear and unified."""

_CONSISTENCY = """\
As an impartial evaluator, your task is to assess the consistency of a given summary in relation to its source material by assigning a score from 1 to 5 and providing a detailed explanation in Italian that justifies your rating.
Consistency refers to the degree to which the summary accurately and faithfully represents the factual content of the source without introducing contradictions, inaccuracies, or unsupported information.
A consistent summary should align closely with the source material, ensuring that all presented information is both accurate and verifiable.
Evaluation Criteria
To conduct a thorough assessment, consider the following sub-criteria:
    Factual Accuracy: Verify that the summary accurately represents explicit facts from the source, including names, dates, numbers, and locations. Cross-reference specific claims in the summary with the source to confirm their precision.
    Absence of Contradictions: Ensure that the summary does not contain information that directly contradicts the source material. Identify any opposing statements or conflicting details between the summary and the source.
    Absence of Hallucinations (Extrinsic Consistency): Check that the summary does not introduce information absent from the source. All details should be traceable to the original text, and any unsubstantiated additions should be noted.
    Logical Inferences (Intrinsic Consistency): Assess whether any inferences or conclusions drawn in the summary are logically supported by the information provided in the source. Ensure that deductions are valid and reasonable based on the source material.
    Terminology Alignment: Confirm that the summary uses the same key terms and refers to entities consistently with the source material. While paraphrasing is acceptable, maintaining consistency in terminology is important for clarity and accuracy.
Evaluation Process
Review the Source Material: Thoroughly read the source document to understand its main facts, events, and details.
Analyze the summary: Compare the summary against the source material, evaluating it based on the sub-criteria outlined above.
Assign a Consistency Score and provide an Explanation:
    Based on your analysis, assign a consistency score from 1 to 5, where the levels are defined as follows.
    Score 1 (Very Poor Consistency):
        The summary contains significant factual inaccuracies, contradictions, hallucinated details, or misrepresentations that severely distort the source material.
        The summary introduces entirely fabricated events or represents critical information such that it no longer reflects the source.
    Score 2 (Poor Consistency):
        The summary has multiple errors and inconsistencies; while some key facts may be correct, there are notable inaccuracies or added details that conflict with the source material.
        The summary includes several incorrect dates, names, or details that contradict the source, resulting in a misleading representation.
    Score 3 (Moderate Consistency):
        The summary is generally accurate but contains minor errors, omissions, or slight paraphrasing issues that affect the overall precision.
        Most details match the source, but a few minor discrepancies or vague terms slightly reduce the clarity of the summary.
    Score 4 (Good Consistency):
        The summary is largely consistent with the source, with only trivial discrepancies that do not impact the overall factual integrity.
        The summary accurately reflects the main facts and events, with only minor stylistic differences that do not alter the meaning.
    Score 5 (Excellent Consistency):
        The summary is fully consistent with the source, accurately representing every key fact and detail without any added or contradictory information.
        The summary perfectly mirrors the source material, ensuring that every piece of information is correctly and completely conveyed."""

_FLUENCY = """\
As an impartial evaluator, your task is to assess the fluency of a given summary by assigning a score from 1 to 5 and providing a detailed explanation in Italian that justifies your rating.
Fluency refers to the readability and overall quality of the summary's writing. This includes assessing grammar, spelling, punctuation, word choice, and sentence structure. A fluent summary should be free from errors that make the text difficult to read or understand.
Evaluation Criteria
To conduct a thorough assessment, consider the following sub-criteria.
    Grammar: Check for accuracy, tense consistency, and overall syntax.
    Spelling: Identify any spelling mistakes or typographical errors.
    Punctuation: Assess proper punctuation usage and its contribution to clarity.
    Word Choice: Evaluate whether vocabulary and phrasing are appropriate for the context.
    Sentence Structure: Determine if sentences are well-constructed, varied, and natural.
Evaluation Process
Read the summary carefully.
Check for errors:
    Are there grammatical errors? Are there frequent or severe errors present? Is there any spelling or punctuation mistakes? Does the word choice suit the context without being overly complex or too simplistic?
Assign a Fluency Score and provide an Explanation:
    Based on your analysis, assign a coherence score from 1 to 5, where the levels are defined as follows.
    Score 1 (Very Poor Fluency):
        Numerous errors in grammar, spelling, punctuation, and word/sentence construction make the summary extremely difficult to read.
    Score 2 (Poor Fluency):
        Frequent errors are present that interfere with understanding. Sentence structure and vocabulary choices are suboptimal, leading to a choppy flow.
    Score 3 (Moderate Fluency):
        Errors exist, but they do not hinder summary understandability. Occasional awkward phrasing or punctuation mistakes are present.
    Score 4 (Good Fluency):
        The summary is well-written with only isolated, minor errors. Grammar, spelling, punctuation, and sentence structure are correct, ensuring smooth readability.
    Score 5 (Excellent Fluency):
        The summary is polished and flawless, with impeccable grammar, spelling, punctuation, word choice, and sentence structure that provide a natural flow."""

_RELEVANCE = """\
As an impartial evaluator, your task is to assess the relevance of a given summary in relation to its source material by assigning a score from 1 to 5 and providing a detailed explanation in Italian that justifies your rating.
Relevance refers to how well the summary includes only the most important and necessary content from the source material, without introducing redundant or irrelevant details.
A relevant summary should focus on the key points of the source and avoid unnecessary or excessive information.
Evaluation Criteria
To conduct a thorough assessment, consider the following sub-criteria.
    Content Coverage and Accuracy: Does the summary capture all of the primary arguments, data points, or ideas presented in the source document? Is the information presented in the summary faithful to the original intent and details of the source?
    Conciseness and Clarity: Is the summary expressed in a concise manner that does not sacrifice the essential details? Are the ideas presented clearly and straightforwardly, ensuring that the summary Does not confuse the reader with verbose or circular language?
    Elimination of Redundancy and Irrelevance: Removal of Superfluous Information: Does the summary avoid including unnecessary background or repetitive details that do not contribute to understanding the source? Are only the important and relevant aspects of the source material captured, with a clear focus on the essential message?
    Omission of Critical Elements: Does the summary omit any critical elements or supporting details that are necessary for a complete and accurate understanding of the source document?
Evaluation Process
Review the Source Material: Thoroughly read the source document to understand its main facts, events, and details.
Analyze the summary: Compare the summary against the source material, evaluating it based on the sub-criteria outlined above.
Assign a Consistency Score and provide an Explanation:
    Score 1 (Very Poor Relevance):
        The summary includes little to none of the key points from the source.
        The summary is Overburdened with irrelevant, redundant, or incorrect details.
        Critical points are missing from the summary, leading to a distorted or incomplete picture.
    Score 2 (Poor Relevance):
        The summary captures some primary points, but many important aspects are either omitted or misrepresented.
        The summary includes redundant or extraneous information that dilutes the primary message.
        Key supporting details are missing, reducing the summary's overall reliability.
    Score 3 (Fair Relevance):
        The summary captures more than half of the key points, but some secondary details or nuanced information may be lacking.
        The summary is mostly concise with minor instances of unnecessary details or slight redundancy.
        Less-critical details may be omitted from the summary without drastically affecting the overall understanding.
    Score 4 (Good Relevance):
        Successfully includes nearly all important points and supporting details from the source.
        The summary is clear and succinct, with minimal, if any, redundant content.
        Rare omissions that do not significantly impair the overall understanding of the summary.
    Score 5 (Excellent Relevance):
        The summary completely captures all essential points and nuances of the source material.
        The summary is extremely concise and clear, with no unnecessary or redundant information.
        No significant information is omitted; the summary is a precise and complete representation of the source."""

# Level 3's last sentence lost its final word in the PDF's text: "source" [restored].
_ORDERING = """\
As an impartial evaluator, your task is to assess the ordering of a given summary in relation to the ordering of the source material by assigning a score from 1 to 5 and providing a detailed explanation in Italian that justifies your rating.
Focus on how well the sequence of information in the summary mirrors the order in which it is presented in the source material.
Ordering refers to how closely the summary adheres to the structure of the source material. A well-ordered summary should present the key points in the same sequence as they appear in the source, ensuring a logical and coherent flow of information.
Evaluation Criteria
To conduct a thorough assessment, consider the following sub-criteria.
    Chronological/Logical Order: Confirm that if the source is structured chronologically or by logical argument, the summary upholds that framework. Deviations should be penalized based on their impact on the intended progression.
    Segmentation and Grouping: Consider if the summary correctly groups related information as seen in the source. Grouping similar ideas ensures that the coherence of the original narrative is maintained.
    Cohesion and Comprehension Impact: Assess if any deviation (omission/insertion/reordering) significantly affects the reader's ability to follow and understand the overall narrative.
Evaluation Process
Review the Source Material: Thoroughly read the source document focusing on the ordering of the main facts, events, and details.
Analyze the summary: Compare the ordering of the main facts, events, and details of the summary against the source material, evaluating it based on the sub-criteria outlined above.
Assign a Ordering Score and provide an Explanation:
    Score 1 (Very Poor Ordering):
        Key points are not only out of sequence but the entire summary structure is different than the source material.
        The summary introduces significant confusion, hindering comprehension of the source narrative.
        Major segments are reversed or intermingled.
    Score 2 (Poor Ordering):
        The majority of the summary's structure deviates from the source order.
        Several key transitional phrases and segments are misplaced or omitted.
        Although some basic structure might be discernible, it still leads to a disjointed narrative.
        Noticeable reordering with multiple inconsistencies.
    Score 3 (Fair Ordering):
        The summary preserves parts of the source order while containing noticeable reordering in other sections.
        Some transitions and sequencing are maintained correctly, though there are occasional inconsistencies.
        The overall narrative is understandable, but the flow is less coherent than the source.
        A mixed pattern of accurate segments and segments with minor shifts.
    Score 4 (Good Ordering):
        The summary largely follows the sequence of the source material.
        Most key points and transitional phrases maintain their original order.
        Minor deviations may exist but do not materially disrupt the overall coherence or logical flow.
        Nearly complete alignment with the source's narrative structure.
        Any reordering is minimal and does not limit comprehension.
    Score 5 (Excellent Ordering):
        The summary mirrors exactly the structure of the source material.
        All key segments, transitional cues, and the logical narrative flow are preserved.
        The reader can effortlessly follow the progression as intended in the original document.
        Consistent preservation of order, ensuring clarity and cohesion.
        The sequence of information is methodical and reflective of the source."""

#: Each criterion's part of its template: role and task, definition, sub-criteria, evaluation
#: process and the five score levels (Appendix A, in the paper's order).
PAPER_CRITERION_TEXT: Mapping[Criterion, str] = MappingProxyType(
    {
        Criterion.COHERENCE: _COHERENCE,
        Criterion.CONSISTENCY: _CONSISTENCY,
        Criterion.FLUENCY: _FLUENCY,
        Criterion.RELEVANCE: _RELEVANCE,
        Criterion.ORDERING: _ORDERING,
    }
)

#: The part every template shares, after the levels: the request for an Italian explanation,
#: the JSON template and its rules (the line is [restored] in the fluency and relevance templates).
PAPER_OUTPUT_INSTRUCTIONS = (
    "Provide your score along with a detailed explanation in italian that justifies your rating, "
    "referencing specific examples and observations from your evaluation.\n"
    f"Output in the following json template: {JSON_TEMPLATE}\n"
    "Update values enclosed in <> and remove the <>.\n"
    "Your response must only be the updated json template beginning with { and ending with }\n"
    f"Ensure the following output keys are present in the json: {SCORE_KEY} {EXPLANATION_KEY}"
)


def paper_input_block(document: str, summary: str) -> str:
    """The template's ``<Input>`` block around one (document, summary)."""
    return (
        "<Input>\n"
        "    <Source_Material>\n"
        f"        <Text>{document.strip()}</Text>\n"
        "    </Source_Material>\n"
        "    <Summary>\n"
        f"        <Text>{summary.strip()}</Text>\n"
        "    </Summary>\n"
        "</Input>"
    )


def paper_answer(score: int, explanation: str) -> str:
    """An answer in the template's own shape: ``{'score': '4', 'explanation': '…'}``."""
    return repr({SCORE_KEY: str(score), EXPLANATION_KEY: explanation})


def paper_examples_block(examples: Sequence[FewShotExample]) -> str:
    """What fills ``{{few_shot_examples_<criterion>}}``: each example as the item judged, then its answer."""
    return "\n\n".join(
        f"{paper_input_block(e.document, e.summary)}\n{PAPER_OUTPUT_OPEN}\n"
        f"{paper_answer(e.score, e.explanation)}\n{PAPER_OUTPUT_CLOSE}"
        for e in examples
    )


def render_paper_prompt(
    criterion: Criterion, document: str, summary: str, examples: Sequence[FewShotExample] = ()
) -> str:
    """The whole Appendix A prompt for one (document, summary, criterion), its few-shot slot filled.

    Examples of another criterion are an error (a mixed-up examples file must not teach the
    wrong scale).  No examples leave the slot empty; the ``paper`` protocol never runs so
    (:func:`leaderboard.tracks.judge.data.check_examples_cover`).
    """
    wrong = sorted({e.criterion.value for e in examples if e.criterion is not criterion})
    if wrong:
        raise ValueError(f"few-shot examples for {', '.join(wrong)} given to the {criterion} prompt")
    return (
        f"{PAPER_CRITERION_TEXT[criterion]}\n"
        f"{PAPER_OUTPUT_INSTRUCTIONS}\n"
        f"{paper_examples_block(examples)}\n"
        f"{PAPER_NOW_EVALUATE}\n"
        f"{paper_input_block(document, summary)}\n"
        f"{PAPER_OUTPUT_OPEN}"
    )
