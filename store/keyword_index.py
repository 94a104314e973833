"""Keyword index: BM25 (bm25s, Lucene variant) over chunk texts, with a string id per document.

The lexical counterpart of :mod:`store.vectors`: exact terms — article numbers, act numbers such
as ``2024/1689``, amounts, names a dense embedding blurs — find their chunk here. Hits reuse
:class:`store.vectors.Hit`, but ``score`` is the BM25 score (>= 0, unbounded, comparable only
within one index and one query), not a cosine. Only documents sharing at least one term with the
query are returned, so an empty query, one of stopwords only, or one of unknown terms gives ``[]``.

Terms come from :mod:`store.analysis` (the same analysis for documents and queries): case-folded
words without English or German stop words, numbers whole and in parts, stemmed by the Snowball
stemmer of the text's language — English, or German with compounds also indexed by their parts.
Each text is analyzed in its own ``language`` (the derived stage passes its document's); a query
is analyzed in every language the index holds and its terms joined, so an English-only index
(every index before German analysis existed) ranks exactly as before.

Saved in one folder: ``manifest.json`` names a generation subfolder (``g-<hex>/``: bm25s's files
and ``ids.json``) with the size and SHA-256 of each file. A save writes a new generation, then
replaces the manifest (temp file + ``os.replace``), then deletes older generations; a crash at any
point leaves the previous index or the new one, never a mix, and a damaged file is detected on
load (:class:`~core.errors.StoreError` with the rebuild hint) instead of being searched.

    >>> index = KeywordIndex(["a", "b"], ["Penalties for late registration", "Grid access fees"])
    >>> [h.id for h in index.search("What is the penalty?", 5)]
    ['a']
    >>> index.search("the of and", 5), index.search("photosynthesis", 5)
    ([], [])
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from core.abbreviations import Abbreviations
from core.errors import InputError, StoreError
from store.analysis import LANGUAGES, Decompounder, analyze, word_counts
from store.vectors import Hit

__all__ = ["Hit", "KeywordIndex", "read_abbreviations", "tokenize"]

# BM25 parameters (Lucene's defaults); module constants until the config grows a section for them.
K1 = 1.5
B = 0.75
METHOD = "lucene"

MANIFEST = "manifest.json"
IDS_FILE = "ids.json"
WORDS_FILE = "words.json"  # the German texts' word counts the decompounder splits queries by
ABBREVIATIONS_FILE = "abbreviations.json"  # the abbreviations the texts define (absent before they were read)
FORMAT = 2  # 2: per-language analysis; 1 (English only) still loads
_GENERATION_PREFIX = "g-"


def tokenize(text: str, language: str = "en", decompounder: Decompounder | None = None) -> list[str]:
    """The index terms of ``text`` (:func:`store.analysis.analyze`).

    >>> tokenize("Regulation (EU) 2024/1689: fines of up to EUR 50,000 for operators")
    ['regul', 'eu', '2024/1689', '2024', '1689', 'fine', 'eur', '50000', 'oper']
    """
    return analyze(text, language, decompounder)


class KeywordIndex:
    """A BM25 index over ``texts``, each known by the id at the same position in ``ids``.

    Built once (rebuild to change it); searching is read-only and safe to share between threads.
    """

    def __init__(self, ids: Sequence[str], texts: Sequence[str], languages: Sequence[str] | None = None):
        ids, texts = list(ids), list(texts)
        langs = ["en"] * len(texts) if languages is None else [lang if lang in LANGUAGES else "en" for lang in languages]
        if len(ids) != len(texts) or len(langs) != len(texts):
            raise InputError(f"{len(ids)} ids and {len(langs)} languages for {len(texts)} texts")
        if len(set(ids)) != len(ids):
            raise InputError("keyword index ids must be unique")
        self._ids = ids
        self._vocab: dict[str, int] = {}
        self._bm25: bm25s.BM25 | None = None
        self.languages: tuple[str, ...] = tuple(lang for lang in LANGUAGES if lang in langs) or ("en",)
        german = [text for text, lang in zip(texts, langs, strict=True) if lang == "de"]
        self._words = {w: n for w, n in sorted(word_counts(german).items()) if n >= 2}
        self._splitter = Decompounder(self._words) if german else None
        self.abbreviations = Abbreviations.from_texts(texts)
        self.tokens = 0  # total terms indexed
        if ids:
            corpus: list[list[int]] = []
            for text, lang in zip(texts, langs, strict=True):
                terms = analyze(text, lang, self._splitter)
                self.tokens += len(terms)
                # first-seen term order: the same corpus always gives the same files
                corpus.append([self._vocab.setdefault(term, len(self._vocab)) for term in terms])
            if self._vocab:
                bm25 = bm25s.BM25(k1=K1, b=B, method=METHOD)
                bm25.index((corpus, self._vocab), create_empty_token=False, show_progress=False)
                self._bm25 = bm25

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._ids)

    @property
    def terms(self) -> int:
        """Distinct terms in the index."""
        return len(self._vocab)

    def search(self, query: str, k: int, *, expand: bool = True) -> list[Hit]:
        """The ``k`` best documents for ``query``, best first; ``Hit.score`` is the BM25 score.

        Only documents that share a term with the query; ties keep index order. ``expand``: a
        long form the texts abbreviate also matches its short form, weighted as one term of the
        query (:meth:`weighted_terms`).
        """
        if self._bm25 is None or k <= 0:
            return []
        scores = None
        for terms, weight in self.weighted_terms(query, expand=expand):
            term_ids = [self._vocab[t] for t in terms if t in self._vocab]
            if term_ids:
                part = self._bm25.get_scores_from_ids(term_ids)
                scores = part * weight if scores is None else scores + part * weight
        if scores is None:
            return []
        matched = np.flatnonzero(scores > 0)
        if matched.size > k:  # keep the k best and everything tied with the k-th, then sort
            kth = -np.partition(-scores[matched], k - 1)[k - 1]
            matched = matched[scores[matched] >= kth]
        order = np.lexsort((matched, -scores[matched]))[:k]  # score descending, then index order
        return [Hit(self._ids[i], float(scores[i])) for i in matched[order]]

    def query_terms(self, query: str, *, expand: bool = True) -> list[str]:
        """Every term :meth:`weighted_terms` searches ``query`` by, in order.

        >>> index = KeywordIndex(["a"], ["Sustainable aviation fuels (SAF) shall be supplied."])
        >>> index.query_terms("Which aviation fuels are sustainable aviation fuels?")
        ['aviat', 'fuel', 'sustain', 'aviat', 'fuel', 'saf']
        >>> index.query_terms("What share of sustainable aviation fuel?", expand=False)
        ['share', 'sustain', 'aviat', 'fuel']
        """
        return [t for terms, _ in self.weighted_terms(query, expand=expand) for t in terms]

    def weighted_terms(self, query: str, *, expand: bool = True) -> list[tuple[list[str], float]]:
        """``query``'s terms (weight 1): in the index's first language, then those the other
        languages' analyzers add (a term the first already gave is not counted twice). With
        ``expand``, then the short form of each abbreviation the texts define whose long form it
        spells out ("sustainable aviation fuels" → "SAF"; :meth:`core.abbreviations.Abbreviations.expansions`),
        its new terms weighted 1 / the form's length in terms (a form found counts as one more
        term of the question).

        >>> index = KeywordIndex(["a"], ["Sustainable aviation fuels (SAF) shall be supplied."])
        >>> index.weighted_terms("What share of sustainable aviation fuel?")
        [(['share', 'sustain', 'aviat', 'fuel'], 1.0), (['saf'], 1.0)]
        """
        terms = self._terms(query)
        out = [(terms, 1.0)]
        if expand:
            seen = set(terms)
            for form in self.abbreviations.expansions(query):
                form_terms = self._terms(form)
                new = [t for t in dict.fromkeys(form_terms) if t not in seen]
                if new:
                    out.append((new, 1.0 / len(form_terms)))
                    seen.update(new)
        return out

    def _terms(self, text: str) -> list[str]:
        terms = analyze(text, self.languages[0], self._splitter)
        for lang in self.languages[1:]:
            seen = set(terms)
            terms += [t for t in analyze(text, lang, self._splitter) if t not in seen]
        return terms

    # --- persistence ----------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` atomically (see the module docstring)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        generation = f"{_GENERATION_PREFIX}{uuid.uuid4().hex[:12]}"
        gen_dir = folder / generation
        try:
            gen_dir.mkdir()
            if self._bm25 is not None:
                self._bm25.save(gen_dir, show_progress=False)
            (gen_dir / IDS_FILE).write_text(json.dumps(self._ids, ensure_ascii=False), encoding="utf-8")
            if self._splitter is not None:
                (gen_dir / WORDS_FILE).write_text(json.dumps(self._words, ensure_ascii=False), encoding="utf-8")
            (gen_dir / ABBREVIATIONS_FILE).write_text(json.dumps(self.abbreviations.to_json(), ensure_ascii=False), encoding="utf-8")
            files = {}
            for path in sorted(gen_dir.iterdir()):
                _fsync(path)
                files[path.name] = {"bytes": path.stat().st_size, "sha256": _sha256(path)}
            manifest = {
                "format": FORMAT,
                "generation": generation,
                "documents": len(self._ids),
                "terms": self.terms,
                "tokens": self.tokens,
                "languages": list(self.languages),
                "bm25": {"k1": K1, "b": B, "method": METHOD},
                "files": files,
            }
            tmp = folder / f"{MANIFEST}.{generation}.tmp"
            tmp.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            _fsync(tmp)
            os.replace(tmp, folder / MANIFEST)
            _fsync(folder)
        except BaseException:
            shutil.rmtree(gen_dir, ignore_errors=True)
            raise
        for stale in folder.iterdir():  # older generations and temp files of crashed saves
            if stale.name != generation and stale.name != MANIFEST:
                if stale.is_dir() and stale.name.startswith(_GENERATION_PREFIX):
                    shutil.rmtree(stale, ignore_errors=True)
                elif stale.name.startswith(f"{MANIFEST}.") and stale.name.endswith(".tmp"):
                    stale.unlink(missing_ok=True)

    @classmethod
    def load(cls, folder: Path) -> KeywordIndex:
        """The index saved in ``folder``; :class:`StoreError` when it is missing or damaged."""
        folder = Path(folder)
        try:
            return cls._load(folder)
        except StoreError:
            raise
        except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError) as exc:
            # a save that replaced the generation while we read it: the new one is whole
            try:
                return cls._load(folder)
            except (StoreError, OSError, ValueError, KeyError, TypeError, AttributeError, EOFError):
                raise _missing(folder, f"unreadable ({type(exc).__name__}: {exc})") from exc

    @classmethod
    def _load(cls, folder: Path) -> KeywordIndex:
        manifest_path = folder / MANIFEST
        if not manifest_path.is_file():
            raise _missing(folder)
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or manifest.get("format") not in (1, FORMAT):
            raise _missing(folder, "unknown format")
        gen_dir = folder / str(manifest["generation"])
        for name, meta in manifest["files"].items():
            path = gen_dir / name
            if not _intact(path, meta):
                raise ValueError(f"{name} is missing or damaged")
        ids = json.loads((gen_dir / IDS_FILE).read_text(encoding="utf-8"))
        if not isinstance(ids, list) or len(ids) != manifest["documents"] or not all(isinstance(i, str) for i in ids):
            raise ValueError("ids disagree with the manifest")
        index = cls.__new__(cls)
        index._ids = ids
        index._vocab = {}
        index._bm25 = None
        index.tokens = int(manifest.get("tokens", 0))
        languages = manifest.get("languages", ["en"])
        if not isinstance(languages, list) or not languages or not set(languages) <= set(LANGUAGES):
            raise ValueError("unknown languages in the manifest")
        index.languages = tuple(languages)
        index._words, index._splitter = {}, None
        index.abbreviations = Abbreviations()
        if ABBREVIATIONS_FILE in manifest["files"]:
            index.abbreviations = Abbreviations.from_json(json.loads((gen_dir / ABBREVIATIONS_FILE).read_text(encoding="utf-8")))
        if "de" in languages:
            words = json.loads((gen_dir / WORDS_FILE).read_text(encoding="utf-8"))
            if not isinstance(words, dict):
                raise ValueError("word counts are not a mapping")
            index._words, index._splitter = words, Decompounder(words)
        if manifest["terms"]:
            bm25 = bm25s.BM25.load(gen_dir, show_progress=False)
            _check(bm25, len(ids), int(manifest["terms"]))
            index._vocab = bm25.vocab_dict
            index._bm25 = bm25
        return index


def read_abbreviations(folder: Path) -> Abbreviations:
    """The abbreviations table of the index saved in ``folder`` without loading the index (the
    answer's sentence scoring reads it); empty when there is no index, the index predates the
    table, or its file is damaged — the BM25 signal reports those itself."""
    try:
        manifest = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
        meta = manifest["files"].get(ABBREVIATIONS_FILE)
        if meta is None:
            return Abbreviations()
        path = Path(folder) / str(manifest["generation"]) / ABBREVIATIONS_FILE
        if not _intact(path, meta):
            return Abbreviations()
        return Abbreviations.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return Abbreviations()


def _check(bm25: bm25s.BM25, documents: int, terms: int) -> None:
    """The matrix, the vocabulary and the ids agree (a mismatch would misattribute hits)."""
    data, indices, indptr = bm25.scores["data"], bm25.scores["indices"], bm25.scores["indptr"]
    vocab = bm25.vocab_dict
    if bm25.scores["num_docs"] != documents or len(vocab) != terms or len(indptr) != terms + 1:
        raise ValueError("matrix shape disagrees with the ids or the vocabulary")
    if len(data) != len(indices) or int(indptr[-1]) != len(data) or (len(indices) and int(indices.max()) >= documents):
        raise ValueError("inconsistent sparse matrix")
    if sorted(vocab.values()) != list(range(terms)):
        raise ValueError("vocabulary ids are not 0..n-1")


def _missing(folder: Path, why: str = "") -> StoreError:
    detail = f" ({why})" if why else ""
    return StoreError(f"no keyword index in {folder}{detail}; run `policykb reindex bm25`")


def _intact(path: Path, meta: dict) -> bool:
    """Whether ``path`` is the file the manifest's ``meta`` (bytes, sha256) describes."""
    return path.is_file() and path.stat().st_size == meta["bytes"] and _sha256(path) == meta["sha256"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
