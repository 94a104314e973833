"""Metrics, significance and judge arithmetic on hand-computed examples."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from spr.eval import metrics as m
from spr.eval.judge import Judge, answer_relevance_score, context_relevance_score, faithfulness_score
from spr.eval.significance import benjamini_hochberg, bootstrap_ci, compare_all, wilcoxon_p


# --- answers -------------------------------------------------------------------------------------
def test_normalization_is_squads():
    assert m.normalize_answer("The  Eiffel-Tower, an icon!") == "eiffeltower icon"
    assert m.is_abstention("The documents do not say.")
    assert m.is_abstention("  ")
    assert not m.is_abstention("The documents say 5.")


def test_abstention_is_the_generators_rule():
    # One rule (spr.records.is_abstention) for the generator and the metrics: a wrapped abstention
    # is the empty prediction too.
    assert m.prediction('Answer: "The documents do not say." [1]') == ""
    assert m.prediction("...") == "" and m.prediction("EUR 5 million", abstained=True) == ""
    assert m.prediction("The documents say EUR 5 million.") == "The documents say EUR 5 million."


def test_exact_match_and_f1_by_hand():
    assert m.exact_match("the EUR 800 million", ["EUR 800 million"]) == 1.0
    assert m.exact_match("EUR 800", ["EUR 800 million"]) == 0.0
    # pred "eur 800" vs gold "eur 800 million": common 2, P = 2/2, R = 2/3, F1 = 0.8
    assert m.f1("EUR 800", ["EUR 800 million"]) == pytest.approx(0.8)
    # best over golds
    assert m.f1("EUR 800", ["nothing here", "EUR 800 million"]) == pytest.approx(0.8)
    assert m.f1("cats", ["dogs"]) == 0.0


def test_unanswerable_scores_the_empty_prediction():
    assert m.exact_match("", []) == 1.0 and m.f1("", []) == 1.0
    assert m.exact_match("Paris", []) == 0.0 and m.f1("Paris", []) == 0.0
    assert m.prediction("The documents do not say.") == ""
    assert m.prediction("Paris", abstained=True) == ""
    assert m.token_recall("x", []) is None and m.contains_answer("x", []) is None


def test_token_recall_and_contains():
    # gold tokens {eur, 800, million}; the prediction holds eur and 800 -> 2/3
    assert m.token_recall("It is EUR 800 in total.", ["EUR 800 million"]) == pytest.approx(2 / 3)
    assert m.contains_answer("They give EUR 800 million.", ["eur 800 million"]) == 1.0
    assert m.contains_answer("They give EUR 8000 million.", ["800"]) == 0.0  # word boundaries


def test_hits_at_1():
    assert m.hits_at_1("Female", ["female"]) == 1.0
    assert m.hits_at_1("male", ["female"]) == 0.0
    assert m.hits_at_1(None, ["female"]) == 0.0
    assert m.hits_at_1("x", []) is None


def test_rouge_against_a_hand_count():
    # unigrams: pred {the, cat, sat}, gold {the, cat, ran}: P = R = 2/3 -> F = 2/3;
    # bigrams: pred {the cat, cat sat}, gold {the cat, cat ran}: 1/2; LCS "the cat" = 2 -> 2/3
    r = m.rouge("the cat sat", ["the cat ran"])
    assert r["rouge1"] == pytest.approx(2 / 3)
    assert r["rouge2"] == pytest.approx(1 / 2)
    assert r["rougeL"] == pytest.approx(2 / 3)
    assert m.rouge("x", []) is None


def test_k_precision():
    # answer tokens: [fine, is, eur, 50000, now]; in context: fine, is, eur, 50000 -> 4/5
    assert m.k_precision("The fine is EUR 50000 now.", "A fine of EUR 50000 is due.") == pytest.approx(4 / 5)
    assert m.k_precision("", "context") is None


# --- retrieval -------------------------------------------------------------------------------------
def test_recall_and_mrr_by_hand():
    ranked = ["a", "x", "a", "b", "y", "c"]  # duplicates count once at their best rank
    gold = {"b", "c"}
    # distinct: a x b y c -> b at 3, c at 5
    assert m.recall_at_k(ranked, gold, 2) == 0.0
    assert m.recall_at_k(ranked, gold, 3) == 0.5
    assert m.recall_at_k(ranked, gold, 5) == 1.0
    assert m.mrr_at_k(ranked, gold, 10) == pytest.approx(1 / 3)
    assert m.mrr_at_k(ranked, gold, 2) == 0.0
    assert m.recall_at_k(ranked, [], 5) is None and m.mrr_at_k(ranked, [], 5) is None


def test_context_precision_is_average_precision():
    # relevant at ranks 1 and 3: (1/1 + 2/3) / 2
    assert m.context_precision(["g1", "n", "g2"], {"g1", "g2", "g3"}) == pytest.approx((1 + 2 / 3) / 2)
    assert m.context_precision(["n"], {"g"}) == 0.0
    assert m.context_recall(["g1", "n"], {"g1", "g2"}) == 0.5


def test_mean_and_percentile():
    assert m.mean([1.0, None, 0.0]) == 0.5
    assert m.mean([None]) is None
    assert m.percentile([10, 20, 30, 40], 50) == pytest.approx(25.0)
    assert m.percentile([10, 20, 30, 40], 95) == pytest.approx(38.5)
    assert m.percentile([], 50) is None


# --- significance -----------------------------------------------------------------------------------
def test_benjamini_hochberg_matches_scipy():
    from scipy.stats import false_discovery_control

    ps = [0.01, 0.04, 0.03, 0.5, 0.002]
    assert benjamini_hochberg(ps) == pytest.approx(list(false_discovery_control(ps)))
    # by hand: sorted 0.002, 0.01, 0.03, 0.04, 0.5 -> *5/rank: 0.01, 0.025, 0.05, 0.05, 0.5
    assert benjamini_hochberg(ps) == pytest.approx([0.025, 0.05, 0.05, 0.5, 0.01])


def test_wilcoxon_on_clear_and_null_differences():
    better = [0.9, 0.8, 0.95, 0.7, 0.85, 0.9, 0.99, 0.8, 0.75, 0.88]
    worse = [b - 0.3 - 0.01 * i for i, b in enumerate(better)]
    # every difference positive, n = 10: exact two-sided p = 2 / 2^10
    assert wilcoxon_p(better, worse) == pytest.approx(2 / 1024)
    assert wilcoxon_p(better, better) == 1.0


def test_compare_all_pairs_and_corrects():
    ids = [str(i) for i in range(10)]
    scores = {
        "a": {"f1": {i: 1.0 for i in ids}},
        "b": {"f1": {i: 0.0 for i in ids}},
        "c": {"f1": {i: 1.0 for i in ids}},
    }
    tests = {(c.a, c.b): c for c in compare_all(scores, ["f1"])}
    assert set(tests) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert tests[("a", "b")].significant and tests[("a", "b")].delta == 1.0
    assert not tests[("a", "c")].significant


def test_bootstrap_ci_brackets_the_mean_and_is_seeded():
    xs = [0.0, 1.0] * 20
    lo, hi = bootstrap_ci(xs, seed=1)
    assert lo < 0.5 < hi and 0.2 < lo and hi < 0.8
    assert bootstrap_ci(xs, seed=1) == (lo, hi)
    assert bootstrap_ci([]) is None
    assert bootstrap_ci([0.7] * 5) == (0.7, 0.7)


# --- judge -------------------------------------------------------------------------------------------
def test_judge_arithmetic():
    assert faithfulness_score([1, 0, 1], 3) == pytest.approx(2 / 3)
    assert faithfulness_score([1], 3) == pytest.approx(1 / 3)  # missing verdicts are unsupported
    assert faithfulness_score([], 0) is None
    assert answer_relevance_score([0.8, 0.6], False) == pytest.approx(0.7)
    assert answer_relevance_score([0.9], True) == 0.0
    assert context_relevance_score([1, 3, 3, 9], 4) == pytest.approx(2 / 4)  # duplicates, out of range


class _ScriptedLLM:
    """Replies in order to complete_json; records prompts (an honest stand-in for a model)."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def complete_json(self, prompt, schema, **_):
        self.prompts.append(prompt)
        return self.replies.pop(0)


