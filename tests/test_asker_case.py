"""A question that tells the asker's case first ("We're an insurance brokerage with 60 staff. Does
DORA apply to us?"): the case is told in the asker's words, which the law does not use, so those
words do not count against a sentence when no candidate has them (spr/asking.py case_words,
spr/lexical.py), and the names it states are no premises the evidence must mention
(spr/answerable.py). yesno-eu false abstention 0.278 → 0.056, actors-eu 0.188 → 0.062 with mpnet
(docs/answers.md)."""

from __future__ import annotations

from spr import answerable
from spr.asking import asked_part, case_words
from spr.fuse import ContextPiece, FusedContext
from spr.generate import ExtractiveGenerator
from spr.lexical import lexical_scores
from spr.records import ChunkRef, Evidence
from spr.scoring import LexicalScorer

CASE = "A former customer has sued our shop over a delivery last month and wants us gone from his life. "
QUESTION = CASE + "Must we erase his personal data?"
LAW = "The controller shall erase personal data without undue delay where the data subject withdraws consent."


def _context(text: str) -> FusedContext:
    chunk = ChunkRef("urn:c1", "urn:d1", "GDPR Article 17", 0, len(text), text)
    evidence = Evidence(kind="chunk", text=text, score=1.0, source="vector", chunk=chunk)
    piece = ContextPiece(cid=1, evidence=evidence, text=text, tokens=len(text.split()))
    return FusedContext((piece,), {1: chunk}, piece.tokens, 1000)


def test_the_case_words_are_those_only_the_case_has():
    assert {"former", "customer", "sued", "shop", "month"} <= case_words(QUESTION)
    assert not {"eras", "personal", "data"} & case_words(QUESTION)  # the asking sentence's words are not the case's
    assert case_words("Must we erase his personal data?") == set()  # no case told


def test_case_words_no_candidate_has_do_not_lower_the_score():
    plain = lexical_scores(QUESTION, [LAW, "Fines apply."])
    spared = lexical_scores(QUESTION, [LAW, "Fines apply."], case_words(QUESTION))
    assert spared[0] > 2 * plain[0] and spared[1] == plain[1] == 0.0
    # a case word that a candidate has still counts for it
    mentions = "A data subject who is a former customer may request erasure."
    scores = lexical_scores(QUESTION, [LAW, mentions], case_words(QUESTION))
    assert scores[1] > lexical_scores("Must we erase his personal data?", [LAW, mentions])[1]


def test_a_case_told_question_is_answered_not_declined():
    generator = ExtractiveGenerator(LexicalScorer(0.3), max_facts=0, max_sentences=1, check=True)
    draft = generator.generate(QUESTION, _context(LAW))
    assert not draft.abstained and draft.text.startswith("The controller shall erase personal data")
    # the same sentence does not answer a question whose *asking* words it lacks
    other = generator.generate(CASE + "Can we charge him a fee for the copy of his records?", _context(LAW))
    assert other.abstained


def test_a_name_only_the_case_states_is_no_premise():
    lead = answerable.Passage(("GDPR Article 56", "Competence of the lead supervisory authority"),
                              ("The supervisory authority of the main establishment of the controller shall be competent to act as lead supervisory authority.",))
    told = ("We're an online retailer with our EU head office in Dublin and warehouses in France and Poland. "
            "Which data protection authority leads for our cross-border processing?")
    assert answerable.check(told, [lead]).answerable  # Dublin, France, Poland are the asker's
    asked = "Which data protection authority in Dublin leads for our cross-border processing?"
    declined = answerable.check(asked, [lead])
    assert not declined.answerable and declined.reason == "the evidence never mentions: dublin"


def test_a_case_ends_after_an_acronym_too():
    assert asked_part("We sell all over the EU. Which authority do we deal with?") == "Which authority do we deal with?"
    assert asked_part("Gilt das z. B. für Kessel nach Art. 5?") == "Gilt das z. B. für Kessel nach Art. 5?"


def test_regression_an_end_the_case_tells_is_not_the_asked_end():
    # lay-eu-022 was declined with "no sentence stating a time says that anything ends": the
    # financial year that "ends on 31 December" is the asker's, the question asks a deadline.
    rule = "Undertakings shall publish the annual report within 12 months after the balance sheet date, in 2026."
    passage = answerable.Passage((rule, "CSRD Article 30"), (rule,))
    verdict = answerable.check("Our financial year ends on 31 December. When must we publish the annual report?", [passage])
    assert verdict.answerable, verdict.reason
    assert not answerable.check("When does the annual report end?", [passage]).answerable  # an asked end still needs one
