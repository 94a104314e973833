"""Evidence for every option of a comparison (``[retrieval] choices``, on by default).

"Which country plans to stop burning coal earlier, Germany or Greece?" needs Germany's plan and
Greece's; one search for the whole question ranks the option its words favour and may leave the
other out of the top k. For a question :func:`spr.choices.choice` reads as a choice, the inner
retriever also searches once per option (:meth:`spr.choices.Choice.about`: the option and the
question's other words, less those that ask or compare: "Greece plans to stop burning coal"), and the
rankings are interleaved: the question's first, each option's first, the question's second, each
option's second, … without repeats. A passage placed by an option's search gains
``("option 'Greece'", rank)`` in its ``ranks`` (shown by ``--explain``). Other questions pass
through unchanged, at no cost.

This is multi-query retrieval (query decomposition for comparison questions, as in
decomposition-based QA over HotpotQA's comparison questions) without a model: the options are read
from the question's wording.
"""

from __future__ import annotations

from spr.choices import choice
from spr.retrieval.multi_query import MultiQueryRetriever, Searches


def option_label(option: str) -> str:
    """The ``ranks`` name of an option's search: ``option 'Greece'``."""
    return f"option '{option}'"


class ChoiceRetriever(MultiQueryRetriever):
    """``inner`` for the question, and for a choice question once more per option (the question
    about that option alone), interleaved (:func:`spr.retrieval.multi_query.interleave`)."""

    timing = "options"

    def more(self, question: str, k: int) -> tuple[Searches, str] | None:
        found = choice(question)
        if found is None:
            return None
        per_option: Searches = [(option_label(option), self.inner.search(found.about(i), k).evidence) for i, option in enumerate(found.options)]
        return per_option, "a choice: searched for " + ", ".join(option_label(o).removeprefix("option ") for o in found.options) + " too"
