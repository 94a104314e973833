"""Citation recall and precision (ALCE) of hand-made answers: the support check is the real one
(spr.verify.SupportChecker with the MiniLM test embedder), the judge variant runs the real
LLM.yes_probability path over a rule-following stand-in model, and once over the SmolLM2 GGUF."""

from __future__ import annotations

import json
import math
import re

import pytest

from core.embed import SentenceTransformerEmbedder
from core.llm.base import LLM, Completion
from core.usage import Usage
from spr.eval.citations import citation_metrics, citation_values, cited_evidence, plain_text
from spr.eval.judge import Judge, LLMSupport, support_prompt
from spr.records import Answer, ChunkRef, Citation, Evidence, Fact, Trace
from spr.verify import SupportChecker, attach_markers

FINE = "An operator who fails to register an installation shall pay a fine of up to EUR 50,000. The Bureau keeps the register."
SOLAR = "The national government will provide EUR 800 million for the period 2025 to 2030."
CLAIM = "An operator who fails to register pays a fine of up to EUR 50,000."


def chunk(iri: str, text: str) -> Evidence:
    ref = ChunkRef(iri, f"urn:doc:{iri}", iri, 0, len(text), text)
    return Evidence("chunk", text, 0.5, "vector", chunk=ref)


def cite(cid: int, iri: str, quote: str = "") -> Citation:
    return Citation(cid, iri, f"urn:doc:{iri}", iri, 0, len(quote), quote)


EVIDENCE = (chunk("c-fine", FINE), chunk("c-solar", SOLAR))


def answer(text: str, *citations: Citation, abstained: bool = False, evidence=EVIDENCE) -> Answer:
    return Answer("q", text, "vector", "extractive", citations=citations, evidence=evidence, trace=Trace(), abstained=abstained)


# --- reading the answer (pure) -----------------------------------------------------------------------
def test_markers_are_taken_out_for_text_metrics():
    assert plain_text("Fines reach 4 % [2]. They apply yearly. [1][3] Members report [1, 2]. X [unsupported].") == (
        "Fines reach 4 %. They apply yearly. Members report. X."
    )


def test_a_marker_after_the_full_stop_stays_with_its_sentence():
    # extractive answers write "Sentence. [n]": the marker belongs to the sentence before it
    assert attach_markers("They give EUR 800 million. [2] It runs to 2030. [1][3]") == "They give EUR 800 million [2]. It runs to 2030 [1][3]."
    assert attach_markers("Fines reach 4 % [2]. Q? [1]") == "Fines reach 4 % [2]. Q [1]?"


def test_cited_evidence_is_the_chunk_with_its_facts_else_the_quote():
    fact = Fact("urn:s", "urn:p", "50000", "operator", "fine", "EUR 50,000", True)
    triple = Evidence("triple", "Operator has fine EUR 50,000.", 1.0, "spr", chunk=EVIDENCE[0].chunk, fact=fact)
    got = cited_evidence(answer(
        "x [1][2][3][4].", cite(1, "c-fine", "quote 1"), cite(2, "c-gone", "the quoted sentence"), cite(3, "", ""), cite(4, "c-solar"),
        evidence=(*EVIDENCE, triple),
    ))
    # each chunk under its title (here its IRI), as the generator showed it; 3: a source without text
    assert got == {1: "c-fine\n" + FINE + "\nOperator has fine EUR 50,000.", 2: "the quoted sentence", 4: "c-solar\n" + SOLAR}


# --- the support check of the generator ----------------------------------------------------------------
@pytest.fixture(scope="module")
def checker() -> SupportChecker:
    return SupportChecker(SentenceTransformerEmbedder("all-MiniLM-L6-v2"), 0.5)


def scores(a: Answer, check: SupportChecker) -> tuple[float | None, float | None]:
    s = citation_metrics(a, check)
    return s["citation_recall"], s["citation_precision"]


@pytest.mark.slow
def test_supported_and_unsupported_claims(checker):
    assert scores(answer(CLAIM[:-1] + " [1].", cite(1, "c-fine")), checker) == (1.0, 1.0)
    assert scores(answer(f"{CLAIM} [1]", cite(1, "c-fine")), checker) == (1.0, 1.0)  # the marker after the full stop
    # a changed figure is not supported by the same evidence
    assert scores(answer(CLAIM.replace("50,000", "90,000") + " [1]", cite(1, "c-fine")), checker) == (0.0, 0.0)
    # the right statement cited to the wrong source
    assert scores(answer(f"{CLAIM} [2]", cite(2, "c-solar")), checker) == (0.0, 0.0)
    # two sentences supported, one not: recall 2/3; the third's citation is not needed: 2/3
    text = "The government provides EUR 800 million. [2] It runs from 2025 to 2030. [2] Cats can fly. [1]"
    r, p = scores(answer(text, cite(2, "c-solar"), cite(1, "c-fine")), checker)
    assert (r, p) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    # a sentence the generator marked [unsupported] (policy "mark") is an uncited claim
    assert scores(answer(CLAIM[:-1] + " [1]. The sun is green. [unsupported]", cite(1, "c-fine")), checker) == (0.5, 1.0)