class _UnitEmbedder:
    def embed_many(self, texts):
        vecs = {"q": [1.0, 0.0], "same": [1.0, 0.0], "orthogonal": [0.0, 1.0]}
        return np.array([vecs[t] for t in texts], dtype=np.float32)


def test_judge_asks_and_scores():
    llm = _ScriptedLLM([
        {"claims": ["Fine is EUR 50,000.", "Bureau imposes it."]}, {"verdicts": [1, 0]},
        {"questions": ["same", "orthogonal"], "noncommittal": 0},
        {"relevant": [2]},
    ])
    judge = Judge(llm, _UnitEmbedder(), questions=2)
    scores = judge.score("q", "The fine is EUR 50,000 [1].", "One. Two is here. Three.", abstained=False)
    assert scores == {"faithfulness": 0.5, "answer_relevance": pytest.approx(0.5), "context_relevance": pytest.approx(1 / 3)}
    assert "2. Two is here." in llm.prompts[-1]  # sentences are numbered for the judge
    assert "Answer: The fine is EUR 50,000.\n" in llm.prompts[0]  # claims are split from the text without markers
    abstained = Judge(_ScriptedLLM([{"relevant": []}]), _UnitEmbedder()).score("q", "", "One.", abstained=True)
    assert abstained == {"faithfulness": None, "answer_relevance": 0.0, "context_relevance": 0.0}
    assert not math.isnan(abstained["context_relevance"])


