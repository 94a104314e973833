"""The model's check ([answer] model_check): does what the answer would quote state the answer to
the question, as asked? One yes/no question to the [llm] model, read by its P(yes).

Why a model beside the rule checks (:mod:`spr.answerable`, :mod:`spr.contrast`): those decline
what can be read off the words — a name no passage mentions, a value no sentence states, a near
copy turned round. What is left needs reading: a question whose evidence is about the right
thing but does not say what is asked ("When will Estonia stop producing electricity from oil
shale?" over "When the production of electricity from oil shale is reduced …, new production
capacities … will ensure the security of the electricity supply"; "How often do we have to update
our cybersecurity risk assessment — every year?" over ENISA's report "every 24 months"), a role
swapped, a detail changed. Asked of the embedded 1.5B model over the sentences the extractive answer quotes,
P(yes) separates the answerable from the unanswerable questions the rules let through with AUC
0.82 on the policy probe and dev sets and 0.74 on SQuAD 2.0 (docs/answers.md#the-models-check).
Its threshold, 0.4, was calibrated on the SQuAD 2.0 subset and the EU and NECP dev sets: the most
abstention on unanswerable questions for at most one point more false abstention on each.

A yes/no question is left to the rules: a text that answers it with "no" ("Can the Fund support
nuclear power?" / "The Fund shall not support …") seems to read to the model as no answer.

The quote, not the whole passages, is what the model reads: a short prompt (~1–2 s on two cores)
about the sentences a reader would be shown, after where they are from (the citations' titles,
"GDPR Article 12": a quote from another act than the question's shows; stop 56, AUC +0.01–0.02).
A model that is down, or cannot return log-probabilities, does not decline anything: the answer
stands, the skip is logged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.errors import ModelError
from core.llm.base import LLM
from core.text import reading_text
from spr.asking import asks_yes_no
from spr.generate import Draft
from spr.records import ABSTAIN

log = logging.getLogger(__name__)

PROMPT = (
    "Read the text and the question. If the text contains the answer to the question, answer yes. "
    "If the question asks about something the text does not say, or its details differ from the text, answer no.\n"
    "Text{source}: {text}\nQuestion: {question}\nAnswer yes or no."
)
MAX_WORDS = 180  # of the quote: the extractive answer's two sentences, a list's lead-in and items
_MARKER = re.compile(r"\s*\[\d+\]")
DECLINED = "the model read the quoted evidence as not answering the question"  # the abstain reason's words


def check_prompt(question: str, quote: str, titles: Sequence[str] = (), max_words: int = MAX_WORDS) -> str:
    """The one user message: where the quote is from (its citations' ``titles``, each once), the
    quote without citation markers or source markup, cut to ``max_words`` words, then the question.

    >>> print(check_prompt("Who signs?", "Alice signs the act. [1] #### Article 2\\nBob seals it. [2]", ["Act 1", "Act 1"], max_words=6))
    Read the text and the question. If the text contains the answer to the question, answer yes. If the question asks about something the text does not say, or its details differ from the text, answer no.
    Text (from Act 1): Alice signs the act. Article 2 …
    Question: Who signs?
    Answer yes or no.
    """
    words = reading_text(_MARKER.sub("", quote)).split()
    cut = " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")
    named = "; ".join(dict.fromkeys(t for t in titles if t))
    return PROMPT.format(source=f" (from {named})" if named else "", text=cut, question=question.strip())


@dataclass(frozen=True)
class ModelVerdict:
    """What the check found: the model's P(yes), None where it was not asked (nothing quoted, a
    yes/no question) or is down; and the abstention, where P(yes) is below the threshold."""

    p_yes: float | None = None
    declined: Draft | None = None

    @property
    def note(self) -> str:
        """The trace's line for an answer the model let stand ("" otherwise): how sure it was."""
        return f"the model read the quote as answering (P(yes) = {self.p_yes:.2f})" if self.p_yes is not None and self.declined is None else ""


def reads(question: str, quoted: str) -> bool:
    """Whether the check asks the model at all: something is quoted and the question does not
    ask yes or no (those are left to the rules)."""
    return bool(quoted.strip()) and not asks_yes_no(question)


def model_check(llm: Callable[[], LLM], question: str, quoted: Draft, threshold: float) -> ModelVerdict:
    """The model's reading of ``quoted`` (an extractive draft) as an answer to ``question``: an
    abstention where P(yes) is below ``threshold`` ([answer] model_check_threshold). Not asked
    when ``quoted`` abstained (nothing to read) or the question asks yes or no. ``llm`` is called
    only when the model is asked, so a KB loads its model only for an answer to check."""
    if quoted.abstained or not reads(question, quoted.text):
        return ModelVerdict()
    try:
        p_yes = llm().yes_probability(check_prompt(question, quoted.text, [c.title for c in quoted.citations]), max_tokens=1)
    except ModelError as exc:
        log.warning("model check skipped, the answer stands: %s", exc)
        return ModelVerdict()
    if p_yes >= threshold:
        return ModelVerdict(p_yes)
    reason = f"{DECLINED} (P(yes) = {p_yes:.2f})"
    return ModelVerdict(p_yes, Draft(ABSTAIN, (), True, confidence=quoted.confidence, abstain_reason=reason))
