"""Quantified targets by patterns (kgpipeline/extract/targets.py): value, unit, target year, base
year and scope — on sentences written for these tests in the style of national plans and EU law,
then through the real extractor, the writer, the SHACL shapes and an Oxigraph store."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.resources import resource_dir
from kgpipeline.extract.lexicon_extractor import LexiconExtractor
from kgpipeline.extract.policy_facts import PolicyFactExtractor
from kgpipeline.extract.targets import find_targets
from kgpipeline.ontology import read_ontologies
from kgpipeline.records import SourceDocument
from kgpipeline.segment import segment
from kgpipeline.shacl import ShapeValidator
from kgpipeline.validate import validate_document
from kgpipeline.write import build_document_graphs
from store.oxigraph_store import OxigraphStore
from store.vocab import PKB


def parts(text: str) -> list[tuple[str, str, int, int | None, str]]:
    return [(t.quantity, t.unit, t.year, t.base_year, t.scope) for _, t in find_targets(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Westmark has committed to reduce greenhouse gas emissions by at least 45 % by 2030 as compared to 1990.",
         [("45", "%", 2030, 1990, "greenhouse gas emissions")]),
        ("The national target is a 38% share of renewable energy in gross final energy consumption in 2030.",
         [("38", "%", 2030, None, "renewable energy in gross final energy consumption")]),
        ("The goal is to install 12 GW of offshore wind capacity by 2035.", [("12", "GW", 2035, None, "offshore wind capacity")]),
        ("The energy efficiency target of 1 250 PJ for 2030 applies to final energy consumption.",
         [("1250", "PJ", 2030, None, "energy efficiency")]),
        ("Emissions must fall by 55,5 % by 2040 relative to 2005 levels.", [("55.5", "%", 2040, 2005, "")]),
        ("The plan aims at 20 % by 2025 and 30 % by 2030.", [("20", "%", 2025, None, ""), ("30", "%", 2030, None, "")]),
        # "from A to B": A is where the target starts
        ("The programme aims at raising the share from the current 65% to 75% by 2026.", [("75", "%", 2026, None, "")]),
    ],
)
def test_target_parts(text, expected):
    assert parts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Biogas will account for 7% of gas consumption by 2030.",  # a forecast, no target cue
        "In the WAM scenario, a 25% reduction is estimated in agriculture by 2030.",  # a projection
        "The share was 32.6% in 2017, so the 34% target for 2030 is in sight.",  # 32.6% is a past figure
        "Heat pumps supplied 5.8 TWh (13.1% in 2015) and the target was raised.",  # no target year
        "Target 2021 2022 2023 2024 2025 2030 0.8% 0.8% 0.8% 0.8% 0.8% 0.8%",  # a table run together
        "The fleet holds 1.5 million cars, 69% of which are diesel cars, despite the target for 2030.",
    ],
)
def test_not_targets(text):
    assert all(q != "32.6" and q != "69" for q, *_ in parts(text))
    if "34%" not in text:
        assert parts(text) == []


def test_the_amount_is_written_with_its_qualifier_and_unit():
    (_, t), = find_targets("Westmark has committed to reduce emissions by at least 45 % by 2030.")
    assert t.written == "at least 45 %"


def test_targets_pass_the_shapes_and_answer_sparql(tmp_path: Path):
    onto = read_ontologies(resource_dir("ontologies"))
    lexicon = LexiconExtractor(onto)
    extractor = PolicyFactExtractor(lexicon, lexicon)
    text = ("Decarbonisation. Westmark has committed to reduce greenhouse gas emissions by at least 45 % by 2030 "
            "as compared to 1990. The goal is to install 12 GW of offshore wind capacity by 2035.")  # fmt: skip
    d = SourceDocument(doc_id="westmark-plan", title="Westmark National Plan", text=text, metadata={}, source="test",
                       format="txt", content_hash="t1")  # fmt: skip
    seg = segment(d)
    graphs = build_document_graphs(d, "general-policy", seg, [extractor.extract(c, d, "general-policy") for c in seg.chunks],
                                   "https://example.org/kb/")  # fmt: skip
    checked, conflicts = validate_document(d.doc_id, graphs, ShapeValidator(resource_dir("shapes"), resource_dir("ontologies"), onto))
    assert conflicts == ()
    store = OxigraphStore(tmp_path / "store")
    store.extend(checked.quads)
    rows = store.select(f"""SELECT ?q ?u ?y ?b ?s WHERE {{ ?t a <{PKB}QuantifiedTarget> ; <{PKB}targetQuantity> ?q ;
        <{PKB}targetUnit> ?u ; <{PKB}targetYear> ?y OPTIONAL {{ ?t <{PKB}baseYear> ?b }} OPTIONAL {{ ?t <{PKB}targetScope> ?s }} }}
        ORDER BY ?y""").rows
    got = [(float(r["q"].value), r["u"].value, int(r["y"].value), r.get("b") and int(r["b"].value), r.get("s") and r["s"].value) for r in rows]
    assert got == [(45.0, "%", 2030, 1990, "greenhouse gas emissions"), (12.0, "GW", 2035, None, "offshore wind capacity")]
    store.close()
