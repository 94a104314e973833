"""Persona test-set generation (spr.eval.personas) over the example corpus KB: quote verification,
de-duplication, the statistics, the JSONL round trip through the harness's loader, the CLI, and
one real SmolLM2 generation (its output checked against the contract only)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable

import pytest
from click.testing import CliRunner
from conftest import TEST_LLM
from support.kbs import CORPUS, corpus_kb

from core.llm.base import LLM, Completion, Request
from core.usage import Usage
from spr.eval.datasets import load_jsonl
from spr.eval.personas import PERSONAS, generate_testset, persona_stats, stats_markdown
from spr.eval.testset import (
    GeneratedQuestion,
    Quote,
    deduplicate,
    is_duplicate,
    locate_quote,
    read_testset,
    verify_quotes,
    write_testset,
)
from store.units import Unit, read_units

_PASSAGE = re.compile(r"Passage (\d) \(source: .*?\):\n(.*?)(?=\n\nPassage \d \(source|\n\nWrite ONE)", re.DOTALL)


class FakeLLM(LLM):
    """Answers each generation prompt with ``reply(passages)``: the passage texts shown, in order."""

    def __init__(self, reply: Callable[[list[str]], dict]):
        super().__init__("fake-personas")
        self.reply = reply
        self.prompts: list[str] = []

    def _generate(self, request: Request) -> Completion:
        user = request.messages[-1][1]
        self.prompts.append(user)
        passages = [m.group(2) for m in _PASSAGE.finditer(user)]
        return Completion(json.dumps(self.reply(passages)), Usage(10, 10), False, self.model_id)


def words(text: str, start: int, n: int) -> str:
    return " ".join(text.split()[start : start + n])


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(corpus_kb(tmp_path_factory)) as opened:
        yield opened


# --- quotes --------------------------------------------------------------------------------------------
def test_locate_quote_exact_and_whitespace_normalized():
    text = "Article 5\nMember States shall  lay down\nthe rules on penalties."
    assert locate_quote("the rules on penalties", text) == (text.index("the rules"), len(text) - 1)
    start, end = locate_quote("shall lay down the rules", text)
    assert text[start:end] == "shall  lay down\nthe rules"
    assert locate_quote("shall set down the rules", text) is None


def test_verify_quotes_keeps_exact_substrings_with_offsets():
    a = Unit("c:a", "d:1", (), "The operator shall report incidents within 24 hours.\nFines apply.")
    b = Unit("c:b", "d:2", (), "Member States designate a competent authority.")
    kept, dropped = verify_quotes(['"report incidents within 24 hours"', "designate a competent authority", "made-up words here", "Fines"], [a, b])
    assert dropped == 2  # the invented quote, and one too short to verify anything
    assert [(q.chunk, q.text) for q in kept] == [("c:a", "report incidents within 24 hours"), ("c:b", "designate a competent authority")]
    for q, unit in zip(kept, (a, b), strict=True):
        assert unit.text[q.start : q.end] == q.text


def test_quote_case_cut_and_chunk_cover():
    text = "Each Member State shall ensure that the authority has the resources needed for its tasks."
    a, b = Unit("c:a", "d:1", (), text), Unit("c:b", "d:2", (), "Recital: " + text)
    # capitalized from mid-sentence: the chunk's own casing is stored
    (q,), _ = verify_quotes(["The authority has the resources"], [a])
    assert q.text == "the authority has the resources"
    # cut by the schema's length bound with the last words run together: found without them
    cut = "Each Member State shall ensure that the authority has the resourcesneeded"
    assert verify_quotes([cut], [a])[0] == []
    (q,), _ = verify_quotes([cut], [a], cut_at=len(cut))
    assert q.text == "Each Member State shall ensure that the authority has the"
    # the same words in both chunks: the second quote goes to the chunk not yet quoted
    kept, _ = verify_quotes(["shall ensure that the authority", "has the resources needed"], [a, b])
    assert [k.chunk for k in kept] == ["c:a", "c:b"]


def test_multi_hop_partners_prefer_specific_links(kb):
    import random

    from spr.eval.personas import ChunkPool

    pool = ChunkPool.read(kb.store)
    assert pool.eligible and pool.chunks_of and all(2 <= len(c) <= 20 for c in pool.chunks_of.values())
    linked = [c for c in pool.eligible if pool.terms.get(c)]
    chunk = linked[0]
    other, via = pool.partner(chunk, random.Random(0), {chunk})
    assert other != chunk and via.startswith(("entity: ", "keyword: "))
    # the partner comes from the first tier with candidates (other documents first) and is joined
    # by the most specific kind of link found in that tier (entity < multi-word keyword < word)
    classes: dict[str, list[int]] = {}
    for term in pool.terms[chunk]:
        for o in pool.chunks_of[term]:
            if o != chunk and o in pool.eligible:
                classes.setdefault(o, []).append(pool.link_rank(term)[0])
    tier = [o for o in classes if pool.units[o].document != pool.units[chunk].document] or list(classes)
    assert other in tier and min(classes[other]) == min(min(classes[o]) for o in tier)


def test_made_up_quote_drops_the_item(kb):
    llm = FakeLLM(lambda passages: {"question": "Who pays for rooftop solar panels?", "reference": "Nobody.", "quotes": ["this sentence appears in no chunk"]})
    rejected: Counter = Counter()
    items = generate_testset(kb.store, llm, per_persona=1, seed=1, hops=("single",), personas=["journalist"], rejected=rejected)
    assert items == [] and rejected["no_verified_quote"] == 3 and rejected["bad_quotes"] == 3 and len(llm.prompts) == 3


def test_real_substring_is_kept_with_exact_offsets(kb):
    llm = FakeLLM(lambda passages: {"question": "What does the plan say about funding?", "reference": "It funds it.", "quotes": [words(passages[0], 3, 8)]})
    items = generate_testset(kb.store, llm, per_persona=1, seed=3, hops=("single",), personas=["policymaker"])
    assert len(items) == 1
    item = items[0]
    assert item.id == "policymaker-single-1" and item.persona == "policymaker" and item.hop == "single" and len(item.chunks) == 1
    unit = read_units(kb.store, item.chunks)[0]
    (quote,) = item.quotes
    assert quote.chunk == unit.iri and unit.text[quote.start : quote.end] == quote.text
    assert " ".join(quote.text.split()) == words(unit.text, 3, 8)
    assert "Persona: " + PERSONAS["policymaker"] in llm.prompts[0]
    assert item.doc_ids and all(isinstance(d, str) and d for d in item.doc_ids)


def test_multi_hop_needs_a_quote_in_each_chunk(kb):
    both = FakeLLM(lambda p: {"question": "How do the two plans compare on support?", "reference": "Both help.", "quotes_1": [words(p[0], 0, 6)], "quotes_2": [words(p[1], 2, 6)]})
    items = generate_testset(kb.store, both, per_persona=1, seed=5, hops=("multi",), personas=["academic-researcher"])
    assert len(items) == 1 and len(items[0].chunks) == 2 and items[0].via
    assert {q.chunk for q in items[0].quotes} == set(items[0].chunks)
    assert "BOTH passages" in both.prompts[0] and "'quotes_2'" in both.prompts[0]
    one = FakeLLM(lambda p: {"question": "How do the two plans compare on support?", "reference": "Both help.", "quotes_1": [words(p[0], 0, 6)],
                             "quotes_2": ["words that passage 2 does not hold"]})
    rejected: Counter = Counter()
    assert generate_testset(kb.store, one, per_persona=1, seed=5, hops=("multi",), personas=["academic-researcher"], rejected=rejected) == []
    assert rejected["multi_hop_one_chunk"] == 3


def test_generation_is_seeded(kb):
    def run(seed):
        llm = FakeLLM(lambda p: {"question": f"What is said about {words(p[0], 0, 3)}?", "reference": "x", "quotes": [words(p[0], 0, 5)],
                                 "quotes_1": [words(p[0], 0, 5)], "quotes_2": [words(p[-1], 1, 5)]})
        return [i.chunks for i in generate_testset(kb.store, llm, per_persona=1, seed=seed, personas=["journalist", "general-citizen"])]

    assert run(7) == run(7) and run(7) != run(8)


# --- duplicates -----------------------------------------------------------------------------------------
def test_duplicate_questions_are_rejected(kb):
    llm = FakeLLM(lambda p: {"question": "What support exists for heat pumps?", "reference": "Grants.", "quotes": [words(p[0], 0, 6)]})
    rejected: Counter = Counter()
    items = generate_testset(kb.store, llm, per_persona=1, seed=2, hops=("single",), personas=["journalist", "general-citizen"], rejected=rejected)
    assert [i.persona for i in items] == ["journalist"] and rejected["duplicate"] == 3


def test_deduplicate_exact_and_near():
    def item(i, text):
        return GeneratedQuestion(str(i), "journalist", "single", text, "r", (Quote("a b c", "c", 0, 5),), ("c",), ("d",))

    items = [item(1, "What fines does the GDPR set?"), item(2, "what fines does the GDPR set"), item(3, "Which fines does the GDPR set?"),
             item(4, "Who enforces the AI Act?")]
    kept, dropped = deduplicate(items, near=0.7)
    assert [i.id for i in kept] == ["1", "4"] and dropped == 2
    assert not is_duplicate("Which fines does the GDPR set?", ["Who enforces the AI Act?"])


# --- statistics and files --------------------------------------------------------------------------------
def _items():
    q = (Quote("funding is provided", "https://x/c1", 4, 23),)
    return [
        GeneratedQuestion("journalist-single-1", "journalist", "single", "Who provides funding?", "The ministry does.", q, ("https://x/c1",), ("national-solar-plan",)),
        GeneratedQuestion("journalist-multi-1", "journalist", "multi", "How do wind and solar funding compare?", "Both are funded.", q * 2,
                          ("https://x/c1", "https://x/c2"), ("national-solar-plan", "westmark-wind-guidelines"), "keyword: funding"),
        GeneratedQuestion("policymaker-single-1", "policymaker", "single", "What must Member States do?", "Report.", q, ("https://x/c1",), ("national-solar-plan",)),
    ]


def test_stats_per_persona_and_hop():
    stats = persona_stats(_items(), Counter(duplicate=2, no_verified_quote=1, bad_quotes=0))
    assert stats["total"] == 3 and stats["by_hop"] == {"single": 2, "multi": 1}
    assert stats["counts"]["journalist"] == {"single": 1, "multi": 1} and stats["counts"]["general-citizen"] == {"single": 0, "multi": 0}
    assert list(stats["counts"]) == list(PERSONAS) and stats["rejected"] == {"duplicate": 2, "no_verified_quote": 1}
    assert stats["documents"] == 2 and stats["quotes_per_question"] == pytest.approx(4 / 3)
    table = stats_markdown(stats)
    assert "| journalist | 1 | 1 | 2 |" in table and "| **all** | 2 | 1 | 3 |" in table and "duplicate 2" in table


def test_jsonl_round_trip_through_the_harness_loader(tmp_path):
    path = write_testset(_items(), tmp_path / "set.jsonl")
    assert read_testset(path) == _items()
    dataset = load_jsonl(path, CORPUS)
    assert dataset.corpus_paths == (CORPUS,) and len(dataset.questions) == 3
    q = dataset.questions[1]
    assert q.id == "journalist-multi-1" and q.question == "How do wind and solar funding compare?" and q.answers == ("Both are funded.",)
    assert q.gold_passage_ids == ("national-solar-plan", "westmark-wind-guidelines") and q.gold_contexts == ("funding is provided",) * 2
    assert q.kind == "multi" and q.answerable
    row = json.loads(path.read_text().splitlines()[1])
    assert row["persona"] == "journalist" and row["hop"] == "multi" and row["quotes"][0] == {"text": "funding is provided", "chunk": "https://x/c1", "start": 4, "end": 23}


def test_cli_generate(kb, tmp_path, monkeypatch):
    from policykb.cli import cli
    from spr.eval import personas

    reply = lambda p: {"question": f"What does it say on {words(p[0], 1, 4)}?", "reference": "x", "quotes": [words(p[0], 0, 6)],  # noqa: E731
                       "quotes_1": [words(p[0], 0, 6)], "quotes_2": [words(p[-1], 0, 6)]}
    real = personas.generate_file
    monkeypatch.setattr(personas, "generate_file", lambda *a, **kw: real(*a, **{**kw, "llm": FakeLLM(reply)}))
    out, stats = tmp_path / "set.jsonl", tmp_path / "stats.json"
    result = CliRunner().invoke(cli, ["eval", "generate", "--kb", str(kb.config.kb_dir), "--out", str(out), "--per-persona", "1",
                                      "--personas", "journalist,policymaker", "--seed", "4", "--stats", str(stats)])
    assert result.exit_code == 0, result.output
    assert "| journalist | 1 | 1 | 2 |" in result.output and "wrote 4 questions" in result.output
    assert [q.id for q in read_testset(out)] == ["journalist-single-1", "journalist-multi-1", "policymaker-single-1", "policymaker-multi-1"]
    assert json.loads(stats.read_text())["total"] == 4
    bad = CliRunner().invoke(cli, ["eval", "generate", "--kb", str(kb.config.kb_dir), "--out", str(out), "--personas", "pirate"])
    assert bad.exit_code != 0 and "unknown persona" in bad.output


# --- the real model ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_smollm2_generation_meets_the_contract(kb):
    from core.config import LLMConfig
    from core.llm import make_llm

    llm = make_llm(LLMConfig(model_path=TEST_LLM, max_tokens=256), None)
    rejected: Counter = Counter()
    items = generate_testset(kb.store, llm, per_persona=1, seed=0, personas=["general-citizen"], attempts=1, max_words=120, rejected=rejected)
    # one attempt per slot: each of the two slots gave an item or one rejection
    assert len(items) + sum(v for k, v in rejected.items() if k != "bad_quotes") == 2
    for item in items:
        units = {u.iri: u for u in read_units(kb.store, item.chunks)}
        assert item.quotes and len(item.chunks) == (2 if item.hop == "multi" else 1)
        for q in item.quotes:
            assert units[q.chunk].text[q.start : q.end] == q.text and len(q.text.split()) >= 3
        if item.hop == "multi":
            assert {q.chunk for q in item.quotes} == set(item.chunks)
