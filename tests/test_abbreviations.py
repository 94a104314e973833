"""Abbreviations the documents define (core/abbreviations.py) and BM25 searching a question that
spells one out for its short form too (store/keyword_index.py): mining, expansion, persistence,
and what older indexes without the table do."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.abbreviations import MAX_LONG_FORMS, Abbreviations, definitions
from core.errors import StoreError
from store.keyword_index import ABBREVIATIONS_FILE, MANIFEST, KeywordIndex


# --- finding definitions --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("support from the Just Transition Fund (JTF) for coal regions", [("JTF", "Just Transition Fund")]),
        ("uptake of sustainable aviation fuels (‘SAF’).", [("SAF", "sustainable aviation fuels")]),
        ("computer security incident response teams (CSIRTs)", [("CSIRT", "computer security incident response teams")]),
        ("the EU ETS (emissions trading system) applies", [("ETS", "emissions trading system")]),
        ("nitrogen oxides (NOx) and research and development (R&D)", [("NOx", "nitrogen oxides"), ("R&D", "research and development")]),
        ("markets in crypto-assets (MiCA)", [("MiCA", "markets in crypto-assets")]),
    ],
)
def test_definitions_found(text, expected):
    assert definitions(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Regulation (EU) 2021/1119 of the European Parliament",  # an act's series, not a definition
        "Regulation (EU) No 1093/2010 establishing a European Supervisory Authority",
        "as laid down in Annex (IV) and Chapter (II)",  # Roman numerals
        "point (a) of paragraph (1)",
        "the Fund (JTF)",  # one word cannot spell three letters
        "It applies to flights. Airport operators (AO) report.",  # two letters: "Airport operators"
        "The Commission (EC) shall act.",  # no word of the long form starts with E: not a definition
        "the sectors concerned (see Table 2)",
        "obligations of non-SME traders (SME)",  # the short form inside its long form: no definition
        "traders that are not SMEs (‘non-SME traders’) shall register",
        "in Form von Daten geografischer Informationssysteme (GIS-Daten)",  # mostly lower case: a word, not an abbreviation
    ],
)
def test_no_definition(text):
    found = definitions(text)
    assert found in ([], [("AO", "Airport operators")]), found


def test_long_form_stays_in_its_sentence():
    """The long form is read back from the parenthesis only to the sentence start."""
    assert definitions("Transition plans are due. Fund (TF) support") == []


def test_short_form_then_long_form_in_parentheses():
    assert definitions("the LULUCF (land use, land-use change and forestry) sector") == [
        ("LULUCF", "land use, land-use change and forestry")
    ]
    assert definitions("the GHG (as reported) emissions") == []  # the parenthesis does not spell it out


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400))
@settings(max_examples=300, deadline=None)
def test_definitions_never_fail(text):
    for short, long in definitions(text):
        assert 2 <= len(short) <= 10 and len(long.split()) >= 2


# --- a corpus's table and a question's other forms ----------------------------------------------
def test_table_keeps_the_most_defined_long_forms():
    texts = ["emissions trading system (ETS)"] * 3 + ["emissions trading scheme (ETS)"] * 2 + [
        "emission trade system (ETS)", "extra tidy sets (ETS)", "emissions trading systems (ETS)"
    ]
    table = Abbreviations.from_texts(texts)
    assert table.forms["ETS"][:2] == ("emissions trading system", "emissions trading scheme")  # plurals count as one
    assert len(table.forms["ETS"]) == MAX_LONG_FORMS


def test_a_spelled_out_long_form_adds_its_short_form():
    table = Abbreviations({"ETS": ["emissions trading system"], "SAF": ["sustainable aviation fuels"], "IT": ["information technology"]})
    assert table.expansions("Which sectors are outside the EU emissions trading systems?") == ["ETS"]
    assert table.expansions("How much sustainable aviation fuel must airports supply?") == ["SAF"]
    assert table.expansions("Which Information Technology and sustainable aviation fuels?") == ["SAF", "IT"]  # table order
    # the other way round adds nothing: documents write the short form once defined
    assert table.expansions("What must non-ETS sectors cut?") == []
    assert table.expansions("Which IT systems need SAFs?") == []
    assert table.expansions("the ETS (emissions trading system)") == []  # it abbreviates it itself
    assert table.expansions("Is it a safe fuel?") == []


def test_json_round_trip_and_bad_tables():
    table = Abbreviations.from_texts(["the Just Transition Fund (JTF) and the JTF"])
    assert Abbreviations.from_json(json.loads(json.dumps(table.to_json()))) == table
    for bad in ([], {"JTF": "Just Transition Fund"}, {"JTF": [1]}, {"": ["x y"]}):
        with pytest.raises(ValueError):
            Abbreviations.from_json(bad)


# --- BM25 reads both forms ------------------------------------------------------------------------
TEXTS = {
    "definition": "This Regulation sets rules on sustainable aviation fuels (SAF).",
    "obligation": "Suppliers shall blend SAF into kerosene.",  # says only "SAF"
    "timber": "Suppliers shall blend sustainable timber.",
    "forests": "Sustainable forests store carbon.",
}


@pytest.fixture
def index() -> KeywordIndex:
    return KeywordIndex(list(TEXTS), list(TEXTS.values()))


def test_long_form_question_finds_the_abbreviation(index):
    """Asked with the long form, the passage that writes only "SAF" overtakes one that shares
    the question's other words but is about timber."""
    question = "Must suppliers blend sustainable aviation fuel?"
    assert [h.id for h in index.search(question, 4, expand=False)][:3] == ["definition", "timber", "obligation"]
    assert [h.id for h in index.search(question, 4)][:3] == ["definition", "obligation", "timber"]


