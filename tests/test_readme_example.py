"""The README's "Asking questions" Python example runs, as written, against a KB built from
examples/corpus (the same one tests/test_qa.py uses), so the docs cannot drift from the API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.kbs import corpus_kb

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_python_blocks(section: str) -> list[str]:
    """The ```python blocks of one ``###`` subsection of the README."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"### {section}\n")
    end = text.find("\n#", start + 4)
    body = text[start : end if end > 0 else len(text)]
    return re.findall(r"```python\n(.*?)```", body, flags=re.DOTALL)


def test_the_section_has_an_example():
    blocks = readme_python_blocks("Asking questions")
    assert blocks and "from spr import ask" in blocks[0]


@pytest.mark.slow
def test_readme_example_runs(tmp_path_factory, monkeypatch, capsys):
    kb = corpus_kb(tmp_path_factory)
    monkeypatch.chdir(kb.parent)  # the example says kb="kb"
    for block in readme_python_blocks("Asking questions"):
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    assert "EUR 50,000" in out and "SELECT" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    "section, expected",
    [
        ("Disambiguation weights and the question bank", "monitoring"),
        ("Asking structured questions (the semantic parsing retriever)", "(JOIN [ issues ] [ National Solar Plan ])"),
    ],
)
def test_readme_retriever_examples_run(tmp_path_factory, monkeypatch, capsys, section, expected):
    kb = corpus_kb(tmp_path_factory)
    monkeypatch.chdir(kb.parent)
    blocks = readme_python_blocks(section)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    assert expected.casefold() in capsys.readouterr().out.casefold()