@pytest.mark.slow
def test_needless_and_dangling_citations_cost_precision_only(checker):
    # [2] adds nothing to the claim [1] supports alone
    assert scores(answer(CLAIM[:-1] + " [1][2].", cite(1, "c-fine"), cite(2, "c-solar")), checker) == (1.0, 0.5)
    # [7] points at no evidence: counted, never needed
    assert scores(answer(CLAIM[:-1] + " [1][7].", cite(1, "c-fine")), checker) == (1.0, 0.5)
    # only a dangling marker: nothing supports the claim
    assert scores(answer(CLAIM[:-1] + " [7].", cite(1, "c-fine")), checker) == (0.0, 0.0)


@pytest.mark.slow
def test_abstentions_and_uncited_answers(checker):
    assert scores(answer("The documents do not say.", abstained=True), checker) == (None, None)
    assert scores(answer('Answer: "The documents do not say."'), checker) == (None, None)  # the text is the abstention
    # the project's one rule (spr.records.is_abstention): an answer that says it is an abstention
    assert scores(answer(f"{CLAIM} [1] The documents do not say who collects it.", cite(1, "c-fine")), checker) == (None, None)
    assert scores(answer(""), checker) == (None, None)
    # claims without any citation: unsupported, and (as in ALCE) precision 0 rather than undefined
    assert scores(answer(CLAIM), checker) == (0.0, 0.0)


# --- the judge as the support check ----------------------------------------------------------------------
def _judge_reads(prompt: str) -> tuple[str, str]:
    evidence = prompt.split("Evidence:\n", 1)[1].split("\n\nStatement: ", 1)[0]
    statement = prompt.split("\n\nStatement: ", 1)[1].split("\nIs the statement", 1)[0]
    return evidence, statement


def _words_present(prompt: str) -> bool:
    evidence, statement = _judge_reads(prompt)
    have = set(re.findall(r"\w+", evidence.lower()))
    return all(w in have for w in re.findall(r"\w+", statement.lower()) if len(w) > 2)


class WordJudge(LLM):
    """A stand-in judge that follows one rule: yes iff every word (3+ letters, and numbers) of the
    statement occurs in the evidence. Answers through the real yes_probability path (logprobs) or,
    with ``logprobs=False``, as JSON through complete_json."""

    def __init__(self, logprobs: bool = True):
        super().__init__("word-judge")
        self.logprobs = logprobs
        self.prompts: list[str] = []

    def _first_token_logprobs(self, request):
        if not self.logprobs:
            return super()._first_token_logprobs(request)
        prompt = request.messages[-1][1]
        self.prompts.append(prompt)
        p = 0.9 if _words_present(prompt) else 0.2
        return {" Yes": math.log(p), " No": math.log(1 - p)}, Usage(10, 1)

    def _generate(self, request):
        prompt = request.messages[-1][1]
        self.prompts.append(prompt)
        return Completion(json.dumps({"supported": int(_words_present(prompt))}), Usage(10, 3), False, self.model_id)


def test_support_prompt_strips_markup_and_cuts():
    prompt = support_prompt("Fines reach 4 %.", ["#### Art. 5\nFines reach 4 % of turnover.", "one two three four"], max_words=3)
    assert _judge_reads(prompt) == ("Art. 5 Fines …\n\none two three …", "Fines reach 4 %.")


@pytest.mark.parametrize("logprobs", [True, False])
def test_judged_citations_follow_the_judges_verdicts(logprobs):
    llm = WordJudge(logprobs)
    judge = Judge(llm, embedder=None)  # type: ignore[arg-type]
    stated = FINE.split(". ")[0]  # every word of it is in FINE
    a = answer(stated + " [1][2]. Cats fly [2].", cite(1, "c-fine"), cite(2, "c-solar"))
    got = judge.citations(a.text, cited_evidence(a), a.abstained)
    # claim 1: supported by [1] alone, [2] not needed; claim 2 unsupported: recall 1/2, precision 1/3
    assert got == {"citation_recall_judge": 0.5, "citation_precision_judge": pytest.approx(1 / 3)}
    asked = len(llm.prompts)
    judge.citations(a.text, cited_evidence(a), a.abstained)
    assert len(llm.prompts) == asked  # each (statement, evidence) is asked once
    assert judge.support_check.logprobs is logprobs  # without logprobs it switched to JSON verdicts
    assert judge.citations("The documents do not say.", {}, True) == {"citation_recall_judge": None, "citation_precision_judge": None}


def test_undecided_judge_is_no_support():
    class Undecided(WordJudge):
        def _first_token_logprobs(self, request):
            return {"The": -0.1}, Usage(10, 1)  # neither yes nor no: P(yes) = 0.5

    assert not LLMSupport(Undecided()).support(CLAIM, [FINE]).supported
    assert citation_values(f"{CLAIM} [1]", {1: FINE}, LLMSupport(Undecided())) == {"citation_recall": 0.0, "citation_precision": 0.0}


@pytest.mark.slow
def test_smollm2_as_support_judge():
    # The real backend answers through its first-token log-probabilities: a probability, not the
    # 0/1 of the JSON fallback. (SmolLM2-135M leans to "no" whatever it reads: a judge needs the
    # default Qwen2.5-Coder-1.5B or better, which tells these two apart by a wide margin.)
    from core.llm import LlamaCppLLM

    support = LLMSupport(LlamaCppLLM(cache=False))
    verdict = support.support(CLAIM, [FINE])
    assert 0.0 < verdict.score < 1.0 and verdict.supported == (verdict.score > 0.5)
    assert support.logprobs and support.support(CLAIM, [FINE]) is verdict
    assert 0.0 < support.support(CLAIM, [SOLAR]).score < 1.0
