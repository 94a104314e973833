"""Questions in another language than the documents: translate them before retrieval.

The embedders that ship offline (MiniLM, mpnet) are English models, and BM25 matches words: an
English question over German laws finds little ("What is the annual price cap for a smart
meter …" shares no word with "Preisobergrenze … intelligentes Messsystem"). Cross-language
retrieval by query translation (the classic CLIR recipe): when the question's language is not the
KB's, the configured LLM translates it into the KB's language and the translation is retrieved.
Measured on dev-de (docs/retrieval.md "Questions in another language"): the translation alone finds more
gold quotes than the question as asked, and also more than the two rankings fused
(``bench/eval_translation.py`` compares the three).

Languages are guessed from stop words (:func:`core.keywords.language_shares`, YAKE's lists): a
question is translated only when the KB's language has strictly fewer of its stop words than
another language, so an English question over an English KB never is.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import ModelError
from core.keywords import guess_language, language_shares
from store.vocab import PKB

if TYPE_CHECKING:
    from core.llm import LLM
    from store.base import RDFStore

log = logging.getLogger(__name__)

# The languages guess_language knows, by code, as the prompt names them.
LANGUAGE_NAMES = {
    "ar": "Arabic", "bg": "Bulgarian", "cz": "Czech", "da": "Danish", "de": "German", "el": "Greek", "en": "English",
    "es": "Spanish", "et": "Estonian", "fi": "Finnish", "fr": "French", "hr": "Croatian", "hu": "Hungarian",
    "it": "Italian", "lt": "Lithuanian", "lv": "Latvian", "nl": "Dutch", "no": "Norwegian", "pl": "Polish",
    "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sl": "Slovenian", "sv": "Swedish",
    "tr": "Turkish", "uk": "Ukrainian",
}  # fmt: skip
SAMPLE_CHUNKS = 200  # chunks whose languages vote for the KB's


def kb_language(store: RDFStore) -> str:
    """The language most of a sample of the KB's chunks are written in ("en" for an empty KB)."""
    rows = store.select(f"SELECT ?t WHERE {{ ?c <{PKB}text> ?t }} LIMIT {SAMPLE_CHUNKS}").rows
    votes = Counter(guess_language(str(row["t"].value)[:2000]) for row in rows)
    return votes.most_common(1)[0][0] if votes else "en"


def needs_translation(question: str, language: str) -> bool:
    """Whether ``question`` is in another language than ``language``: another language's stop
    words outnumber ``language``'s in it."""
    shares = language_shares(question)
    return language in LANGUAGE_NAMES and shares.get(language, 0) < max(shares.values(), default=0)


def _prompt(question: str, language: str) -> list[dict[str, str]]:
    name = LANGUAGE_NAMES[language]
    return [
        {
            "role": "system",
            "content": f"You translate questions about laws and policy documents into {name}. Use the {name} legal and "
            f"technical terms an official {name} text would use. Reply with the {name} question only.",
        },
        {"role": "user", "content": question},
    ]


@dataclass
class Translator:
    """Translates questions with ``llm`` (its response cache makes a repeated question free)."""

    llm: LLM
    max_tokens: int = 120

    def translate(self, question: str, language: str) -> str | None:
        """``question`` in ``language``, or None when the model is unavailable or replies nothing
        or the question itself (retrieval then goes on with the question as asked)."""
        try:
            reply = self.llm.complete(_prompt(question, language), max_tokens=self.max_tokens)
        except ModelError as exc:
            log.warning("question not translated: %s", exc)
            return None
        lines = [line.strip().strip('"“”') for line in reply.text.strip().splitlines() if line.strip()]
        return lines[0] if lines and lines[0] != question else None

