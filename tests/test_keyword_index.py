"""BM25 keyword index: tokenization, exact BM25 ranking, edge queries, atomic save/load, damaged
files, and the derived stage "bm25" on the ingested example corpus (build, delete, re-ingest)."""

from __future__ import annotations

import json
import math
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from core.errors import InputError, StoreError
from store import keyword_index
from store.analysis import Decompounder, analyze, document_language, word_counts
from store.keyword_index import KeywordIndex, tokenize

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "corpus"

DOCS = {
    "register": "The operator shall register every installation with the Bureau.",
    "penalty": "An operator who fails to register pays penalties of up to EUR 50,000.",
    "fees": "Grid operators publish their access fees by 15 January of each year.",
    "ai-act": "Regulation (EU) 2024/1689 lays down harmonised rules on artificial intelligence.",
    "german": "Die Netzbetreiber veröffentlichen die Entgelte für den Netzzugang.",
}


@pytest.fixture
def index() -> KeywordIndex:
    return KeywordIndex(list(DOCS), list(DOCS.values()))


def bm25(query: str, docs: dict[str, str], k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
    """BM25 (Lucene variant) by the textbook formula, over the same tokenizer: the reference."""
    tokens = {key: tokenize(text) for key, text in docs.items()}
    avg = sum(map(len, tokens.values())) / len(tokens)
    df = Counter(t for terms in tokens.values() for t in set(terms))
    out = {}
    for key, terms in tokens.items():
        tf = Counter(terms)
        score = sum(
            math.log(1 + (len(docs) - df[q] + 0.5) / (df[q] + 0.5))
            * tf[q] / (tf[q] + k1 * (1 - b + b * len(terms) / avg))
            for q in tokenize(query) if q in tf
        )  # fmt: skip
        if score > 0:
            out[key] = score
    return out


# --- tokenization ---------------------------------------------------------------------------------
def test_tokenizer_stems_drops_stopwords_and_keeps_numbers():
    assert tokenize("Penalties") == tokenize("penalty") == ["penalti"]
    assert tokenize("What are the fines?") == tokenize("fine") == ["fine"]
    assert tokenize("Regulation (EU) 2024/1689,") == ["regul", "eu", "2024/1689", "2024", "1689"]
    assert tokenize("EUR 50,000") == tokenize("EUR 50.000") == tokenize("eur 50000") == ["eur", "50000"]
    assert tokenize("1,5 %") == tokenize("1.5") == ["1.5", "1", "5"]
    assert tokenize("der die das und für") == ["die"]  # "die" is an English word too
    assert tokenize("Straße") == tokenize("STRASSE")
    assert tokenize("") == tokenize(" ... ; ") == []


# --- German analysis: stemming and compound parts ------------------------------------------------
GERMAN = {
    "messsystem": "Für intelligente Messsysteme gilt eine jährliche Preisobergrenze von 100 Euro brutto.",
    "netzbetreiber": "Der Netzbetreiber hat die Anlage unverzüglich an sein Netz anzuschließen.",
    "grenze": "Eine Obergrenze gilt je Netz; über die Obergrenze hinaus entscheidet der Preis, nicht der Preis am Netz.",
    "ausweis": "Der Energieausweis ist zehn Jahre gültig; die Energie des Gebäudes wird ausgewiesen.",
    "english": "The operator shall connect the installation to the grid without delay.",
}
GERMAN_LANGS = ["de", "de", "de", "de", "en"]


def test_decompounder_splits_into_corpus_words():
    split = Decompounder({"preis": 3, "obergrenze": 2, "netz": 9, "betreiber": 4, "sonne": 2, "energie": 5, "ab": 50})
    assert split.split("Preisobergrenzen") == ("preis", "obergrenze")  # inflected last part
    assert split.split("Netzbetreibers") == ("netz", "betreiber")
    assert split.split("Sonnenenergie") == ("sonne", "energie")  # linking "n"
    assert split.split("Netz") == () and split.split("Bundesregierung") == ()  # short; unknown parts
    assert split.split("abnetz") == ()  # parts under four letters are not words here
    assert Decompounder({"preis": 1, "obergrenze": 1}).split("preisobergrenze") == ()  # seen once: noise


def test_german_analysis_stems_in_german_and_adds_parts():
    split = Decompounder(word_counts(GERMAN.values()) + word_counts(["Preis Preis Obergrenze Obergrenze"]))
    assert analyze("Messsystems", "de") == analyze("Messsystem", "de") == ["messsystem"]
    assert analyze("Anlagen", "de") == analyze("Anlage", "de")
    assert tokenize("Anlagen") != tokenize("Anlage")  # the English stemmer leaves them apart
    assert analyze("Preisobergrenzen", "de", split) == ["preisobergrenz", "preis", "obergrenz"]
    assert analyze("EUR 50,000 für 2024/1689", "de") == tokenize("EUR 50,000 für 2024/1689")  # numbers alike


def test_a_german_index_finds_compounds_by_their_parts_and_english_is_unchanged(tmp_path):
    index = KeywordIndex(list(GERMAN), list(GERMAN.values()), GERMAN_LANGS)
    assert index.languages == ("en", "de")
    # "Obergrenze" is a word of the corpus, so "Preisobergrenze" is also indexed by it
    assert {h.id for h in index.search("Obergrenze", 3)} == {"grenze", "messsystem"}
    assert {h.id for h in KeywordIndex(list(GERMAN), list(GERMAN.values())).search("Obergrenze", 3)} == {"grenze"}
    assert [h.id for h in index.search("Anlagen", 3)] == ["netzbetreiber"]  # German stemming
    assert index.search("Wie lange gilt ein Energieausweis?", 1)[0].id == "ausweis"
    assert index.search("intelligentes Messsystem", 1)[0].id == "messsystem"  # German stemming
    assert index.search("connect the installation", 1)[0].id == "english"
    # a query is read in both languages, a term once
    assert index.query_terms("operators") == ["oper", "operator"]
    index.save(tmp_path / "bm25")
    again = KeywordIndex.load(tmp_path / "bm25")
    assert again.languages == index.languages
    for query in ("Obergrenze", "Netzbetreiber", "Energieausweis Jahre", "grid"):
        assert again.search(query, 5) == index.search(query, 5)
    # without German documents: English analysis only, exactly as before languages existed
    english = KeywordIndex(list(DOCS), list(DOCS.values()), ["en"] * len(DOCS))
    assert english.languages == ("en",) and english.query_terms("Die Netzbetreiber") == tokenize("Die Netzbetreiber")
    english.save(tmp_path / "en")
    assert keyword_index.WORDS_FILE in {p.name for p in generation_files(tmp_path / "bm25")}
    assert keyword_index.WORDS_FILE not in {p.name for p in generation_files(tmp_path / "en")}


def test_an_index_saved_before_languages_loads_as_english(index, tmp_path):
    index.save(tmp_path / "bm25")
    old = manifest(tmp_path / "bm25")
    old["format"] = 1
    del old["languages"]
    (tmp_path / "bm25" / keyword_index.MANIFEST).write_text(json.dumps(old), encoding="utf-8")
    again = KeywordIndex.load(tmp_path / "bm25")
    assert again.languages == ("en",)
    for query in QUERIES:
        assert again.search(query, 10) == index.search(query, 10)


def test_document_language_decides_by_stop_words():
    assert document_language(" ".join(text for key, text in GERMAN.items() if key != "english")) == "de"
    assert document_language(GERMAN["netzbetreiber"]) == "en"  # one sentence: too short to tell
    assert document_language(GERMAN["english"]) == "en"
    assert document_language("") == document_language("2024/1689 § 3") == "en"


# --- ranking --------------------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["penalties", "register an installation", "operator fees", "2024/1689", "fine 50,000"])
def test_scores_are_bm25_and_ranked_best_first(index, query):
    expected = bm25(query, DOCS)
    hits = index.search(query, 10)
    assert [h.id for h in hits] == sorted(expected, key=lambda key: (-expected[key], list(DOCS).index(key)))
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.id], rel=1e-5)


