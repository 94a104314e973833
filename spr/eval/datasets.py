"""Evaluation datasets as one record shape: questions with gold answers and gold passages, and the
corpus they are asked over.

Every loader turns its source format into :class:`EvalDataset`: ``questions`` plus either
``passages`` (the corpus as records, written as one JSONL line per passage by
:func:`write_corpus`, so the ingest pipeline makes one document per passage whose ``doc_id`` is the
passage id) or ``corpus_paths`` (files or folders ingested as they are). Gold passages are passage
ids; retrieved evidence maps back to them through the documents' ``dcterms:identifier``.

Passage ids are short ASCII slugs (``p00042``), so the ingest keeps them unchanged
(``kgpipeline.preprocess`` slugs JSONL ids to ``[a-z0-9-]``, 64 characters at most).

Sets (``name``: source under the data folder):

- ``hotpotqa``, ``musique``: HippoRAG's 100-question samples with their corpora (994 / 1,890
  passages); gold = the supporting passages.
- ``squad2``: the SQuAD 2.0 subset (626 questions, 333 unanswerable, 87 paragraphs).
- ``policyqa``: PolicyQA dev (SQuAD v1 format, 3,809 questions over 574 privacy-policy paragraphs).
- ``rag-eurlex``: 43 generated questions over the AI Act and GDPR with reference answers; the corpus
  is those two acts' 212 articles from ``eu_regulations_pypi/articles.jsonl``.
- ``pathquestion`` (= ``pq-2h``), ``pq-3h``, ``pql-2h``, ``pql-3h``: see :mod:`spr.eval.pathquestion`.
- a ``.jsonl`` path: the generic format (:func:`load_jsonl`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from core.errors import InputError
from core.jsonl import read_jsonl
from spr.eval.records import EvalDataset, EvalQuestion, Passage


# --- helpers ----------------------------------------------------------------------------------------
def default_data_dir() -> Path:
    """``../shared/data`` beside the checkout (DESIGN.md: the data stays outside the project)."""
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _read_json(path: Path) -> object:
    if not path.is_file():
        raise InputError(f"dataset file not found: {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None


def _read_jsonl(path: Path) -> list[dict]:
    """The objects of a JSONL file; InputError naming the file and line at the first bad line."""
    if not path.is_file():
        raise InputError(f"dataset file not found: {path}")
    return [row for _, row in read_jsonl(path)]


def _key(text: str) -> str:
    """Whitespace- and case-insensitive key for matching a gold paragraph to a corpus passage."""
    return " ".join(text.split()).lower()


def _pid(index: int) -> str:
    return f"p{index:05d}"


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


# --- multi-hop: HotpotQA and MuSiQue (HippoRAG format) ------------------------------------------------
def load_hotpotqa(data_dir: Path) -> EvalDataset:
    folder = data_dir / "multihop_qa" / "hipporag_v1"
    corpus = _read_json(folder / "hotpotqa_train_corpus.json")
    if not isinstance(corpus, dict):
        raise InputError(f"{folder / 'hotpotqa_train_corpus.json'}: expected an object title -> sentences")
    passages = tuple(
        Passage(_pid(i), title, f"{title}\n\n{''.join(sents).strip()}") for i, (title, sents) in enumerate(corpus.items())
    )
    by_title = {p.title: p.id for p in passages}
    questions = []
    for row in _read_json(folder / "hotpotqa_train.json"):  # type: ignore[union-attr]
        titles = _unique(t for t, _ in row["supporting_facts"])
        missing = [t for t in titles if t not in by_title]
        if missing:
            raise InputError(f"hotpotqa {row['_id']}: supporting passage {missing[0]!r} not in the corpus")
        pool = _unique(by_title.get(t, "") for t, _ in row["context"])
        questions.append(
            EvalQuestion(row["_id"], row["question"], (row["answer"],), tuple(by_title[t] for t in titles), kind=row["type"], pool=pool)
        )
    return EvalDataset("hotpotqa", tuple(questions), passages, source=str(folder / "hotpotqa_train.json"))


def load_musique(data_dir: Path) -> EvalDataset:
    folder = data_dir / "multihop_qa" / "hipporag_v1"
    corpus = _read_json(folder / "musique_train_corpus.json")
    passages = tuple(Passage(_pid(i), r["title"], f"{r['title']}\n\n{r['text'].strip()}") for i, r in enumerate(corpus))  # type: ignore[arg-type]
    by_key = {(r["title"], _key(r["text"])): _pid(i) for i, r in enumerate(corpus)}  # type: ignore[arg-type]
    questions = []
    for row in _read_json(folder / "musique_train.json"):  # type: ignore[union-attr]
        gold = []
        for p in row["paragraphs"]:
            key = (p["title"], _key(p["paragraph_text"]))
            if p["is_supporting"]:
                if key not in by_key:
                    raise InputError(f"musique {row['id']}: supporting paragraph {p['title']!r} not in the corpus")
                gold.append(by_key[key])
        pool = _unique(by_key.get((p["title"], _key(p["paragraph_text"])), "") for p in row["paragraphs"])
        answers = _unique([row["answer"], *row.get("answer_aliases", [])])
        answerable = bool(row.get("answerable", True))
        questions.append(
            EvalQuestion(
                row["id"], row["question"], answers if answerable else (), _unique(gold), answerable, kind=row["id"].split("__")[0], pool=pool
            )
        )
    return EvalDataset("musique", tuple(questions), passages, source=str(folder / "musique_train.json"))


# --- SQuAD format: SQuAD 2.0 subset and PolicyQA ----------------------------------------------------
def load_squad_format(name: str, path: Path) -> EvalDataset:
    """One passage per paragraph; SQuAD 2.0's ``is_impossible`` questions are unanswerable."""
    data = _read_json(path)
    passages: list[Passage] = []
    questions: list[EvalQuestion] = []
    for article in data["data"]:  # type: ignore[index]
        for j, para in enumerate(article["paragraphs"], 1):
            pid = _pid(len(passages))
            passages.append(Passage(pid, f"{article['title']} ({j})", para["context"]))
            for qa in para["qas"]:
                impossible = bool(qa.get("is_impossible", False))
                answers = () if impossible else _unique(a["text"].strip() for a in qa["answers"])
                kind = "unanswerable" if impossible else str(qa.get("type", "")).split("|||")[0]
                questions.append(EvalQuestion(qa["id"], qa["question"].strip(), answers, (pid,), not impossible, kind=kind))
    return EvalDataset(name, tuple(questions), tuple(passages), source=str(path))


