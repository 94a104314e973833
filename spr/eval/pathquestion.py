"""PathQuestion (Zhou et al., COLING 2018) as an evaluation set over documents.

Question lines are ``question<TAB>answer(alt1/alt2/...)<TAB>path`` with the path
``subject#r1#e1#r2#...#answer`` (PQ adds ``#<end>#answer``); KB lines are ``subject<TAB>relation<TAB>object``.

policykb answers from documents, so the small KB becomes a corpus: one passage per subject entity,
one sentence per triple ("ludwig ii of bavaria parents maximilian ii of bavaria."). Every system
then ingests the same text. Entity names are written with spaces instead of underscores — in the
questions, answers and passages alike — so words match across them; Freebase relation names
(``__people__person__gender``) are shortened to their last part ("gender"). Gold passages are the
passages of the path's hop subjects (the entities whose triples the path uses).
"""

from __future__ import annotations

from pathlib import Path

from core.errors import InputError
from spr.eval.records import EvalDataset, EvalQuestion, Passage

# variant -> (question file, KB file) under kbqa/pathquestion/
VARIANTS = {
    "pq-2h": ("PQ-2H.txt", "2H-kb.txt"),
    "pq-3h": ("PQ-3H.txt", "3H-kb.txt"),
    "pql-2h": ("PQL-2H.txt", "PQL2-KB.txt"),
    "pql-3h": ("PQL-3H.txt", "PQL3-KB.txt"),
}


def readable(name: str) -> str:
    """An entity or relation name as words: underscores to spaces, Freebase prefixes dropped."""
    if name.startswith("__"):
        name = name.rsplit("__", 1)[-1]
    return " ".join(name.replace("_", " ").split())


def parse_answers(field: str) -> tuple[str, ...]:
    """``female(female/)`` → ("female",); ``a(a/b/)`` → ("a", "b"): the head, then the set."""
    head, _, rest = field.partition("(")
    alts = rest.rstrip(")").split("/") if rest else []
    return tuple(dict.fromkeys(readable(a) for a in [head, *alts] if a.strip()))


def parse_path(field: str) -> list[str]:
    """The alternating entity/relation list, without PQ's ``#<end>#answer`` tail."""
    parts = field.strip().split("#")
    if "<end>" in parts:
        parts = parts[: parts.index("<end>")]
    return parts


def read_facts(kb_file: Path) -> dict[str, list[tuple[str, str]]]:
    """Subject → its distinct (relation, object) pairs, in file order."""
    facts: dict[str, dict[tuple[str, str], None]] = {}
    for line in Path(kb_file).read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in line.split("\t") if p.strip()]
        if len(parts) == 3:
            facts.setdefault(parts[0], {})[(parts[1], parts[2])] = None
    return {s: list(pairs) for s, pairs in facts.items()}


def fact_sentence(subject: str, relation: str, obj: str) -> str:
    """One KB triple as a sentence: "ludwig ii of bavaria parents maximilian ii of bavaria."."""
    return f"{readable(subject)} {readable(relation)} {readable(obj)}."


def load_pathquestion(data_dir: Path, variant: str = "pq-2h") -> EvalDataset:
    if variant not in VARIANTS:
        raise InputError(f"unknown PathQuestion variant {variant!r}; known: {', '.join(VARIANTS)}")
    folder = data_dir / "kbqa" / "pathquestion"
    qfile, kbfile = (folder / f for f in VARIANTS[variant])
    for f in (qfile, kbfile):
        if not f.is_file():
            raise InputError(f"dataset file not found: {f}")

    facts = read_facts(kbfile)
    ids = {s: f"p{i:05d}" for i, s in enumerate(facts)}
    passages = tuple(
        Passage(ids[s], readable(s), "\n".join(dict.fromkeys(fact_sentence(s, r, o) for r, o in pairs)))
        for s, pairs in facts.items()
    )

    questions = []
    for n, line in enumerate(qfile.read_text(encoding="utf-8").splitlines(), 1):
        cols = line.split("\t")
        if len(cols) < 3:
            continue
        path = parse_path(cols[2])
        hop_subjects = path[0:-1:2]  # e0, e1, ...: each is the subject of one hop's triple
        gold = tuple(dict.fromkeys(ids[e] for e in hop_subjects if e in ids))
        hops = (len(path) - 1) // 2
        questions.append(EvalQuestion(f"{variant}-{n}", readable(cols[0]), parse_answers(cols[1]), gold, kind=f"{hops}hop"))
    return EvalDataset(variant, tuple(questions), passages, source=str(qfile))
