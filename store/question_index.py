"""The question bank on disk: written by kgpipeline (questions stage), read by spr (retriever).

Folder ``<kb>/indexes/questions/``:
- ``index.faiss`` + ``ids.json``: a :class:`store.vectors.VectorIndex`, one vector per question;
- ``questions.jsonl``: one :class:`LatentQuestion` per line (id, chunk IRI, text, origin);
- ``meta.json``: the embedding model id and counts, so a reader can refuse an index built with a
  different model (its vectors would not be comparable with the query's).

A save writes the JSONL and meta through temporary names and renames them after the index, and
a load checks that the three agree, so a crash between renames is detected, not silently used.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from core.errors import StoreError
from core.jsonl import read_jsonl
from store.layout import KBLayout
from store.vectors import VectorIndex

QUESTION_BANK = "questions"
QUESTIONS_FILE = "questions.jsonl"
META_FILE = "meta.json"
REINDEX_HINT = "run `policykb reindex questions`"


def question_bank_dir(kb_dir: Path) -> Path:
    """``<kb>/indexes/questions``: where the question bank stage writes and the retriever reads."""
    return KBLayout(kb_dir).index(QUESTION_BANK)


@dataclass(frozen=True)
class LatentQuestion:
    """A question the chunk answers. ``origin``: "triple" (from an extracted fact), "sentence"
    (from a key sentence) or "llm"."""

    id: str  # vector id in the index
    chunk: str  # chunk IRI
    text: str
    origin: str


@dataclass(frozen=True)
class QuestionBank:
    index: VectorIndex
    questions: dict[str, LatentQuestion]  # by id
    model_id: str


def save_question_bank(folder: Path, index: VectorIndex, questions: list[LatentQuestion], model_id: str) -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tmp_q, tmp_meta = folder / (QUESTIONS_FILE + ".tmp"), folder / (META_FILE + ".tmp")
    with open(tmp_q, "w", encoding="utf-8") as out:
        for q in questions:
            out.write(json.dumps(asdict(q), ensure_ascii=False) + "\n")
    chunks = len({q.chunk for q in questions})
    tmp_meta.write_text(json.dumps({"model_id": model_id, "questions": len(questions), "chunks": chunks}), encoding="utf-8")
    index.save(folder)
    os.replace(tmp_q, folder / QUESTIONS_FILE)
    os.replace(tmp_meta, folder / META_FILE)


def load_question_bank(folder: Path) -> QuestionBank:
    """Raises StoreError (telling to reindex) when the bank is missing or inconsistent."""
    folder = Path(folder)
    if not (folder / QUESTIONS_FILE).is_file() or not (folder / META_FILE).is_file():
        raise StoreError(f"no question bank in {folder}; {REINDEX_HINT}")
    try:
        index = VectorIndex.load(folder)
    except StoreError as exc:
        raise StoreError(f"{exc}; {REINDEX_HINT}") from None
    meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    path = folder / QUESTIONS_FILE

    def corrupt(line: int, reason: str) -> None:
        raise StoreError(f"{path}:{line}: {reason}; {REINDEX_HINT}")

    questions: dict[str, LatentQuestion] = {}
    for _, row in read_jsonl(path, on_error=corrupt):
        q = LatentQuestion(**row)
        questions[q.id] = q
    if set(index.ids) != set(questions):
        raise StoreError(f"question bank in {folder} is inconsistent (index and questions differ); {REINDEX_HINT}")
    return QuestionBank(index, questions, str(meta.get("model_id", "")))
