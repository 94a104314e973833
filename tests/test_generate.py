"""Answer generation from a fused context: extractive (lexical scoring here) and LLM post-processing.

The LLM tests use a scripted model: a real subclass of ``core.llm.LLM`` whose ``_generate``
returns a fixed reply, so the model layer's accounting (one call, usage) runs for real while the
citation handling is under test. The real embedded model runs in tests/test_qa.py.
"""

from __future__ import annotations

from dataclasses import replace

from support.llms import ScriptedLLM

from core.usage import UsageTracker
from spr.fuse import fuse
from spr.generate import ExtractiveGenerator, cited_ids, content_words, lexical_scores, renumber
from spr.llm_answer import LLMGenerator
from spr.records import ABSTAIN, ChunkRef, Evidence, Fact
from spr.scoring import LexicalScorer
from spr.verbalize import verbalize

B = "https://example.org/"
ACT_TEXT = (
    "## Article 5 Penalties\n\nAn operator who fails to register an installation shall pay a fine of up to "
    "EUR 50,000. The National Energy Bureau imposes the fine by administrative decision."
)
ACT = ChunkRef(B + "chunk/act", B + "doc/act", "Renewable Energy Act", 900, 900 + len(ACT_TEXT), ACT_TEXT)
PLAN_TEXT = "The Plan sets a target of 12 GW of installed solar capacity by 31 December 2030."
PLAN = ChunkRef(B + "chunk/plan", B + "doc/plan", "National Solar Plan", 40, 40 + len(PLAN_TEXT), PLAN_TEXT)


def passage(c: ChunkRef) -> Evidence:
    return Evidence("chunk", c.text, 0.8, "k", chunk=c)


def issues_fact(c: ChunkRef) -> Evidence:
    f = Fact(B + "bureau", B + "issues", B + "plan", "National Energy Bureau", "issues", "National Solar Plan", graphs=(c.iri,))
    return Evidence("triple", verbalize(f), 1.0, "spr", chunk=c, fact=f)


CONTEXT = fuse([issues_fact(PLAN), passage(ACT), passage(PLAN)], 1000)


def test_content_words_and_lexical_scores():
    assert content_words("Who is registering the installations?") == ["register", "installation"]
    scores = lexical_scores("fine for registering installations", ["A fine applies to registered installations.", "Solar targets."])
    assert scores[0] > 0.9 and scores[1] == 0.0


def test_extractive_answer_quotes_the_best_sentence_with_document_offsets():
    draft = ExtractiveGenerator(LexicalScorer(0.3), max_facts=3, max_sentences=2).generate("How much is the fine for failing to register an installation?", CONTEXT)
    assert not draft.abstained
    first = draft.citations[0]
    assert "EUR 50,000" in first.quote and first.chunk == ACT.iri and first.title == "Renewable Energy Act"
    # Offsets are document offsets: the chunk's start plus the sentence's place in the chunk.
    assert ACT.text[first.start - ACT.start : first.end - ACT.start] == first.quote
    assert draft.text.startswith(f"{first.quote} [{first.id}]")
    assert "Article 5" not in draft.text  # headings are not statements


def test_regression_each_quoted_sentence_of_one_passage_cites_its_own_span():
    """Two sentences of one chunk shared "[1]", whose quote was the first sentence only."""
    draft = ExtractiveGenerator(LexicalScorer(0.1), max_facts=0, max_sentences=2).generate(
        "Who imposes the fine on an operator who fails to register an installation?", CONTEXT
    )
    assert len(draft.citations) == 2 and len({c.id for c in draft.citations}) == 2
    for c in draft.citations:
        assert c.chunk == ACT.iri and ACT.text[c.start - ACT.start : c.end - ACT.start] == c.quote
        assert f"{c.quote} [{c.id}]" in draft.text  # each sentence is followed by its own citation


def test_extractive_answer_does_not_quote_the_title_line():
    # a passage that opens with its document's title (HotpotQA, Wikipedia): the title answers nothing
    text = "Scott Howell (political consultant)\n\nHerbert Weston Scott Howell III is an American political consultant, whose clients include Rudy Giuliani."
    howell = ChunkRef(B + "chunk/howell", B + "doc/howell", "Scott Howell (political consultant)", 0, len(text), text)
    draft = ExtractiveGenerator(LexicalScorer(0.1), max_facts=3, max_sentences=2).generate(
        "Scott Howell is a consultant who has worked with which mayor?", fuse([passage(howell)], 1000)
    )
    assert draft.text.startswith("Herbert Weston Scott Howell III") and "(political consultant). [1]" not in draft.text


def test_extractive_answer_puts_relevant_facts_first_and_cites_their_chunk():
    draft = ExtractiveGenerator(LexicalScorer(0.3), max_facts=3, max_sentences=2).generate("Who issues the National Solar Plan?", CONTEXT)
    assert draft.text.startswith("National Energy Bureau issues National Solar Plan. [1]")
    plan = next(c for c in draft.citations if c.id == 1)
    assert plan.chunk == PLAN.iri and plan.quote == PLAN_TEXT  # the fact's supporting sentence


