"""Keyword extraction (YAKE), shared by the keyword layer (``kgpipeline.derived.keywords``) and
Uninformed Keyword Search over the question (``spr.retrieval.docgraph``): both must extract alike.

YAKE (Campos et al., 2020) scores candidate phrases of one text by statistics of that text alone
(casing, position, frequency, spread, context diversity): no model, no corpus, deterministic.
Backends: ``yake-rust`` (the default; a compiled port, 3.7–6.4× faster here) and ``yake`` (the
reference implementation) agree exactly on 72–78% of chunks (500 EGD, 300 EU-law articles) and share at least
3 of 5 keywords on all; they differ in de-duplicating near-identical phrases, where yake-rust
drops a plural ("data subjects" beside "data subject") that the reference keeps
(tests/test_docgraph.py compares them). ``llm`` asks the configured model instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from core.errors import InputError

if TYPE_CHECKING:
    from core.llm.base import LLM

_WORD = re.compile(r"[^\W\d_]+")
# Enough text to tell a language by its stop words; more only costs time.
_SAMPLE_WORDS = 2000

Extractor = Callable[[str], list[str]]


@cache
def stopwords() -> dict[str, frozenset[str]]:
    """Language code → YAKE's stop-word list for it (the languages both backends support)."""
    from importlib import resources

    folder = resources.files("yake") / "core" / "StopwordsList"
    out = {}
    for entry in folder.iterdir():
        name = entry.name
        if name.startswith("stopwords_") and name.endswith(".txt") and name != "stopwords_noLang.txt":
            words = entry.read_text(encoding="utf-8", errors="replace").lower().split()
            out[name[len("stopwords_") : -len(".txt")]] = frozenset(words)
    return out


def question_language(text: str) -> str:
    """English unless another language's stop words outnumber English ones in ``text`` (then
    that language, the first by code on a tie): what the answer side reads a question as, since
    policy questions are mostly English and a short one may hold few stop words of any language.

    >>> question_language("How long is the certificate valid?"), question_language("Wie lange gilt der Ausweis?")
    ('en', 'de')
    """
    shares = language_shares(text)
    if not shares or shares.get("en", 0) >= max(shares.values()):
        return "en"
    return max(sorted(shares), key=lambda lang: shares[lang])


def guess_language(text: str, default: str = "en") -> str:
    """The language whose stop words make up the largest share of ``text``'s words.

    >>> guess_language("Die Bundesnetzagentur überwacht die Einhaltung der Vorschriften über den Netzzugang.")
    'de'
    >>> guess_language("The Member States shall ensure that the operators comply with the rules.")
    'en'
    """
    share = language_shares(text)
    if not share:
        return default
    best = max(sorted(share), key=lambda lang: share[lang])
    return best if share[best] > 0 else default


def language_shares(text: str) -> dict[str, int]:
    """Language code → how many of ``text``'s words (the first 2,000) are that language's stop
    words; empty for a text without words.

    >>> shares = language_shares("Wie lange gilt ein Energieausweis?")
    >>> shares["de"] > shares["en"]
    True
    """
    words = _WORD.findall(text.lower())[:_SAMPLE_WORDS]
    if not words:
        return {}
    counts = Counter(words)
    return {lang: sum(n for w, n in counts.items() if w in stop) for lang, stop in stopwords().items()}


def _flat(text: str) -> str:
    # Whitespace collapsed: the two backends split lines differently (yake-rust makes each line
    # break a phrase boundary and ranks short heading lines first); on flat text they agree.
    return " ".join(text.split())


def make_extractor(
    backend: str, language: str, ngrams: int, dedup: float, top: int, llm: Callable[[], LLM] | None = None
) -> Extractor:
    """``text -> keywords`` (best first, the text's own casing) for one language; ``llm`` is the
    model of the ``llm`` backend (a callable, so it loads only when used)."""
    if backend == "llm":
        if llm is None:
            raise InputError("the 'llm' keyword backend needs an [llm] model")
        return lambda text: llm_keywords(llm(), text, top, ngrams)
    if language not in stopwords():
        raise InputError(f"YAKE has no stop words for language {language!r}; known: {', '.join(sorted(stopwords()))}")
    if backend == "yake-rust":
        import yake_rust

        rust = yake_rust.Yake(language=language, ngrams=ngrams, deduplication_threshold=dedup)
        return lambda text: [k for k, _ in rust.get_n_best(_flat(text), n=top)] if text.strip() else []
    if backend == "yake":
        import yake

        py = yake.KeywordExtractor(lan=language, n=ngrams, dedupLim=dedup, top=top)
        return lambda text: [k for k, _ in py.extract_keywords(_flat(text))] if text.strip() else []
    raise InputError(f"unknown keyword backend {backend!r} (yake-rust, yake)")


def keyword_schema(top: int) -> dict:
    # maxItems bounds the array: without it a small model loops until max_tokens.
    return {
        "type": "object",
        "properties": {"keywords": {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": top}},
        "required": ["keywords"],
    }


def llm_keywords(model: LLM, text: str, top: int, ngrams: int) -> list[str]:
    """Up to ``top`` keywords of at most ``ngrams`` words that occur in ``text``, by the model; an
    answer that is not the JSON asked for gives none (the chunk keeps no keywords, the batch goes on)."""
    from core.errors import ModelOutputError

    if not text.strip():
        return []
    prompt = (
        f"List the {top} most important keywords of the text below (single words or phrases of at most "
        f"{ngrams} words, copied from the text, in its language). Answer with JSON {{\"keywords\": [...]}}.\n\n"
        + " ".join(text.split()[:400])
    )
    try:
        value = model.complete_json(prompt, keyword_schema(top), max_tokens=24 * top, temperature=0.0)
    except ModelOutputError:
        return []
    lowered = text.casefold()
    out: dict[str, str] = {}
    for item in value.get("keywords") or []:
        phrase = " ".join(str(item).split())
        if phrase and len(phrase.split()) <= ngrams and phrase.casefold() in lowered:  # only words the text has
            out.setdefault(phrase.casefold(), phrase)
    return list(out.values())[:top]