# --- abstention as a classification, and the report's columns --------------------------------------------
def test_abstention_rates_by_hand():
    # (answerable, abstained): 2 unanswerable (1 abstained), 4 answerable (1 abstained)
    pairs = [(False, True), (False, False), (True, True), (True, False), (True, False), (True, False)]
    assert m.abstention_rates(pairs) == {"abstention_precision": 0.5, "abstention_recall": 0.5, "false_abstention_rate": 0.25}
    assert m.abstention_rates([(True, False)]) == {"abstention_precision": None, "abstention_recall": None, "false_abstention_rate": 0.0}
    assert m.abstention_rates([]) == dict.fromkeys(("abstention_precision", "abstention_recall", "false_abstention_rate"))


def _result(system, qid, answerable, abstained, **scores):
    from spr.eval.records import QuestionResult

    base = {"abstain_unanswerable": None if answerable else float(abstained), "abstain_answerable": float(abstained) if answerable else None}
    return QuestionResult("d", system, qid, "q?", "", answerable, ("x",) if answerable else (), (), "", abstained, (), None, {**base, **scores})


def _run():
    from spr.eval.records import QuestionResult

    cit = {"citation_recall": 1.0, "citation_precision": 0.5, "token_recall": 1.0, "rougeL": 0.5}
    return [
        # careful: abstains on both unanswerable questions and on one of two answerable ones
        _result("careful", "u1", False, True), _result("careful", "u2", False, True),
        _result("careful", "a1", True, True), _result("careful", "a2", True, False, **cit),
        # bold: never abstains
        _result("bold", "u1", False, False, citation_recall=0.0, citation_precision=0.0),
        _result("bold", "u2", False, False, citation_recall=0.5, citation_precision=1.0),
        _result("bold", "a1", True, False, **cit), _result("bold", "a2", True, False, **cit),
        # an error is not an answer: it does not count as an abstention
        QuestionResult("d", "bold", "a3", "q?", "", True, ("x",), (), "", False, (), None, error="boom"),
    ]


def test_summary_aggregates_abstention_and_citations():
    from spr.eval.report import summarize

    careful, bold = summarize(_run())
    assert careful.abstention == {
        "abstention_precision": pytest.approx(2 / 3), "abstention_recall": 1.0, "false_abstention_rate": 0.5,
        "abstained": 3, "abstained_unanswerable": 2, "unanswerable": 2, "abstained_answerable": 1, "answerable": 2,
    }
    # Abst-R and FalseAbst are the means of the per-question scores; Abst-P only exists as a ratio
    assert careful.value("abstain_unanswerable") == careful.abstention["abstention_recall"]
    assert careful.value("abstain_answerable") == careful.abstention["false_abstention_rate"]
    assert careful.value("abstention_precision") == pytest.approx(2 / 3)
    assert bold.abstention["abstention_precision"] is None and bold.abstention["answerable"] == 2 and bold.errors == 1
    assert (bold.value("abstain_unanswerable"), bold.value("abstain_answerable")) == (0.0, 0.0)
    # citation means skip the answers that were not scored (None)
    assert careful.value("citation_recall") == 1.0 and bold.value("citation_recall") == pytest.approx(0.625)
    assert bold.value("citation_precision") == pytest.approx(0.5)


def test_report_shows_the_trust_columns(tmp_path):
    from spr.eval.records import EvalSettings
    from spr.eval.report import write_report

    settings = EvalSettings(systems=("careful", "bold"), answer="extractive", k=5, recall_ks=(5,))
    paths = write_report(tmp_path, "t", {}, _run(), settings)
    report = paths["report"].read_text()
    assert "| system | CitR | CitP | Abst-P | Abst-R | FalseAbst |" in report
    assert "| careful | 1.000 | 0.500 | 0.667 | 1.000 | 0.500 |" in report
    assert "| bold | 0.625 | 0.500 | – | 0.000 | 0.000 |" in report
    assert "TokR" in report and "R-L" in report
    assert "- careful: 3 abstentions: 2 of 2 unanswerable questions, 1 of 2 answerable ones" in report
    assert "Judged" not in report  # no judge scores, no judge table
    summary = json.loads(paths["summary"].read_text())
    assert {"token_recall": "TokR", "rougeL": "R-L", "citation_recall": "CitR", "citation_precision": "CitP",
            "abstention_precision": "Abst-P", "abstain_unanswerable": "Abst-R", "abstain_answerable": "FalseAbst"}.items() <= summary["columns"].items()
    careful = summary["systems"][0]
    assert careful["abstention"]["abstention_precision"] == pytest.approx(2 / 3) and careful["means"]["citation_precision"] == 0.5

    judged = [_result("careful", "a1", True, False, faithfulness=1.0, citation_recall_judge=0.5, citation_precision_judge=1.0)]
    report = write_report(tmp_path / "j", "t", {}, judged, settings)["report"].read_text()
    assert "| system | Faith | CitR(judge) | CitP(judge) |" in report and "| careful | 1.000 | 0.500 | 1.000 |" in report
