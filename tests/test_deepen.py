"""Looking past the top k before abstaining (spr/deepen.py): what a deeper look adds, and when it
adds nothing. Pure: real contexts packed by spr.fuse, the real answerability check."""

from __future__ import annotations

from spr.deepen import MAX_ADDED, deepen
from spr.fuse import fuse
from spr.generate import ExtractiveGenerator, check_answerable
from spr.records import ChunkRef, Evidence, Retrieval, Trace
from spr.scoring import LexicalScorer


def _chunk(n: int, title: str, text: str) -> Evidence:
    ref = ChunkRef(f"urn:c{n}", f"urn:d{n}", title, 0, len(text), text)
    return Evidence(kind="chunk", text=text, score=1.0 / n, source="hybrid", chunk=ref)


def pack(evidence):
    return fuse(evidence, 2000)


SCOPE = _chunk(1, "Cyber Resilience Act", "Manufacturers shall report actively exploited vulnerabilities to the CSIRT designated as coordinator.")
PENALTIES = _chunk(2, "Cyber Resilience Act", "Member States shall lay down the rules on penalties applicable to infringements by economic operators.")
DEADLINE = _chunk(3, "Cyber Resilience Act", "Manufacturers shall submit an early warning notification of an actively exploited vulnerability within 24 hours of becoming aware of it.")
OTHER = _chunk(4, "Cyber Resilience Act", "Importers shall inform the market surveillance authority within 10 days of a change of address.")
MICA = _chunk(5, "Markets in Crypto-Assets (MiCA)", "Crypto-asset service providers shall report incidents to the competent authority.")

SCORER = LexicalScorer(0.2)  # weighted word overlap with the question: real, and needs no model
QUESTION = "Within how many hours must manufacturers report an actively exploited vulnerability?"


def _shallow(*evidence: Evidence) -> tuple[Retrieval, object]:
    found = Retrieval(tuple(evidence), Trace(note="first stage"))
    return found, check_answerable(QUESTION, pack(list(found.evidence)))


def test_a_deeper_passage_that_states_the_asked_value_is_added_after_the_top_k():
    found, verdict = _shallow(SCOPE, PENALTIES)
    assert not verdict.answerable and verdict.reason == "no sentence states a duration"
    deep = Retrieval((SCOPE, PENALTIES, MICA, DEADLINE))
    widened = deepen(QUESTION, found, verdict, deep, pack, SCORER)
    assert widened is not None and widened.added == (4,)  # its rank in the deeper retrieval
    assert [e.key for e in widened.found.evidence] == [SCOPE.key, PENALTIES.key, DEADLINE.key]
    assert widened.found.trace.note.startswith("first stage; looked deeper: passage #4 of the top 4 added")
    assert "no sentence states a duration" in widened.found.trace.note
    draft = ExtractiveGenerator(LexicalScorer(0.2), max_facts=0, max_sentences=1, check=True).generate(QUESTION, widened.context)
    assert not draft.abstained and "24 hours" in draft.text and draft.citations[0].chunk == DEADLINE.chunk.iri


def test_a_value_in_a_sentence_unrelated_to_the_question_is_not_added():
    # OTHER states a deadline (importers inform of a new address within 10 days): the type check alone
    # would accept it, but a deeper passage must earn its place with a relevant sentence.
    found, verdict = _shallow(SCOPE, PENALTIES)
    assert check_answerable(QUESTION, pack([SCOPE, PENALTIES, OTHER])).answerable
    assert deepen(QUESTION, found, verdict, Retrieval((SCOPE, PENALTIES, OTHER, MICA)), pack, SCORER) is None


def test_nothing_is_added_when_the_deeper_passages_cannot_hold_the_answer_either():
    found, verdict = _shallow(SCOPE, PENALTIES)
    assert deepen(QUESTION, found, verdict, Retrieval((SCOPE, PENALTIES, MICA)), pack, SCORER) is None
    assert deepen(QUESTION, found, verdict, Retrieval((SCOPE, PENALTIES)), pack, SCORER) is None  # nothing deeper


def test_a_question_whose_names_are_missing_or_that_asks_no_value_is_not_deepened():
    # A missing name or number is found somewhere in a corpus more often than not (SQuAD 2.0's
    # unanswerable questions name exactly such a detail): the premise check's abstention stands.
    found = Retrieval((SCOPE, PENALTIES))
    question = "Within how many hours must crypto-asset service providers report incidents under MiCA?"
    verdict = check_answerable(question, pack(list(found.evidence)))
    assert verdict.reason == "the evidence never mentions: mica"
    mica = _chunk(6, "Markets in Crypto-Assets (MiCA)", "Crypto-asset service providers shall report incidents under MiCA within 4 hours.")
    assert check_answerable(question, pack([SCOPE, PENALTIES, mica])).answerable
    assert deepen(question, found, verdict, Retrieval((SCOPE, PENALTIES, mica)), pack, SCORER) is None
    no_value = "Must crypto-asset service providers report incidents under MiCA?"
    assert deepen(no_value, found, check_answerable(no_value, pack(list(found.evidence))), Retrieval((SCOPE, PENALTIES, mica)), pack, SCORER) is None


def test_at_most_max_added_passages_come_back_in_their_deeper_order():
    found, verdict = _shallow(SCOPE, PENALTIES)
    more = [_chunk(n, "Cyber Resilience Act", f"Manufacturers shall report an actively exploited vulnerability within {n} hours.") for n in range(6, 10)]
    widened = deepen(QUESTION, found, verdict, Retrieval((SCOPE, OTHER, MICA, *more)), pack, SCORER)
    assert widened is not None and widened.added == (4, 5) and len(widened.added) == MAX_ADDED
    assert [e.key for e in widened.found.evidence] == [SCOPE.key, PENALTIES.key, more[0].key, more[1].key]
    assert check_answerable(QUESTION, widened.context).answerable