def test_expansion_weighs_as_one_term(index):
    assert index.weighted_terms("Who blends sustainable aviation fuels?") == [(["blend", "sustain", "aviat", "fuel"], 1.0), (["saf"], 1.0)]
    assert index.weighted_terms("Who blends SAF?") == [(["blend", "saf"], 1.0)]  # a short form adds nothing
    assert index.query_terms("Who blends sustainable aviation fuels?", expand=False) == ["blend", "sustain", "aviat", "fuel"]


def test_abbreviations_saved_and_loaded(index, tmp_path):
    index.save(tmp_path / "bm25")
    loaded = KeywordIndex.load(tmp_path / "bm25")
    assert loaded.abbreviations == index.abbreviations and loaded.abbreviations.forms == {"SAF": ("sustainable aviation fuels",)}
    question = "Must suppliers blend sustainable aviation fuel?"
    assert loaded.search(question, 4) == index.search(question, 4)


def test_index_saved_before_abbreviations_loads_without_them(index, tmp_path):
    """An index written before the table existed still loads and searches as it did."""
    folder = tmp_path / "bm25"
    index.save(folder)
    manifest = json.loads((folder / MANIFEST).read_text())
    (folder / manifest["generation"] / ABBREVIATIONS_FILE).unlink()
    del manifest["files"][ABBREVIATIONS_FILE]
    (folder / MANIFEST).write_text(json.dumps(manifest))
    loaded = KeywordIndex.load(folder)
    assert len(loaded.abbreviations) == 0
    assert loaded.search("sustainable aviation fuel", 3) == index.search("sustainable aviation fuel", 3, expand=False)


def test_damaged_abbreviations_file_is_detected(index, tmp_path):
    folder = tmp_path / "bm25"
    index.save(folder)
    generation = json.loads((folder / MANIFEST).read_text())["generation"]
    (folder / generation / ABBREVIATIONS_FILE).write_text('{"SAF": ["tampered"]}')
    with pytest.raises(StoreError, match="reindex bm25"):
        KeywordIndex.load(folder)


# --- the trace says how BM25 read the question ------------------------------------------------
@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    from support.kbs import corpus_kb

    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(corpus_kb(tmp_path_factory)) as opened:
        yield opened


