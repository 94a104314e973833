"""The rubric judge (spr.eval.rubric), the paired tests with Benjamini-Hochberg
(spr.eval.significance), the rubric table of the report and the correlogram (spr.eval.plots)."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest
from conftest import TEST_LLM

from core.cache import ResponseCache
from core.llm.base import LLM, Completion, Request
from core.usage import Usage
from spr.eval.records import EvalSettings, QuestionResult
from spr.eval.report import render_markdown, write_report
from spr.eval.rubric import CRITERIA, Rubric, RubricJudge, aggregate, normalize, parse_rubric, semantic_similarity
from spr.eval.significance import benjamini_hochberg, compare_paired, compare_to_baseline

QUESTION = "What must a company do after a personal data breach?"
ANSWER = "It must notify the supervisory authority within 72 hours [1]."


class ScriptedJudge(LLM):
    """Replies by the schema asked for: rubric ratings from ``ratings(run, retry)`` (a dict or a
    raw string), claims, verdicts, questions and relevant sentences for the RAGAS metrics."""

    def __init__(self, ratings=None, cache=None):
        super().__init__("scripted-judge", cache=cache, temperature=0.0)
        self.ratings = ratings or (lambda run, retry: {c: 3 for c in CRITERIA})
        self.requests: list[Request] = []

    def _generate(self, request: Request) -> Completion:
        self.requests.append(request)
        user = request.messages[-1][1]
        keys = set((request.schema or {}).get("required", ()))
        if "comprehensiveness" in keys:
            run = int(re.search(r"assessment (\d) of", user).group(1))
            reply = self.ratings(run, "previous reply was not valid" in user)
        elif keys == {"claims"}:
            reply = {"claims": ["The company notifies the authority.", "It has 72 hours."]}
        elif keys == {"verdicts"}:
            reply = {"verdicts": [1, 0]}
        elif "questions" in keys:
            reply = {"questions": [QUESTION], "noncommittal": 0}
        else:
            reply = {"relevant": [1]}
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return Completion(text, Usage(50, 10), False, self.model_id)


class WordEmbedder:
    """Bag-of-words unit vectors: enough to make cosine meaningful without a model."""

    dimension = 64

    def embed_many(self, texts):
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in re.findall(r"\w+", text.lower()):
                out[i, sum(map(ord, w)) % self.dimension] += 1
            out[i] /= max(1e-9, float(np.linalg.norm(out[i])))
        return out


# --- the rubric ------------------------------------------------------------------------------------------
def test_parse_and_normalize():
    assert [normalize(s) for s in (1, 2, 3, 4)] == pytest.approx([0, 1 / 3, 2 / 3, 1])
    assert parse_rubric({c: 4 for c in CRITERIA}) == {c: 4 for c in CRITERIA}
    assert parse_rubric({c: 0 for c in CRITERIA}) is None
    assert parse_rubric({"comprehensiveness": 2}) is None  # the others missing
    assert parse_rubric({**{c: 2 for c in CRITERIA}, "diversity": True}) is None
    assert parse_rubric("3") is None
    assert aggregate([None, None]) == dict.fromkeys([*CRITERIA, "rubric"])


def test_three_runs_are_distinct_requests_and_averaged(tmp_path):
    levels = {1: 4, 2: 3, 3: 2}  # comprehensiveness per run
    cache = ResponseCache(tmp_path / "llm.sqlite")
    llm = ScriptedJudge(lambda run, retry: {"comprehensiveness": levels[run], "diversity": 1, "directness": 4, "empowerment": run}, cache=cache)
    rubric = Rubric(llm, runs=3, temperature=0.7)
    scores = rubric.score(QUESTION, ANSWER)
    assert len(llm.requests) == 3 and len({r.messages for r in llm.requests}) == 3
    assert all(r.temperature == 0.7 for r in llm.requests)
    assert all(f"assessment {i} of 3" in r.messages[-1][1] for i, r in enumerate(llm.requests, 1))
    prompt = llm.requests[0].messages[-1][1]
    assert all(name in prompt for name in CRITERIA) and QUESTION in prompt and ANSWER in prompt
    assert "4: covers every aspect" in prompt  # the written level descriptions
    assert scores["comprehensiveness"] == pytest.approx((1 + 2 / 3 + 1 / 3) / 3)
    assert scores["diversity"] == 0.0 and scores["directness"] == 1.0 and scores["empowerment"] == pytest.approx(1 / 3)
    assert scores["rubric"] == pytest.approx(sum(scores[c] for c in CRITERIA) / 4)
    # the cache keeps all three runs apart: asked again, no model call and the same scores
    assert rubric.score(QUESTION, ANSWER) == scores and len(llm.requests) == 3


def test_invalid_output_is_retried_once_then_skipped():
    def ratings(run, retry):
        if run == 1:
            return {c: 2 for c in CRITERIA} if retry else "not json"
        if run == 2:
            return {c: 9 for c in CRITERIA}  # out of range, twice: the run is skipped
        return {c: 4 for c in CRITERIA}

    llm = ScriptedJudge(ratings)
    scores = Rubric(llm).score(QUESTION, ANSWER)
    assert len(llm.requests) == 5  # run 1: 2 requests, run 2: 2, run 3: 1
    assert scores["comprehensiveness"] == pytest.approx((1 / 3 + 1) / 2)
    always_bad = ScriptedJudge(lambda run, retry: "{}")
    assert Rubric(always_bad).score(QUESTION, ANSWER) == dict.fromkeys([*CRITERIA, "rubric"]) and len(always_bad.requests) == 6
    assert Rubric(always_bad).score(QUESTION, "  ") == dict.fromkeys([*CRITERIA, "rubric"])


def test_rubric_judge_adds_reference_scores():
    judge = RubricJudge(ScriptedJudge(), WordEmbedder(), {QUESTION: ("The authority must be notified within 72 hours.",)})
    scores = judge.score(QUESTION, ANSWER, "The controller shall notify the breach within 72 hours.", abstained=False)
    assert {"faithfulness", "answer_relevance", "context_relevance", *CRITERIA, "rubric", "semantic_similarity", "factual_correctness"} <= set(scores)
    assert scores["comprehensiveness"] == pytest.approx(2 / 3)
    assert 0.0 < scores["semantic_similarity"] <= 1.0
    assert scores["factual_correctness"] == pytest.approx(0.5)  # precision 1/2, recall 1/2
    unknown = judge.score("Another question?", ANSWER, "ctx", abstained=False)
    assert unknown["semantic_similarity"] is None and unknown["factual_correctness"] is None
    abstained = judge.score(QUESTION, "The documents do not say.", "ctx", abstained=True)
    assert abstained["factual_correctness"] == 0.0 and abstained["faithfulness"] is None



def test_rubric_scope_skips_the_ragas_calls():
    llm = ScriptedJudge()
    judge = RubricJudge(llm, WordEmbedder(), {QUESTION: ("The authority must be notified within 72 hours.",)}, ragas=False)
    scores = judge.score(QUESTION, ANSWER, "The controller shall notify the breach within 72 hours.", abstained=False)
    assert set(scores) == {"answer_relevance", *CRITERIA, "rubric", "semantic_similarity", "factual_correctness"}
    assert scores["factual_correctness"] == pytest.approx(0.5) and scores["comprehensiveness"] == pytest.approx(2 / 3)
    assert judge.citations(ANSWER, {1: "The controller shall notify the breach within 72 hours."}, abstained=False) == {}
    # 1 answer-relevance call, 3 rubric runs, 2 x 2 claim/verdict calls of factual correctness
    assert len(llm.requests) == 8
    full = ScriptedJudge()
    RubricJudge(full, WordEmbedder(), {QUESTION: ("x",)}).score(QUESTION, ANSWER, "ctx", abstained=False)
    assert len(full.requests) > len(llm.requests)

def test_semantic_similarity_is_the_best_reference():
    emb = WordEmbedder()
    assert semantic_similarity("fines of 4 percent", ["fines of 4 percent", "something else"], emb) == pytest.approx(1.0, abs=1e-6)
    assert semantic_similarity("x", [], emb) is None and semantic_similarity("", ["x"], emb) is None


@pytest.mark.slow
def test_smollm2_rubric_call():
    from core.config import LLMConfig
    from core.llm import make_llm

    llm = make_llm(LLMConfig(model_path=TEST_LLM), None)
    scores = Rubric(llm, runs=1).score(QUESTION, ANSWER)
    assert set(scores) == {*CRITERIA, "rubric"}
    assert all(v is None or 0.0 <= v <= 1.0 for v in scores.values())
    assert all(v is not None for v in scores.values())  # the grammar constrains SmolLM2 to valid ratings


# --- significance -------------------------------------------------------------------------------------------
def test_benjamini_hochberg_by_hand():
    # sorted p 0.01, 0.03, 0.04, 0.20 (m = 4): p*m/rank = 0.04, 0.06, 0.0533, 0.20; step-up minima
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.20]) == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.20])
    assert benjamini_hochberg([0.5, 0.9]) == pytest.approx([0.9, 0.9])
    assert benjamini_hochberg([]) == []
    from scipy.stats import false_discovery_control

    ps = [random.Random(1).random() ** 3 for _ in range(25)]
    assert benjamini_hochberg(ps) == pytest.approx(list(false_discovery_control(ps)))


def test_the_test_follows_normality():
    from scipy.stats import ttest_rel, wilcoxon

    rng = np.random.default_rng(0)
    b = rng.uniform(0, 1, 40)
    normal = b + 0.3 + rng.normal(0, 0.1, 40)  # normal differences
    t = compare_paired(normal, b)
    assert t.test == "t-test" and t.normality_p >= 0.05
    assert t.p == pytest.approx(ttest_rel(normal, b).pvalue) and t.statistic == pytest.approx(ttest_rel(normal, b).statistic)
    skewed = b + np.concatenate([np.zeros(30), rng.exponential(1.0, 10) + 1.0])  # many ties at 0, a heavy tail
    w = compare_paired(skewed, b)
    assert w.test == "wilcoxon" and w.normality_p < 0.05
    assert w.p == pytest.approx(wilcoxon(skewed - b, zero_method="wilcox").pvalue)
    assert compare_paired([0.2, 0.4], [0.1, 0.2]).test == "wilcoxon"  # too few pairs to test normality
    assert compare_paired([1, 1, 1], [1, 1, 1]).p == 1.0


def _results():
    rng = random.Random(3)
    rows = []
    for system, shift in (("vector", 0.0), ("dual", 0.3), ("local", 0.0)):
        for i in range(30):
            base = rng.random() * 0.5
            scores = {c: min(1.0, base + shift + rng.gauss(0, 0.05)) for c in CRITERIA}
            scores["rubric"] = sum(scores.values()) / 4
            scores["semantic_similarity"] = rng.random()
            scores["f1"] = rng.random()
            rows.append(QuestionResult("set", system, f"q{i}", "q?", "single", True, ("a",), (), "ans", False, (), None, scores,
                                       latency_ms=10.0, llm_calls=1, prompt_tokens=900 + 100 * (system == "dual"), completion_tokens=50))
    return rows


def test_compare_to_baseline_marks_the_better_system(tmp_path):
    from spr.eval.report import per_question

    rows = _results()
    tests = compare_to_baseline(per_question(rows), ["comprehensiveness", "semantic_similarity"])
    assert {(c.a, c.b) for c in tests} == {("vector", "dual"), ("vector", "local")} and len(tests) == 4
    by = {(c.metric, c.b): c for c in tests}
    assert by[("comprehensiveness", "dual")].significant and by[("comprehensiveness", "dual")].delta < 0
    assert not by[("semantic_similarity", "dual")].significant
    assert all(c.test in ("t-test", "wilcoxon") and c.q >= c.p for c in tests)
    settings = EvalSettings(systems=("vector", "dual", "local"), answer="llm", k=3, recall_ks=(3,))
    paths = write_report(tmp_path, "personas", {"questions": "30"}, rows, settings)
    report = paths["report"].read_text()
    header = next(line for line in report.splitlines() if line.startswith("| system | Compr"))
    assert header == "| system | Compr | Divers | Direct | Empow | Rubric | SemSim | tok/q |"
    dual = next(line for line in report.splitlines() if line.startswith("| dual |") and "▲" in line)
    assert dual.endswith("| 1,050 |") and "Shapiro-Wilk" in report
    summary = json.loads(paths["summary"].read_text())
    assert {c["test"] for c in summary["rubric_comparisons"]} <= {"t-test", "wilcoxon", "none"} and summary["rubric_comparisons"]
    assert render_markdown("t", {}, rows[:0], settings, []).startswith("## t")
    # without LLM calls (extractive answers) the cost column is the context handed over
    from dataclasses import replace

    extractive = [replace(r, prompt_tokens=0, completion_tokens=0, context_tokens=700) for r in rows]
    assert "| Rubric | SemSim | ctx tok/q |" in render_markdown("t", {}, extractive, settings, [], [])


# --- the correlogram ------------------------------------------------------------------------------------------
def test_correlogram_is_a_png(tmp_path):
    from spr.eval.plots import correlations, write_plots

    rows = _results()
    settings = EvalSettings(systems=("vector", "dual", "local"), answer="llm", k=3, recall_ks=(3,))
    paths = write_plots(tmp_path, rows, settings)
    png = tmp_path / "correlogram.png"
    assert png in paths and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    names, matrix = correlations(rows, ["comprehensiveness", "directness", "f1"])
    assert names == ["comprehensiveness", "directness", "f1"] and matrix[0][0] == pytest.approx(1.0)
    assert matrix[0][1] > 0.9 and abs(matrix[0][2]) < 0.5  # the criteria move together, F1 here is noise