def test_a_confident_fact_answers_whatever_its_wording():
    """The parse, linking and query vouch for a confident fact; a question worded unlike its
    verbalization ("adopted" for "issues") still gets it — a fact under the bar is scored like a sentence."""
    def context(confidence: float):
        return fuse([replace(issues_fact(PLAN), confidence=confidence), passage(ACT)], 1000)

    question = "Which authority adopted it?"
    sure = ExtractiveGenerator(LexicalScorer(0.3), max_facts=3, max_sentences=2, fact_confidence=1.0).generate(question, context(1.0))
    assert sure.text.startswith("National Energy Bureau issues National Solar Plan. [1]")
    unsure = ExtractiveGenerator(LexicalScorer(0.3), max_facts=3, max_sentences=2, fact_confidence=1.0).generate(question, context(0.5))
    assert "issues National Solar Plan" not in unsure.text


def test_extractive_answer_abstains_when_nothing_is_relevant():
    draft = ExtractiveGenerator(LexicalScorer(0.3), max_facts=3, max_sentences=2).generate("What is the capital of France?", CONTEXT)
    assert draft.text == ABSTAIN and draft.abstained and draft.citations == ()
    empty = ExtractiveGenerator(LexicalScorer(0.3), max_facts=3, max_sentences=2).generate("How much is the fine?", fuse([], 500))
    assert empty.text == ABSTAIN


def test_a_sentence_stating_the_asked_value_answers_a_question_worded_unlike_it():
    """No sentence reaches the threshold, but one states the asked kind of value (a sum) in a
    passage on the question's subject: the check answers with it. A question asking for no
    value, worded the same way, is still declined."""
    generator = ExtractiveGenerator(LexicalScorer(0.5), max_facts=3, max_sentences=2, check=True)
    question = "I forgot to register my rooftop panels. How much will that cost me?"
    context = fuse([passage(ACT)], 1000)
    assert max(LexicalScorer(0.5).score(question, ACT.text.split(". "))) < 0.5
    draft = generator.generate(question, context)
    assert not draft.abstained and "EUR 50,000" in draft.text
    declined = generator.generate("I forgot to register my rooftop panels. Who will tell me?", context)
    assert declined.abstained
    unchecked = ExtractiveGenerator(LexicalScorer(0.5), max_facts=3, max_sentences=2).generate(question, context)
    assert unchecked.abstained  # without the check, the threshold decides alone


def run_llm(reply: str, context=CONTEXT):
    tracker = UsageTracker()
    llm = ScriptedLLM(reply, tracker)
    return LLMGenerator(llm, max_tokens=64, require_citations=True).generate("How much is the fine?", context), tracker, llm


def test_cited_ids_understands_the_usual_forms():
    assert cited_ids("A [2]. B [1, 3]. C [3][4]. D [x] [12]") == [2, 1, 3, 4, 12]


def test_llm_reply_with_citations_keeps_valid_ones_and_drops_invented_ids():
    draft, tracker, llm = run_llm("The fine is up to EUR 50,000 [2][9].")
    assert tracker.totals.calls == 1 and len(llm.requests) == 1
    prompt = llm.requests[0].messages[-1][1]
    assert "[2] (Renewable Energy Act)" in prompt and "Question: How much is the fine?" in prompt
    assert draft.text == "The fine is up to EUR 50,000 [2]." and not draft.abstained
    assert [c.id for c in draft.citations] == [2]
    assert "EUR 50,000" in draft.citations[0].quote


def test_llm_abstention_is_normalized():
    draft, _, _ = run_llm("the documents do not say")
    assert draft.text == ABSTAIN and draft.abstained and not draft.citations


def test_wrapped_or_empty_llm_abstention_is_one_too():
    # The same rule as the metrics' (spr.records.is_abstention): the words, not the exact text.
    for reply in ('Answer: "The documents do not say."', "", "  \n"):
        draft, _, _ = run_llm(reply)
        assert draft.text == ABSTAIN and draft.abstained and not draft.draft, reply


def test_uncited_reply_is_attributed_when_evidence_supports_it():
    draft, _, _ = run_llm("An operator who fails to register pays a fine of up to EUR 50,000.")
    assert draft.attributed and not draft.abstained
    assert draft.text.endswith("[2].") and draft.citations[0].chunk == ACT.iri


def test_uncited_unsupported_reply_is_withheld():
    draft, _, _ = run_llm("Nuclear plants are banned in Nordland since 1980.")
    assert draft.text == ABSTAIN and draft.abstained
    assert draft.draft == "Nuclear plants are banned in Nordland since 1980."


def test_no_evidence_means_no_model_call():
    draft, tracker, _ = run_llm("anything", context=fuse([], 500))
    assert draft.text == ABSTAIN and tracker.totals.calls == 0