def test_fused_trace_names_the_forms_read(kb):
    """The example corpus defines no abbreviation; one unit of it is given a definition."""
    from spr.retrieval.fusion import FusedRetriever, SignalRetriever
    from spr.retrieval.keyword import KeywordSignal
    from store.units import read_units

    units = read_units(kb.store)
    texts = [u.index_text for u in units]
    texts[0] += " Renewable energy sources (RES) are covered."
    signal = KeywordSignal(KeywordIndex([u.iri for u in units], texts))
    question = "Which renewable energy sources installations must register?"
    fused = FusedRetriever(kb.store, [signal], {"bm25": 1.0}, rrf_k=60, depth=10).search(question, 3)
    assert fused.evidence and "BM25 also searched for the documents' abbreviations: RES" in fused.trace.note
    assert SignalRetriever(kb.store, signal, "bm25").search(question, 3).trace.note.endswith("abbreviations: RES")
    assert FusedRetriever(kb.store, [signal], {"bm25": 1.0}, rrf_k=60, depth=10).search("Which RES must register?", 3).trace.note == ""
    signal.expand = False
    assert FusedRetriever(kb.store, [signal], {"bm25": 1.0}, rrf_k=60, depth=10).search(question, 3).trace.note == ""


def test_dual_keeps_the_text_halfs_note():
    from spr.records import Retrieval, Trace
    from spr.retrieval.base import Retriever
    from spr.retrieval.dual import DualRetriever

    class Fixed(Retriever):
        def __init__(self, note: str):
            self.name, self.note = "fixed", note

        def retrieve(self, question, k):
            return []

        def search(self, question, k):
            return Retrieval((), Trace(note=self.note))

    dual = DualRetriever(Fixed("no entity or relation could be grounded"), Fixed("BM25 also searched for …: SAF"))
    assert dual.search("q", 3).trace.note == "no entity or relation could be grounded; BM25 also searched for …: SAF"
    assert DualRetriever(Fixed(""), Fixed("a bridge question")).search("q", 3).trace.note == "a bridge question"


# --- the answer's sentence scoring reads the short form too -------------------------------------
def test_read_abbreviations_alone(index, tmp_path):
    from store.keyword_index import read_abbreviations

    folder = tmp_path / "bm25"
    assert len(read_abbreviations(folder)) == 0  # no index: none (the BM25 signal reports it)
    index.save(folder)
    assert read_abbreviations(folder) == index.abbreviations
    generation = json.loads((folder / MANIFEST).read_text())["generation"]
    (folder / generation / ABBREVIATIONS_FILE).write_text('{"SAF": ["tampered"]}')
    assert len(read_abbreviations(folder)) == 0  # damaged: none


def test_scorer_reads_the_short_form():
    from spr.scoring import AbbreviatingScorer, LexicalScorer

    table = Abbreviations({"JTF": ["just transition fund"]})
    sentences = ["The JTF shall not support nuclear power plants.", "Funds shall support regions in transition."]
    question = "Can the Just Transition Fund support nuclear power plants?"
    plain = LexicalScorer(0.3).score(question, sentences)
    read = AbbreviatingScorer(LexicalScorer(0.3), table.expansions)
    assert read.score(question, sentences)[0] > plain[0]
    assert read.score("Can the JTF support nuclear plants?", sentences) == LexicalScorer(0.3).score("Can the JTF support nuclear plants?", sentences)
    assert (read.name, read.threshold) == ("lexical", 0.3)


def test_knowledge_base_reads_its_table(kb, tmp_path):
    import shutil

    from core.config import load_config
    from spr.qa import KnowledgeBase
    from spr.scoring import AbbreviatingScorer
    from store.layout import KBLayout
    from store.units import read_units

    assert len(kb.abbreviations) == 0 and not isinstance(kb._scorer(), AbbreviatingScorer)  # the example corpus defines none
    copy = tmp_path / "kb"
    shutil.copytree(kb.config.kb_dir, copy)
    units = read_units(kb.store)
    texts = [u.index_text for u in units]
    texts[0] += " Renewable energy sources (RES) are covered."
    KeywordIndex([u.iri for u in units], texts).save(KBLayout(copy).index("bm25"))
    with KnowledgeBase.open(copy) as opened:
        assert opened.abbreviations.forms == {"RES": ("renewable energy sources",)}
        assert isinstance(opened._scorer(), AbbreviatingScorer)
    config = load_config(kb_dir=copy)
    off = config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"abbreviations": False})})
    with KnowledgeBase.open(off) as opened:
        assert len(opened.abbreviations) == 0 and not isinstance(opened._scorer(), AbbreviatingScorer)