def test_rare_term_and_stemming_find_the_right_document(index):
    assert [h.id for h in index.search("Which penalty applies?", 3)] == ["penalty"]
    assert index.search("register an installation", 1)[0].id == "register"  # both terms beat one
    assert [h.id for h in index.search("artificial intelligence act 1689", 5)] == ["ai-act"]
    assert [h.id for h in index.search("Netzzugang Entgelte", 5)] == ["german"]


def test_k_larger_than_the_corpus_and_ties(index):
    hits = index.search("operators", 100)
    assert {h.id for h in hits} == {"register", "penalty", "fees"}  # only documents that match
    assert index.search("operators", 2) == hits[:2]
    assert index.search("operators", 0) == [] and index.search("operators", -1) == []
    twins = KeywordIndex(["b", "a", "c"], ["solar rooftop", "solar rooftop", "wind"])
    assert [h.id for h in twins.search("rooftop solar", 5)] == ["b", "a"]  # equal scores keep index order
    many = KeywordIndex([f"d{i}" for i in range(50)], ["solar"] * 50)
    assert [h.id for h in many.search("solar", 3)] == ["d0", "d1", "d2"]  # also when k cuts a tie


@pytest.mark.parametrize("query", ["", "   ", "the of and is", "der und das", "photosynthesis", "?!", "xyzzy 9999"])
def test_empty_stopword_and_unknown_queries_find_nothing(index, query):
    assert index.search(query, 5) == []