# --- rag-eurlex-eval over the EU regulations corpus -------------------------------------------------
# section_ids prefixes of rag-eurlex-eval -> the ``act`` names of articles.jsonl
_EURLEX_ACTS = {"ai_act": "EU AI Act", "gdpr": "GDPR", "dora": "DORA", "nis2": "NIS2 Directive", "cra": "Cyber Resilience Act", "csrd": "CSRD"}


def _article_id(act: str, number: object) -> str:
    return re.sub(r"[^a-z0-9]+", "-", act.lower()).strip("-") + f"-art-{number}"


def load_rag_eurlex(data_dir: Path) -> EvalDataset:
    """The corpus is every article of the acts the questions are about (the set's own scope: the
    AI Act and the GDPR, 212 articles), not all six acts of ``articles.jsonl``."""
    path = data_dir / "policy_qa" / "rag_eurlex_eval" / "testset_generated.jsonl"
    rows = _read_jsonl(path)
    acts = {_EURLEX_ACTS.get(sid.partition(":")[0], "") for row in rows for sid in row.get("section_ids") or []}
    articles = _read_jsonl(data_dir / "policy_corpora" / "eu_regulations_pypi" / "articles.jsonl")
    passages = tuple(
        Passage(_article_id(a["act"], a["article_number"]), f"{a['act']} Article {a['article_number']}", a["text"])
        for a in articles
        if a["act"] in acts
    )
    ids = {p.id for p in passages}
    questions = []
    for row in rows:
        gold = []
        for sid in row.get("section_ids") or []:
            prefix, _, art = sid.partition(":")
            pid = _article_id(_EURLEX_ACTS.get(prefix, prefix), art.removeprefix("art"))
            if pid not in ids:
                raise InputError(f"rag-eurlex {row['id']}: section {sid!r} is not an article of the corpus")
            gold.append(pid)
        questions.append(
            EvalQuestion(
                row["id"], row["user_input"], (row["reference"],), _unique(gold),
                gold_contexts=tuple(row.get("reference_contexts") or ()), kind=row.get("category", ""),
            )
        )
    return EvalDataset("rag-eurlex", tuple(questions), passages, source=str(path))


# --- the generic JSONL format -------------------------------------------------------------------------
def load_jsonl(path: Path, corpus: Path | None = None) -> EvalDataset:
    """Users' own sets: one JSON object per line.

    ``question`` (required); ``answer`` (string) or ``answers`` (list), empty or absent for an
    unanswerable question; ``answerable`` (default: there is an answer); ``id`` (default: line
    number); ``contexts`` (reference passages, optional); ``gold_ids`` (document ids, optional);
    ``kind`` (optional). The corpus is ``corpus`` (files or a folder, ingested as they are, gold
    contexts then located in the KB); without one, the distinct ``contexts`` become the corpus.
    """
    rows = _read_jsonl(path)
    if not rows:
        raise InputError(f"{path}: no questions")
    contexts: dict[str, str] = {}  # key -> passage id, in order of first appearance
    texts: dict[str, str] = {}
    questions = []
    for n, row in enumerate(rows, 1):
        question = row.get("question")
        if not isinstance(question, str) or not question.strip():
            raise InputError(f"{path}: question {n} has no 'question' text")
        raw = row.get("answers", row.get("answer"))
        answers = _unique(str(a).strip() for a in (raw if isinstance(raw, list) else [raw] if raw else []))
        answerable = bool(row.get("answerable", bool(answers)))
        ctx = tuple(str(c) for c in row.get("contexts") or ())
        gold = tuple(str(g) for g in row.get("gold_ids") or ())
        if corpus is None and not gold:
            for c in ctx:
                texts.setdefault(_key(c), c)
                contexts.setdefault(_key(c), _pid(len(contexts)))
            gold = tuple(contexts[_key(c)] for c in ctx)
        questions.append(
            EvalQuestion(str(row.get("id", n)), question.strip(), answers if answerable else (), _unique(gold), answerable, ctx, str(row.get("kind", "")))
        )
    if corpus is not None:
        if not corpus.exists():
            raise InputError(f"corpus not found: {corpus}")
        return EvalDataset(path.stem, tuple(questions), corpus_paths=(corpus,), source=str(path))
    if not contexts:
        raise InputError(f"{path}: no 'contexts' to build a corpus from; pass a corpus (--corpus)")
    passages = tuple(Passage(pid, f"context {pid}", texts[key]) for key, pid in contexts.items())
    return EvalDataset(path.stem, tuple(questions), passages, source=str(path))


