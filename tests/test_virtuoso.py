"""A KB in Virtuoso: the example corpus ingested into a private Virtuoso 7 through the [store]
configuration the README gives, then questions answered from it.

The store contract itself runs against Virtuoso in tests/test_store_contract.py. Skipped only where
`virtuoso-t` is not installed (scripts/setup.sh installs Debian's virtuoso-opensource-7-bin).
"""

from __future__ import annotations

import pytest
from support.kbs import CORPUS, FULL_INDEXES, QUESTION
from support.servers import virtuoso_binary, virtuoso_server

pytestmark = [
    pytest.mark.slow,  # a Virtuoso server, an ingest, model loads
    pytest.mark.skipif(virtuoso_binary() is None, reason="virtuoso-t is not installed (run scripts/setup.sh)"),
]

PASSWORD_ENV = "POLICYKB_TEST_VIRTUOSO_PASSWORD"


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    from core.config import load_config
    from kgpipeline.pipeline import ingest_paths

    with virtuoso_server(tmp_path_factory.mktemp("virtuoso")) as server, pytest.MonkeyPatch.context() as env:
        env.setenv(PASSWORD_ENV, server.password)
        kb = tmp_path_factory.mktemp("kb")
        (kb / "policykb.toml").write_text(
            f"""[store]
backend = "sparql"
dialect = "virtuoso"
query_endpoint = "{server.base}/sparql"
update_endpoint = "{server.base}/sparql-auth"
graph_store_endpoint = "{server.base}/sparql-graph-crud-auth"
auth_user = "{server.user}"
auth_token_env = "{PASSWORD_ENV}"

{FULL_INDEXES}""",
            encoding="utf-8",
        )
        summary = ingest_paths(load_config(kb_dir=kb), [CORPUS])
        assert not summary.skipped, summary.skipped
        yield kb


@pytest.fixture(scope="module")
def kb(kb_dir):
    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(kb_dir) as base:
        yield base


def test_ingest_wrote_the_corpus_into_virtuoso(kb):
    store = kb.store
    titles = store.select("SELECT DISTINCT ?t WHERE { ?d <http://purl.org/dc/terms/title> ?t }").column("t")
    names = {t.value for t in titles}  # type: ignore[union-attr]
    assert "Renewable Energy Act of 2024" in names
    assert all("openlinksw" not in g.value for g in store.named_graphs())  # Virtuoso's own graphs are hidden


def test_ask_answers_with_citations(kb):
    answer = kb.ask(QUESTION)
    assert not answer.abstained and answer.citations, answer.text
    assert all(f"[{c.id}]" in answer.text for c in answer.citations[:1])


def test_structured_answer_comes_from_sparql_over_virtuoso(kb):
    answer = kb.ask("What did the National Energy Bureau establish?", mode="spr")
    assert "SELECT" in answer.sparql and answer.linked_entities
    facts = [t for t in answer.triples if t.object_label == "Solar Monitoring Center"]
    assert facts and facts[0].graphs and answer.citations[0].chunk in facts[0].graphs