def test_renumber_makes_ids_follow_first_use():
    draft, _, _ = run_llm("The fine is up to EUR 50,000 [2]. Solar targets apply too [1, 2].")
    assert [c.id for c in draft.citations] == [2, 1]
    again = renumber(draft)
    assert again.text == "The fine is up to EUR 50,000 [1]. Solar targets apply too [2, 1]."
    assert [(c.id, c.chunk) for c in again.citations] == [(1, ACT.iri), (2, PLAN.iri)]


def test_focus_cuts_passages_to_their_relevant_sentences_and_keeps_exact_sources():
    from spr.llm_answer import focus

    long_text = " ".join(f"Clause {i} concerns the heating of buildings and boilers." for i in range(30)) + " " + ACT_TEXT.split("\n\n")[1]
    long_act = ChunkRef(B + "chunk/long", B + "doc/act", "Renewable Energy Act", 0, len(long_text), long_text)
    context = fuse([passage(long_act), passage(PLAN)], 2000)
    focused = focus("How much is the fine for failing to register an installation?", context, LexicalScorer(0.0), 60)
    assert focused.tokens <= 60 + 2 * len(focused.pieces) and focused.tokens < context.tokens
    act_piece = next(p for p in focused.pieces if p.evidence.chunk == long_act)
    assert "EUR 50,000" in act_piece.text and act_piece.text.count("Clause") < 5
    assert focused.sources[act_piece.cid].text == long_text  # citations still quote the whole chunk
    assert focus("anything", context, LexicalScorer(0.0), 0) is context


def test_focus_takes_the_sentences_that_state_the_asked_value_first():
    # The value-stating clause shares few words with the question; by score alone its wordy
    # neighbours fill the budget. The answerability check's answers (prefer) go in first.
    from spr.generate import check_answerable
    from spr.llm_answer import focus

    text = (
        "The operator shall register every installation and keep the register of installations up to date. "
        "The operator shall publish the register of installations and notify each installation to the register. "
        "This is due within 30 days of commissioning."
    )
    chunk = ChunkRef(B + "chunk/reg", B + "doc/act", "Renewable Energy Act", 0, len(text), text)
    context = fuse([passage(chunk)], 2000)
    question = "Within how many days must the operator register an installation?"
    verdict = check_answerable(question, context)
    assert verdict.answerable and verdict.answers == ("This is due within 30 days of commissioning.",)
    plain = focus(question, context, LexicalScorer(0.0), 40)
    assert "30 days" not in plain.pieces[0].text
    preferred = focus(question, context, LexicalScorer(0.0), 40, prefer=verdict.answers)
    assert "30 days" in preferred.pieces[0].text and preferred.tokens <= 40 + 2


def test_extractive_answer_shows_sentences_without_source_markup_and_cites_the_exact_source():
    text = "#### Article 3\n\nThe Fund shall support investments in renewable energy under Directive (EU) 2018/2001 ([^E0003]), including **energy storage**."
    chunk = ChunkRef(B + "chunk/md", B + "doc/md", "Fund Regulation", 0, len(text), text)
    draft = ExtractiveGenerator(LexicalScorer(0.2), max_facts=0, max_sentences=2).generate(
        "Does the Fund support investments in renewable energy?", fuse([passage(chunk)], 500)
    )
    assert draft.text == "The Fund shall support investments in renewable energy under Directive (EU) 2018/2001, including energy storage. [1]"
    assert draft.citations[0].quote == text[text.index("The Fund") :]  # the citation quotes the source as it is


def test_a_sentence_that_points_back_is_quoted_after_the_sentence_before_it():
    # probe-eu-021 was answered "This period shall not exceed five years after its publication."
    # alone: which period, the reader could not tell.
    text = (
        "Competent authorities shall keep a published penalty on their website only for the period necessary. "
        "Penalties are published without undue delay. This period shall not exceed five years after its publication."
    )
    chunk = ChunkRef(B + "chunk/dora", B + "doc/dora", "DORA Article 54", 0, len(text), text)
    draft = ExtractiveGenerator(LexicalScorer(0.3), max_facts=0, max_sentences=1).generate(
        "Which period shall not exceed five years after its publication?", fuse([passage(chunk)], 1000)
    )
    assert draft.text.startswith("Penalties are published without undue delay. [1] This period shall not exceed five years")
    assert [c.quote for c in draft.citations][1].startswith("This period")
    # the act pointing at itself needs no sentence before it
    act = "The Directive sets rules. This Directive applies from 1 January 2026."
    chunk = ChunkRef(B + "chunk/d", B + "doc/d", "Directive", 0, len(act), act)
    draft = ExtractiveGenerator(LexicalScorer(0.3), max_facts=0, max_sentences=1).generate("From when does the Directive apply?", fuse([passage(chunk)], 1000))
    assert draft.text.startswith("This Directive applies from 1 January 2026.")