# --- registry -----------------------------------------------------------------------------------------
def _pathquestion(variant: str) -> Callable[[Path], EvalDataset]:
    def load(data_dir: Path) -> EvalDataset:
        from spr.eval.pathquestion import load_pathquestion

        return load_pathquestion(data_dir, variant)

    return load


_SQUAD2 = Path("multihop_qa") / "squad_v2_dev_subset" / "squad_v2_dev_first2articles.json"
_POLICYQA = Path("policy_qa") / "policyqa" / "dev.json"

DATASETS: dict[str, Callable[[Path], EvalDataset]] = {
    "hotpotqa": load_hotpotqa,
    "musique": load_musique,
    "squad2": lambda d: load_squad_format("squad2", d / _SQUAD2),
    "policyqa": lambda d: load_squad_format("policyqa", d / _POLICYQA),
    "rag-eurlex": load_rag_eurlex,
    "pathquestion": _pathquestion("pq-2h"),
    "pq-2h": _pathquestion("pq-2h"),
    "pq-3h": _pathquestion("pq-3h"),
    "pql-2h": _pathquestion("pql-2h"),
    "pql-3h": _pathquestion("pql-3h"),
}


def load_dataset(name: str, data_dir: Path | None = None, corpus: Path | None = None) -> EvalDataset:
    """A named set from ``data_dir`` (default :func:`default_data_dir`), or a ``.jsonl`` path."""
    if name.endswith((".jsonl", ".ndjson")) or Path(name).is_file():
        return load_jsonl(Path(name), corpus)
    if name not in DATASETS:
        raise InputError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)} or a .jsonl file")
    folder = Path(data_dir) if data_dir else default_data_dir()
    if not folder.is_dir():
        raise InputError(f"data folder not found: {folder} (set [eval] data_dir or --data-dir)")
    return DATASETS[name](folder)


CORPUS_SCOPES = ("full", "pool")


def sample(dataset: EvalDataset, limit: int | None, seed: int = 0, corpus: str = "full") -> EvalDataset:
    """At most ``limit`` questions, drawn with a seeded RNG and kept in file order.

    ``corpus="full"`` keeps every passage (all distractors; one cached KB serves every sample).
    ``corpus="pool"`` keeps only the sampled questions' own pools (gold + the set's distractor
    paragraphs): a smaller, easier corpus that is quicker to build — reports say which was used."""
    if corpus not in CORPUS_SCOPES:
        raise InputError(f"unknown corpus scope {corpus!r}; known: {', '.join(CORPUS_SCOPES)}")
    picked = list(range(len(dataset.questions)))
    if limit is not None and limit < len(picked):
        if limit < 1:
            raise InputError("limit must be at least 1")
        picked = sorted(random.Random(seed).sample(picked, limit))
    out = replace(dataset, questions=tuple(dataset.questions[i] for i in picked))
    if corpus == "pool":
        keep = {pid for q in out.questions for pid in (*q.pool, *q.gold_passage_ids)}
        if not any(q.pool for q in out.questions):
            raise InputError(f"{dataset.name} has no per-question passage pools; use the full corpus")
        out = replace(out, name=f"{dataset.name}-pool-{len(picked)}-s{seed}", passages=tuple(p for p in out.passages if p.id in keep))
    return out


# --- the corpus as JSONL ------------------------------------------------------------------------------
def corpus_lines(passages: Iterable[Passage]) -> str:
    """The JSONL the ingest reads: ``id``/``title``/``text`` (preprocess maps these fields)."""
    return "".join(json.dumps({"id": p.id, "title": p.title, "text": p.text}, ensure_ascii=False) + "\n" for p in passages)


def write_corpus(dataset: EvalDataset, path: Path) -> str:
    """Write the passages to ``path`` (unchanged bytes are not rewritten); return their SHA-256."""
    text = corpus_lines(dataset.passages)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return digest
