"""The harness end to end on the sample corpus and its gold set (examples/eval/sample-qa.jsonl):
a real ingest, real retrieval modes, the report, the per-question JSONL and the plots. Plus the
pure scoring of one answer and the KB cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import Config, LLMConfig
from core.errors import InputError
from kgpipeline.pipeline import ingest_summary
from spr.eval.harness import evaluate
from spr.eval.records import EvalQuestion, EvalRequest, EvalSettings
from spr.eval.runner import score
from spr.records import Answer, ChunkRef, Evidence, Trace
from spr.verify import SupportChecker

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "eval" / "sample-qa.jsonl"
CORPUS = ROOT / "examples" / "corpus"
SYSTEMS = ("vector", "naive-kg", "dual")
pytestmark = pytest.mark.slow  # a real ingest and the embedding model: ~1 min of CPU


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("eval")
    request = EvalRequest(
        dataset=str(SAMPLE), corpus=CORPUS, out_dir=base / "out", cache_dir=base / "cache",
        settings=EvalSettings(systems=SYSTEMS, answer="extractive", k=5, recall_ks=(1, 3, 5)),
    )
    calls = []

    def ingest(config, paths):
        calls.append(paths)
        return ingest_summary(config, paths)

    outcome = evaluate(Config(), request, ingest)
    return request, outcome, ingest, calls


def test_outputs_are_written(sample_run):
    _, outcome, _, _ = sample_run
    for name in ("report", "results", "summary", "metrics", "cost_quality"):
        assert outcome.files[name].is_file() and outcome.files[name].stat().st_size > 0, name
    assert outcome.files["metrics"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = outcome.files["report"].read_text()
    for system in SYSTEMS:
        assert f"| {system} |" in report
    assert "R@3" in report and "MRR@5" in report and "p95 ms" in report
    for column in ("TokR", "R-L", "CitR", "CitP", "Abst-P", "Abst-R", "FalseAbst"):
        assert f" {column} |" in report, column
    summary = json.loads(outcome.files["summary"].read_text())
    assert {"token_recall", "rougeL", "citation_recall", "citation_precision", "abstention_precision", "abstain_unanswerable",
            "abstain_answerable"} <= set(summary["columns"])
    for system in summary["systems"]:
        assert system["abstention"]["unanswerable"] == 2 and system["abstention"]["answerable"] == 6
        assert system["abstention"]["abstention_recall"] == system["means"]["abstain_unanswerable"]
    lines = outcome.files["results"].read_text().splitlines()
    assert len(lines) == 8 * len(SYSTEMS)
    assert {json.loads(line)["system"] for line in lines} == set(SYSTEMS)


def test_scores_are_in_range_and_gold_is_resolved(sample_run):
    _, outcome, _, _ = sample_run
    assert not [r.error for r in outcome.results if r.error]
    for r in outcome.results:
        for name, value in r.scores.items():
            assert value is None or 0.0 <= value <= 1.0, (r.system, r.question_id, name, value)
    by = {(r.system, r.question_id): r for r in outcome.results}
    # gold context quotes were located in the ingested documents (ids = file stems)
    assert by[("vector", "solar-funding")].gold_ids == ("national-solar-plan",)
    assert by[("vector", "wind-distance")].gold_ids == ("westmark-wind-guidelines",)
    assert by[("vector", "offshore-wind-2040")].gold_ids == ()
    # the unanswerable questions are scored on abstention, the answerable ones on retrieval
    assert by[("dual", "offshore-wind-2040")].scores["abstain_unanswerable"] in (0.0, 1.0)
    assert by[("dual", "offshore-wind-2040")].scores["recall@5"] is None
    # plain vector search over 13 short documents finds the gold document in the top 5 for most
    vector = [r.scores["recall@5"] for r in outcome.results if r.system == "vector" and r.answerable]
    assert sum(vector) / len(vector) >= 0.5
    # naive-kg evidence is triples, mapped back to documents through their provenance chunks
    assert any(r.retrieved_ids for r in outcome.results if r.system == "naive-kg")


def test_extractive_answers_are_cited_and_checked(sample_run):
    _, outcome, _, _ = sample_run
    for r in outcome.results:
        recall, precision = r.scores["citation_recall"], r.scores["citation_precision"]
        if r.abstained:
            assert recall is None and precision is None
        else:  # extractive answers quote the sentences they cite: supported, every citation needed
            assert recall == 1.0 and precision == 1.0, (r.system, r.question_id, r.answer)


def test_llm_answers_judged_with_citations(sample_run, tmp_path):
    # the same KB (its build settings do not include the LLM); SmolLM2 answers and judges
    request, _, ingest, calls = sample_run
    config = Config()  # built in code: the model check off as for every test (conftest.py)
    config = config.model_copy(update={"llm": LLMConfig(model_path="smollm2-135m-instruct"),
                                       "answer": config.answer.model_copy(update={"model_check": "off"})})
    settings = EvalSettings(systems=("vector",), answer="llm", k=3, recall_ks=(1, 3))
    outcome = evaluate(config, EvalRequest(**{**request.__dict__, "out_dir": tmp_path / "llm", "plots": False, "judge": True,
                                              "limit": 3, "seed": 8, "settings": settings}), ingest)
    assert len(calls) == 1 and not [r.error for r in outcome.results if r.error]
    assert [r.question_id for r in outcome.results] == ["registry-fine", "heat-pump-scop", "ev-charging-points"]
    answered = [r for r in outcome.results if not r.abstained]
    assert answered  # SmolLM2 answers at least one with a citation
    for r in outcome.results:
        for key in ("citation_recall", "citation_precision", "citation_recall_judge", "citation_precision_judge", "faithfulness"):
            value = r.scores[key]
            assert (value is None) if r.abstained else (value is None or 0.0 <= value <= 1.0), (r.question_id, key, value)
    assert all(r.scores["citation_recall"] is not None for r in answered)
    assert any(r.scores["citation_recall_judge"] is not None for r in answered)
    report = outcome.files["report"].read_text()
    for column in ("CitR", "CitP", "Abst-P", "Abst-R", "FalseAbst", "CtxRel", "CitR(judge)", "CitP(judge)"):
        assert f" {column} |" in report, column


def test_the_cached_kb_is_reused(sample_run, tmp_path):
    request, _, ingest, calls = sample_run
    again = evaluate(Config(), EvalRequest(**{**request.__dict__, "out_dir": tmp_path / "again", "plots": False,
                                             "settings": EvalSettings(systems=("vector",), answer="extractive", k=5, recall_ks=(2, 5))}), ingest)
    assert len(calls) == 1 and again.kb_note.startswith("reused")
    assert (tmp_path / "again" / "report.md").is_file()


def test_changed_keyword_settings_refresh_only_the_keyword_layer(sample_run, tmp_path):
    """A cached KB whose [docgraph] keyword settings changed is not re-ingested: the keywords
    stage runs on it (docgraph then sees the new layer); without a reindex callable it is rebuilt."""
    from kgpipeline.pipeline import reindex_summary

    request, _, ingest, calls = sample_run
    config = Config()
    three = config.model_copy(update={"docgraph": config.docgraph.model_copy(update={"keywords_per_chunk": 3})})
    settings = EvalSettings(systems=("docgraph",), answer="extractive", k=5, recall_ks=(5,))
    fresh = EvalRequest(**{**request.__dict__, "out_dir": tmp_path / "kw", "plots": False, "settings": settings})
    outcome = evaluate(three, fresh, ingest, reindex=reindex_summary)
    assert len(calls) == 1 and "refreshed keywords: " in outcome.kb_note and "communities" not in outcome.kb_note
    assert evaluate(three, fresh, ingest, reindex=reindex_summary).kb_note.startswith("reused KB") and len(calls) == 1
    evaluate(config, fresh, ingest, reindex=reindex_summary)  # back to the defaults, for the other tests
    assert len(calls) == 1


def test_unknown_system_is_an_input_error(tmp_path):
    request = EvalRequest(dataset=str(SAMPLE), corpus=CORPUS, out_dir=tmp_path, settings=EvalSettings(systems=("nope",), answer="extractive", k=10, recall_ks=(2, 5, 10)))
    with pytest.raises(InputError, match="unknown system 'nope'"):
        evaluate(Config(), request, ingest_summary)


def test_score_one_answer_by_hand():
    def chunk(doc: str) -> Evidence:
        ref = ChunkRef(f"c-{doc}", f"https://x/doc/{doc}", doc, 0, 10, f"text of {doc}")
        return Evidence("chunk", ref.text, 0.5, "vector", chunk=ref)

    q = EvalQuestion("q1", "What?", ("EUR 800 million",), ("b",))
    answer = Answer("What?", "They give EUR 800 million. [2]", "vector", "extractive",
                    evidence=(chunk("a"), chunk("b"), chunk("a")), trace=Trace())
    doc_of = {"https://x/doc/a": "a", "https://x/doc/b": "b"}
    s = score(q, answer, doc_of, EvalSettings(systems=("vector",), answer="extractive", k=10, recall_ks=(1, 2)))
    assert (s["recall@1"], s["recall@2"], s["mrr@10"], s["context_precision"]) == (0.0, 1.0, 0.5, 0.5)
    assert s["accuracy"] == 1.0 and s["em"] == 0.0 and s["abstain_answerable"] == 0.0
    # "they give eur 800 million" vs "eur 800 million": P = 3/5, R = 1, F1 = 0.75
    assert s["f1"] == pytest.approx(0.75)
    assert s["hits@1"] == 0.0 and s["abstain_unanswerable"] is None
    assert "citation_recall" not in s  # citations are checked only with a support checker
    # [2] cites nothing the answer carries (no Citation records): unsupported, and not needed
    checked = score(q, answer, doc_of, EvalSettings(systems=("vector",), answer="extractive", k=10, recall_ks=(1,)), SupportChecker(None, 0.5))
    assert (checked["citation_recall"], checked["citation_precision"]) == (0.0, 0.0)


def test_embedder_precision_is_part_of_the_build_settings():
    from core.cpu import resolve_dtype
    from spr.eval.runner import _build_settings

    base = Config()
    base = base.model_copy(update={"embed": base.embed.model_copy(update={"dtype": "float32"})})
    half = base.model_copy(update={"embed": base.embed.model_copy(update={"dtype": "bfloat16"})})
    auto = base.model_copy(update={"embed": base.embed.model_copy(update={"dtype": "auto"})})
    assert _build_settings(half) != _build_settings(base)  # other vectors: another KB
    # "auto" is hashed as what it resolves to here: the same KB as asking for that format
    assert _build_settings(auto) == _build_settings(half if resolve_dtype("auto") == "bfloat16" else base)
    # float32 hashes as before the setting existed, so cached KBs are not rebuilt
    import hashlib

    parts = {n: getattr(base, n).model_dump(mode="json") for n in ("ontology", "ingest", "embed", "weights", "questions")}
    parts["embed"].pop("dtype")
    parts["embed"].pop("languages")  # read at question time: no rebuild either
    parts["base_iri"] = base.kb.base_iri
    assert _build_settings(base) == hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def test_eval_kbs_of_each_precision_live_side_by_side(tmp_path):
    """Switching [embed] dtype builds a KB of its own and leaves the other one cached."""
    from spr.eval.records import EvalDataset, Passage
    from spr.eval.runner import prepare_kb

    dataset = EvalDataset("tiny", (), (Passage("p1", "One", "A passage."),))
    built: list[Path] = []

    def ingest(config: Config, paths) -> str:  # records where the KB would be built
        built.append(config.kb_dir)
        return "ingested"

    base = Config()
    full = base.model_copy(update={"embed": base.embed.model_copy(update={"dtype": "float32"})})
    half = base.model_copy(update={"embed": base.embed.model_copy(update={"dtype": "bfloat16"})})
    c32, note32 = prepare_kb(dataset, full, tmp_path, ingest)
    c16, note16 = prepare_kb(dataset, half, tmp_path, ingest)
    assert c32.kb_dir == tmp_path / "eval" / "tiny" / "kb" and c16.kb_dir == tmp_path / "eval" / "tiny-bfloat16" / "kb"
    assert note32.startswith("built") and note16.startswith("built")
    assert prepare_kb(dataset, full, tmp_path, ingest)[1].startswith("reused")  # still there
    assert prepare_kb(dataset, half, tmp_path, ingest)[1].startswith("reused")
    assert built == [c32.kb_dir, c16.kb_dir]
