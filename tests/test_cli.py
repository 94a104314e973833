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