def test_empty_and_degenerate_indexes(tmp_path):
    empty = KeywordIndex([], [])
    assert len(empty) == 0 and empty.search("penalty", 5) == []
    stopwords_only = KeywordIndex(["a", "b"], ["the of", ""])
    assert stopwords_only.terms == 0 and stopwords_only.search("the", 5) == []
    for name, idx in (("empty", empty), ("stopwords", stopwords_only)):
        idx.save(tmp_path / name)
        again = KeywordIndex.load(tmp_path / name)
        assert again.ids == idx.ids and again.search("penalty", 5) == []


def test_bad_input_is_reported():
    with pytest.raises(InputError):
        KeywordIndex(["a"], ["x", "y"])
    with pytest.raises(InputError):
        KeywordIndex(["a", "a"], ["x", "y"])


# --- persistence ----------------------------------------------------------------------------------
QUERIES = ["penalties", "register an installation", "operators", "2024/1689", "Netzbetreiber", "the", "fine 50,000"]


def test_save_load_round_trip_is_identical(index, tmp_path):
    index.save(tmp_path / "bm25")
    again = KeywordIndex.load(tmp_path / "bm25")
    assert again.ids == index.ids and again.terms == index.terms and again.tokens == index.tokens
    for query in QUERIES:
        assert again.search(query, 10) == index.search(query, 10)
    # saving again replaces the generation and leaves exactly one behind
    smaller = KeywordIndex(["only"], ["wind turbines"])
    smaller.save(tmp_path / "bm25")
    assert sorted(p.name for p in (tmp_path / "bm25").iterdir() if p.is_dir()) == [manifest(tmp_path / "bm25")["generation"]]
    assert KeywordIndex.load(tmp_path / "bm25").ids == ("only",)


def manifest(folder: Path) -> dict:
    return json.loads((folder / keyword_index.MANIFEST).read_text(encoding="utf-8"))


def generation_files(folder: Path) -> list[Path]:
    return sorted((folder / manifest(folder)["generation"]).iterdir())


def assert_reindex_hint(folder: Path) -> None:
    with pytest.raises(StoreError, match="policykb reindex bm25"):
        KeywordIndex.load(folder)


def test_missing_index_names_the_rebuild_command(tmp_path):
    assert_reindex_hint(tmp_path / "nowhere")
    (tmp_path / "empty-dir").mkdir()
    assert_reindex_hint(tmp_path / "empty-dir")


