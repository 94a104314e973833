"""Keyword index: BM25 (bm25s, Lucene variant) over chunk texts, with a string id per document.

The lexical counterpart of :mod:`store.vectors`: exact terms — article numbers, act numbers such
as ``2024/1689``, amounts, names a dense embedding blurs — find their chunk here. Hits reuse
:class:`store.vectors.Hit`, but ``score`` is the BM25 score (>= 0, unbounded, comparable only
within one index and one query), not a cosine. Only documents sharing at least one term with the
query are returned, so an empty query, one of stopwords only, or one of unknown terms gives ``[]``.

Tokenization (:func:`tokenize`, the same for documents and queries): case-folded, split on
non-word characters; numbers keep their separators (``2024/1689`` is one token plus its parts
``2024`` and ``1689``; ``50,000``, ``50.000`` and ``50000`` are all ``50000``); English and German
stopwords dropped (minus German ones that are English content words: "die", "war", "man", ...);
the rest stemmed with the English Snowball stemmer (PyStemmer). The corpora are English and
German, and one stemmer serves both on purpose: a query has no reliable language, and the same
deterministic stemmer on both sides can only fail to merge two forms (German "Anlage"/"Anlagen"
stay apart), never make a word miss itself; the English rules touch German words little (mostly a
final "-s"/"-es", as in "Gesetzes" → "gesetz", which is right), while the German stemmer would
mangle English words ending in "-en"/"-er". German compounds are out of any stemmer's reach.

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
import re
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS, STOPWORDS_GERMAN

from core.errors import InputError, StoreError
from store.vectors import Hit

__all__ = ["Hit", "KeywordIndex", "tokenize"]

# BM25 parameters (Lucene's defaults); module constants until the config grows a section for them.
K1 = 1.5
B = 0.75
METHOD = "lucene"

MANIFEST = "manifest.json"
IDS_FILE = "ids.json"
FORMAT = 1
_GENERATION_PREFIX = "g-"

# German stopwords that are also English content words stay searchable.
_GERMAN_KEPT = {"die", "war", "man", "hat", "bin", "hin", "weg", "also"}
STOPWORDS = frozenset(STOPWORDS_EN_PLUS) | (frozenset(STOPWORDS_GERMAN) - _GERMAN_KEPT)

# A run of letters/digits; after a digit, "." "," "/" followed by digits continue the token.
_TOKEN = re.compile(r"[^\W_]+(?:(?<=\d)[.,/]\d+)*")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+|\d{1,3}(?:\.\d{3})+")
_SEPARATOR = re.compile(r"[.,/]")
_stemmer = Stemmer.Stemmer("english")


def tokenize(text: str) -> list[str]:
    """The index terms of ``text``, in order (documents and queries alike).

    >>> tokenize("Regulation (EU) 2024/1689: fines of up to EUR 50,000 for operators")
    ['regul', 'eu', '2024/1689', '2024', '1689', 'fine', 'eur', '50000', 'oper']
    >>> tokenize("Die Netzbetreiber und die Förderung des Gesetzes")
    ['die', 'netzbetreib', 'die', 'förderung', 'gesetz']
    """
    words: list[str] = []
    numbers: list[tuple[int, list[str]]] = []  # (position in words, terms): not stemmed
    for token in _TOKEN.findall(text.casefold()):
        if token.isalnum():  # no separator: a word (or a plain number)
            if token not in STOPWORDS:
                words.append(token)
            continue
        if _THOUSANDS.fullmatch(token):
            terms = [_SEPARATOR.sub("", token)]
        else:
            compound = token.replace(",", ".")
            terms = [compound, *(part for part in _SEPARATOR.split(token) if part)]
        numbers.append((len(words), terms))
    stemmed = _stemmer.stemWords(words) if words else []
    if not numbers:
        return stemmed
    out: list[str] = []
    at = 0
    for position, terms in numbers:
        out.extend(stemmed[at:position])
        out.extend(terms)
        at = position
    out.extend(stemmed[at:])
    return out


class KeywordIndex:
    """A BM25 index over ``texts``, each known by the id at the same position in ``ids``.

    Built once (rebuild to change it); searching is read-only and safe to share between threads.
    """

    def __init__(self, ids: Sequence[str], texts: Sequence[str]):
        ids, texts = list(ids), list(texts)
        if len(ids) != len(texts):
            raise InputError(f"{len(ids)} ids for {len(texts)} texts")
        if len(set(ids)) != len(ids):
            raise InputError("keyword index ids must be unique")
        self._ids = ids
        self._vocab: dict[str, int] = {}
        self._bm25: bm25s.BM25 | None = None
        self.tokens = 0  # total terms indexed
        if ids:
            corpus: list[list[int]] = []
            for text in texts:
                terms = tokenize(text)
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

    def search(self, query: str, k: int) -> list[Hit]:
        """The ``k`` best documents for ``query``, best first; ``Hit.score`` is the BM25 score.

        Only documents that share a term with the query; ties keep index order.
        """
        if self._bm25 is None or k <= 0:
            return []
        term_ids = [self._vocab[t] for t in tokenize(query) if t in self._vocab]
        if not term_ids:
            return []
        scores = self._bm25.get_scores_from_ids(term_ids)
        matched = np.flatnonzero(scores > 0)
        if matched.size > k:  # keep the k best and everything tied with the k-th, then sort
            kth = -np.partition(-scores[matched], k - 1)[k - 1]
            matched = matched[scores[matched] >= kth]
        order = np.lexsort((matched, -scores[matched]))[:k]  # score descending, then index order
        return [Hit(self._ids[i], float(scores[i])) for i in matched[order]]

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
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise _missing(folder, "unknown format")
        gen_dir = folder / str(manifest["generation"])
        for name, meta in manifest["files"].items():
            path = gen_dir / name
            if not path.is_file() or path.stat().st_size != meta["bytes"] or _sha256(path) != meta["sha256"]:
                raise ValueError(f"{name} is missing or damaged")
        ids = json.loads((gen_dir / IDS_FILE).read_text(encoding="utf-8"))
        if not isinstance(ids, list) or len(ids) != manifest["documents"] or not all(isinstance(i, str) for i in ids):
            raise ValueError("ids disagree with the manifest")
        index = cls.__new__(cls)
        index._ids = ids
        index._vocab = {}
        index._bm25 = None
        index.tokens = int(manifest.get("tokens", 0))
        if manifest["terms"]:
            bm25 = bm25s.BM25.load(gen_dir, show_progress=False)
            _check(bm25, len(ids), int(manifest["terms"]))
            index._vocab = bm25.vocab_dict
            index._bm25 = bm25
        return index


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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
