"""The CLI end to end, in-process through click's runner, on real files and a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from policykb.cli import cli

EX = "http://example.org/"


@pytest.fixture
def run(tmp_path):
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(cli, ["--kb", str(tmp_path / "kb"), *args], input=input, catch_exceptions=False)

    return invoke


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "data.ttl"
    path.write_text(
        f'<{EX}bureau> <http://www.w3.org/2004/02/skos/core#prefLabel> "Energy Bureau"@en ; <{EX}issues> <{EX}notice> .\n',
        encoding="utf-8",
    )
    return path


def test_init_writes_config_and_loads_ontologies(run, tmp_path):
    result = run("init")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "kb" / "policykb.toml").is_file()
    assert "loaded ontology core.owl" in result.output
    again = run("init")
    assert "kept existing" in again.output


def test_load_query_formats_export_stats(run, tmp_path, data):
    assert run("init", "--no-ontologies").exit_code == 0
    loaded = run("load", str(data))
    assert loaded.exit_code == 0 and "2 quads" in loaded.output

    query = "SELECT ?l WHERE { ?b skos:prefLabel ?l }"  # prefix declared automatically
    table = run("sparql", query)
    assert "Energy Bureau" in table.output and "(1 row)" in table.output
    as_json = json.loads(run("sparql", query, "--format", "json").output)
    assert as_json["results"]["bindings"][0]["l"] == {"type": "literal", "value": "Energy Bureau", "xml:lang": "en"}
    assert run("sparql", query, "--format", "csv").output.replace("\r\n", "\n") == "l\nEnergy Bureau\n"
    assert run("sparql", "-", "--format", "tsv", input=query).output == '?l\n"Energy Bureau"@en\n'

    out = tmp_path / "dump.nq"
    assert run("export", str(out)).exit_code == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
    stats = run("stats")
    assert "quads         2" in stats.output and "named graphs  1" in stats.output


@pytest.mark.parametrize(
    "args,code,message",
    [
        (("sparql", "SELECT ?x WHERE { ?x ?y }"), 2, "SPARQL syntax error at line 1"),
        (("sparql", "@missing.rq"), 2, "no such query file"),
        (("load", "nothing.ttl"), 2, "no such file"),
        (("load", "x.docx"), 2, "unknown RDF format"),
        (("load", "--graph", "not an iri", "x.ttl"), 2, "not an absolute IRI"),
    ],
)
def test_errors_are_one_line_with_exit_code(run, args, code, message):
    assert run("init", "--no-ontologies").exit_code == 0
    result = run(*args)
    assert result.exit_code == code
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_bad_config_is_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[store]\nbackend = 'mongo'\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(bad), "stats"])
    assert result.exit_code == 2 and "invalid config value for store.backend" in result.output


# --- ask: streaming an LLM answer -----------------------------------------------------------------
class ScriptedKB:
    """Stands in for spr.qa.KnowledgeBase: streams ``tokens``, then answers ``text`` (or fails)."""

    def __init__(self, tokens: list[str], text: str, fail: bool = False):
        self.tokens, self.text, self.fail = tokens, text, fail
        self.streamed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def answer(self, question: str):
        from spr.records import Answer, Citation

        quote = "Regional energy centres support rooftop photovoltaic projects."
        cite = Citation(1, "urn:chunk:1", "urn:doc:plan", "National Solar Plan", 10, 10 + len(quote), quote)
        return Answer(question=question, text=self.text, mode="dual", kind="llm", citations=(cite,))

    def ask(self, question, mode=None, answer=None, k=None):
        return self.answer(question)

    def ask_stream(self, question, mode=None, answer=None, k=None):
        from core.errors import ModelError
        from spr.records import AnswerDone, AnswerToken

        self.streamed = True

        def events():
            yield from (AnswerToken(t) for t in self.tokens)
            if self.fail:
                raise ModelError("the model stopped")
            yield AnswerDone(self.answer(question))

        return events()


@pytest.fixture
def scripted(monkeypatch):
    from spr.qa import KnowledgeBase

    def use(kb: ScriptedKB) -> ScriptedKB:
        monkeypatch.setattr(KnowledgeBase, "open", classmethod(lambda cls, config, **kw: kb))
        return kb

    return use


def test_ask_stream_prints_the_draft_then_the_checked_answer_when_it_differs(run, scripted):
    scripted(ScriptedKB([" Centres support", " rooftop projects [1].", " Wind is free [2]."], "Centres support rooftop projects [1]."))
    result = run("ask", "Who supports rooftop PV?", "--answer", "llm", "--stream")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        "Centres support rooftop projects [1]. Wind is free [2].\n\nChecked answer:\nCentres support rooftop projects [1].\n\nSources:\n"
        "  [1] National Solar Plan, characters 10-72\n"
    ), result.output

    same = "Centres support rooftop projects [1]."
    scripted(ScriptedKB(["Centres support", " rooftop projects [1]."], same))
    result = run("ask", "Who supports rooftop PV?", "--answer", "llm", "--stream")
    assert result.output.startswith(same + "\n\nSources:\n") and "Checked answer" not in result.output


def test_ask_streams_only_when_asked_or_on_a_terminal(run, scripted):
    kb = scripted(ScriptedKB(["Centres [1]."], "Centres [1]."))
    plain = run("ask", "q", "--answer", "llm")  # the runner's stdout is no terminal
    assert plain.exit_code == 0 and not kb.streamed and plain.output.startswith("Centres [1].\n\nSources:")
    assert not run("ask", "q", "--answer", "llm", "--no-stream").exit_code and not kb.streamed
    as_json = run("ask", "q", "--answer", "llm", "--json", "--stream")
    assert not kb.streamed and json.loads(as_json.output)["text"] == "Centres [1]."  # one JSON object


def test_ask_stream_failing_mid_reply_ends_the_line_and_reports_one_error(run, scripted):
    scripted(ScriptedKB(["Centres", " support"], "", fail=True))
    result = run("ask", "q", "--answer", "llm", "--stream")
    assert result.exit_code != 0
    assert result.stdout == "Centres support\n"
    assert result.stderr.strip() == "error: the model stopped"


def test_ask_stream_on_the_example_corpus(tmp_path_factory, monkeypatch):
    """The real path: SmolLM2 streams through llama.cpp; what is printed first is its draft."""
    from support.kbs import QUESTION, corpus_kb

    from spr.qa import KnowledgeBase

    kb_dir = corpus_kb(tmp_path_factory)
    tokens: list[str] = []
    real = KnowledgeBase.ask_stream

    def recording(self, *args, **kwargs):
        for event in real(self, *args, **kwargs):
            if hasattr(event, "text"):
                tokens.append(event.text)
            yield event

    monkeypatch.setattr(KnowledgeBase, "ask_stream", recording)
    result = CliRunner().invoke(cli, ["--kb", str(kb_dir), "ask", QUESTION, "--answer", "llm", "--stream"])
    assert result.exit_code == 0, result.output
    assert tokens, "the model streamed nothing"
    draft = "".join(tokens).strip()
    assert result.output.startswith(draft + "\n"), (draft, result.output)
    whole = json.loads(CliRunner().invoke(cli, ["--kb", str(kb_dir), "ask", QUESTION, "--answer", "llm", "--json"]).output)
    if " ".join(draft.split()) != " ".join(whole["text"].split()):
        assert "\nChecked answer:\n" in result.output
    assert " ".join(whole["text"].split()) in " ".join(result.output.split())
    assert ("\nSources:\n" in result.output) == bool(whole["citations"])


def test_ask_questions_file_answers_every_line_as_json(tmp_path_factory, tmp_path):
    """A batch over the example corpus KB: one JSON line per question, in order; a question the KB
    refuses and a line that is not one become error records, and the batch goes on."""
    from support.kbs import QUESTION, corpus_kb

    kb_dir = corpus_kb(tmp_path_factory)
    questions = tmp_path / "questions.txt"
    questions.write_text(
        f"# questions for the batch\n{QUESTION}\n\n"
        + json.dumps({"id": "q-json", "question": "Who supports rooftop PV?"}) + "\n"
        + "{not json\n"
        + "x" * 5001 + "\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["--kb", str(kb_dir), "ask", "--questions", str(questions)])
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["id"] for r in rows] == ["2", "q-json", "5", "6"]
    assert rows[0]["question"] == QUESTION and rows[0]["text"] and "error" not in rows[0]
    assert rows[1]["question"] == "Who supports rooftop PV?" and rows[1]["mode"] == "dual"
    assert rows[2]["question"] is None and rows[2]["error"].startswith("line 5: not JSON") and rows[2]["exit_code"] == 2
    assert rows[3]["exit_code"] == 2 and "question" in rows[3]["error"] and "text" not in rows[3]
    assert result.exit_code == 2  # the first failed question's code
    assert "answered 2 of 4 questions" in result.stderr and "2 failed" in result.stderr
    # the same questions one by one give the same answers
    single = json.loads(CliRunner().invoke(cli, ["--kb", str(kb_dir), "ask", QUESTION, "--json"]).stdout)
    assert single["text"] == rows[0]["text"] and single["citations"] == rows[0]["citations"]


@pytest.mark.parametrize(
    "args,message",
    [
        ((), "give a QUESTION or --questions FILE (one of the two)"),
        (("a question", "--questions", "-"), "give a QUESTION or --questions FILE (one of the two)"),
        (("--questions", "-", "--explain"), "--questions writes JSON lines (the trace included): --explain and --stream do not apply"),
    ],
)
def test_ask_needs_one_question_or_a_questions_file(run, args, message):
    assert run("init", "--no-ontologies").exit_code == 0
    result = run("ask", *args, input="")
    assert result.exit_code == 2 and result.output.strip() == f"error: {message}"


def test_ask_questions_file_that_is_not_utf8_is_one_line_error(run, tmp_path):
    assert run("init", "--no-ontologies").exit_code == 0
    bad = tmp_path / "q.txt"
    bad.write_bytes(b"\xff\xfe\x00\x00bad")
    result = run("ask", "--questions", str(bad))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: the questions file is not UTF-8 text")


def test_loaded_rdf_is_covered_by_the_indexes_only_after_reindex(run, tmp_path):
    """`policykb load` writes past the derived indexes: a name loaded that way is in the store but
    not in the entity index. The KB says so (load's output, `ask`, /health) until `reindex` covers it."""
    from store.entity_labels import INDEX_NAME, load_entity_index
    from store.freshness import stale_since

    kb = tmp_path / "kb"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "harbour-plan.md").write_text(
        "# Harbour Plan\n\nThe Harbour Authority shall publish a shore power plan by 1 March 2027.\n", encoding="utf-8"
    )
    assert run("init").exit_code == 0
    ingested = run("ingest", str(docs))
    assert ingested.exit_code == 0 and stale_since(kb) is None
    # each derived index says when it begins (stderr: minutes pass on a large KB), its line when done (stdout)
    begun = [line for line in ingested.stderr.splitlines() if line.startswith("building derived index ")]
    names = [line.split(": ")[1].removesuffix(" ...") for line in begun]
    assert begun[0].startswith("building derived index 1/") and names[0] == "chunks" and len(names) > 3
    assert [line.split(":")[0] for line in ingested.stdout.splitlines() if line.split(":")[0] in names] == names

    def surfaces() -> set[str]:
        return set(load_entity_index(kb / "indexes" / INDEX_NAME)[1].surfaces)

    extra = tmp_path / "extra.ttl"
    extra.write_text(
        f'<{EX}office> a <https://w3id.org/policykb/ontology#Actor> ; '
        f'<http://www.w3.org/2004/02/skos/core#prefLabel> "Tidal Energy Office"@en .\n', encoding="utf-8"
    )
    loaded = run("load", str(extra))
    assert loaded.exit_code == 0 and "`policykb reindex` rebuilds them" in loaded.output
    assert stale_since(kb).startswith("policykb load extra.ttl at ") and "tidal energy office" not in surfaces()
    asked = run("ask", "Who must publish a shore power plan?")
    assert asked.exit_code == 0 and "note: the indexes predate a change to the store (policykb load extra.ttl" in asked.stderr
    as_json = json.loads(run("ask", "Who must publish a shore power plan?", "--json").stdout)
    assert "the indexes predate a change to the store" in as_json["trace"]["note"]  # the Python API's answers say it too

    rebuilt = run("reindex")
    assert rebuilt.exit_code == 0 and stale_since(kb) is None and "tidal energy office" in surfaces()
    assert "note:" not in run("ask", "Who must publish a shore power plan?").stderr
    # the next ingest rebuilds them too, even when no document changed
    assert run("load", str(extra)).exit_code == 0 and stale_since(kb) is not None
    again = run("ingest", str(docs))
    assert again.exit_code == 0 and "0 added" in again.output and stale_since(kb) is None