@pytest.mark.parametrize("cut", ["truncate", "empty", "delete", "flip"])
def test_damaged_files_are_store_errors(index, tmp_path, cut):
    index.save(tmp_path / "bm25")
    files = generation_files(tmp_path / "bm25")
    assert {f.name for f in files} >= {keyword_index.IDS_FILE, "data.csc.index.npy", "vocab.index.json"}
    for path in files:
        folder = tmp_path / f"copy-{path.name}"
        shutil.copytree(tmp_path / "bm25", folder)
        target = folder / manifest(folder)["generation"] / path.name
        data = target.read_bytes()
        if cut == "truncate":
            target.write_bytes(data[: len(data) // 2])
        elif cut == "empty":
            target.write_bytes(b"")
        elif cut == "delete":
            target.unlink()
        else:
            target.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
        assert_reindex_hint(folder)


@pytest.mark.parametrize("text", ["", "{not json", "[]", '{"format": 99}', '{"format": 1}'])
def test_damaged_manifest_is_a_store_error(index, tmp_path, text):
    index.save(tmp_path / "bm25")
    (tmp_path / "bm25" / keyword_index.MANIFEST).write_text(text, encoding="utf-8")
    assert_reindex_hint(tmp_path / "bm25")


def test_a_crashed_save_leaves_the_previous_index(index, tmp_path, monkeypatch):
    folder = tmp_path / "bm25"
    index.save(folder)
    before = {q: index.search(q, 10) for q in QUERIES}
    replacement = KeywordIndex(["x"], ["penalties everywhere"])

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(keyword_index.os, "replace", crash)  # the manifest never switches
    with pytest.raises(OSError):
        replacement.save(folder)
    monkeypatch.undo()
    monkeypatch.setattr(keyword_index, "_fsync", crash)  # dies after writing the new generation
    with pytest.raises(OSError):
        replacement.save(folder)
    monkeypatch.undo()
    again = KeywordIndex.load(folder)
    assert {q: again.search(q, 10) for q in QUERIES} == before
    # a killed process leaves a half-written generation and a temp manifest: ignored, then swept
    (folder / "g-deadbeef0000").mkdir()
    (folder / "g-deadbeef0000" / "ids.json").write_text("[", encoding="utf-8")
    (folder / f"{keyword_index.MANIFEST}.g-deadbeef0000.tmp").write_text("{", encoding="utf-8")
    assert KeywordIndex.load(folder).search("penalties", 1) == before["penalties"][:1]
    replacement.save(folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted([keyword_index.MANIFEST, manifest(folder)["generation"]])
    assert [h.id for h in KeywordIndex.load(folder).search("penalties", 5)] == ["x"]


# --- the derived stage on a real KB ---------------------------------------------------------------
@pytest.mark.slow  # the shared KB: the full ingest, MiniLM included (tests/test_qa.py reuses it)
def test_ingest_builds_the_index_and_a_question_finds_its_chunk(tmp_path_factory):
    from support.kbs import corpus_kb

    from store.oxigraph_store import OxigraphStore
    from store.units import read_units

    kb = corpus_kb(tmp_path_factory)
    index = KeywordIndex.load(kb / "indexes" / "bm25")
    store = OxigraphStore(kb / "store", read_only=True)
    try:
        units = read_units(store)
        assert sorted(index.ids) == sorted(u.iri for u in units)
        hits = index.search("How much is the fine for an operator who fails to register an installation?", 3)
        top = read_units(store, [hits[0].id])[0]
        assert "EUR 50,000" in top.text and top.path[0] == "Renewable Energy Act of 2024"
        late = read_units(store, [index.search("penalties for late reporting", 1)[0].id])[0]
        assert "EUR 5,000 per month of delay" in late.text
    finally:
        store.close()


def test_stage_follows_deletes_and_replaced_documents(tmp_path):
    """Through the registry and the controller: what `policykb delete` and re-ingest run."""
    from core.config import load_config
    from kgpipeline.pipeline import STAGES, build_controller, derived_stages
    from store.layout import KBLayout
    from store.open import open_store
    from store.units import read_units

    assert list(STAGES)[:2] == ["chunks", "bm25"]
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("renewable-energy-act-2024.md", "energy-efficiency-regulation.txt", "national-solar-plan.md"):
        shutil.copy(CORPUS / name, folder / name)
    config = load_config(kb_dir=tmp_path / "kb")
    config.ingest.validate_shapes = False  # the stage is under test, not SHACL
    config.kb_dir.mkdir(parents=True)
    layout = KBLayout(config.kb_dir)
    store = open_store(config.store, layout, config.kb.base_iri)
    controller = build_controller(config, store)
    controller.stages = derived_stages(config, only="bm25")  # the other stages load models
    try:
        summary = controller.ingest([folder])
        assert summary.added == 3
        (line,) = summary.stages
        assert line.startswith("bm25: ") and " chunks, " in line and " terms, " in line and " abbreviations indexed in " in line
        index = KeywordIndex.load(layout.index("bm25"))
        fine = index.search("fine of up to EUR 50,000", 1)[0].id
        act_chunks = {u.iri for u in read_units(store) if u.document == read_units(store, [fine])[0].document}
        assert fine in act_chunks and act_chunks <= set(index.ids)

        # delete (as `policykb delete` does: delete, then run the stages)
        controller.delete(str(folder / "renewable-energy-act-2024.md"))
        (folder / "renewable-energy-act-2024.md").unlink()
        controller.run_stages()
        index = KeywordIndex.load(layout.index("bm25"))
        assert not act_chunks & set(index.ids)
        assert index.search("50,000", 5) == []
        assert sorted(index.ids) == sorted(u.iri for u in read_units(store))

        # a changed document: re-ingest replaces its chunks and the stage runs by itself
        path = folder / "energy-efficiency-regulation.txt"
        old = {h.id for h in index.search("penalty", 5)}
        assert old
        path.write_text(path.read_text(encoding="utf-8").replace("penalty", "surcharge"), encoding="utf-8")
        summary = controller.ingest([folder])
        assert summary.updated == 1 and [s.split(":")[0] for s in summary.stages] == ["bm25"]
        index = KeywordIndex.load(layout.index("bm25"))
        assert all("penalt" in u.text.lower() for u in read_units(store, [h.id for h in index.search("penalty", 5)]))
        (hit,) = index.search("surcharge", 5)
        assert "surcharge of EUR 5,000" in read_units(store, [hit.id])[0].text
        assert sorted(index.ids) == sorted(u.iri for u in read_units(store))
    finally:
        controller.close()
        store.close()
    assert os.listdir(layout.index("bm25")).count(keyword_index.MANIFEST) == 1
