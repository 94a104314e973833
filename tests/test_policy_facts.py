"""Policy facts by patterns (kgpipeline/extract/policy_facts.py): acts and their cross-references,
definitions, provisions — on legal text written for these tests in the Official Journal's style, then
through the real writer, the SHACL shapes and an Oxigraph store."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.resources import resource_dir
from kgpipeline.extract.acts import Adoption, act_from_celex, act_references, own_act, title_adoption
from kgpipeline.extract.lexicon_extractor import LexiconExtractor
from kgpipeline.extract.policy_facts import PolicyFactExtractor
from kgpipeline.ontology import read_ontologies
from kgpipeline.records import SourceDocument
from kgpipeline.segment import segment
from kgpipeline.shacl import ShapeValidator
from kgpipeline.validate import validate_document
from kgpipeline.write import build_document_graphs
from store.oxigraph_store import OxigraphStore
from store.vocab import DCTERMS, PKB, SKOS

BASE = "https://example.org/kb/"
CATEGORY = "legal-regulation"


@pytest.fixture(scope="module")
def onto():
    return read_ontologies(resource_dir("ontologies"))


@pytest.fixture(scope="module")
def extractor(onto):
    lexicon = LexiconExtractor(onto)
    return PolicyFactExtractor(lexicon, lexicon)


def doc(text: str, doc_id: str = "32031r0042-art-3", celex: str = "32031R0042", **meta) -> SourceDocument:
    return SourceDocument(doc_id=doc_id, title=meta.pop("title", "Data Sharing Act Article 3"), text=text,
                          metadata={"celex": celex, "act": "Data Sharing Act", **meta}, source="test", format="jsonl",
                          content_hash=str(hash(text)))  # fmt: skip


def facts(extractor, document: SourceDocument):
    seg = segment(document)
    return [extractor.extract(c, document, CATEGORY) for c in seg.chunks]


def triples(extractions, prop: str) -> set[tuple[str, str]]:
    out = set()
    for e in extractions:
        out |= {(r.subject.label or r.subject.canonical, r.object.label or r.object.canonical) for r in e.relations if r.property_iri == PKB + prop}
        out |= {(a.subject.label or a.subject.canonical, a.value) for a in e.attributes if a.property_iri == PKB + prop}
    return out


# --- act identifiers ------------------------------------------------------------------------------


def test_every_spelling_of_an_act_is_one_key_with_a_readable_label():
    text = ("Regulation (EU) 2016/679, Regulation (EU) No 648/2012, Directive 95/46/EC, Council Directive 84/253/EEC, "
            "Commission Decision 2009/78/EC and amending Regulations (EC) No 1060/2009, (EU) No 600/2014 and (EU) 2016/1011.")  # fmt: skip
    refs = list(act_references(text))
    assert [r.label for r in refs] == [
        "Regulation (EU) 2016/679", "Regulation (EU) No 648/2012", "Directive 95/46/EC", "Directive 84/253/EEC",
        "Decision 2009/78/EC", "Regulation (EC) No 1060/2009", "Regulation (EU) No 600/2014", "Regulation (EU) 2016/1011",
    ]  # fmt: skip
    assert refs[2].key == "directive 1995/46" and refs[1].key == "regulation 2012/648"
    assert all(text[r.start : r.end].split()[-1].rstrip(",.") in r.label for r in refs)
    assert act_from_celex("32016R0679") == ("regulation 2016/679", "Regulation (EU) 2016/679")
    assert act_from_celex("32012R0648") == ("regulation 2012/648", "Regulation (EU) No 648/2012")
    assert act_from_celex("32022L2555")[0] == next(act_references("Directive (EU) 2022/2555")).key
    assert act_from_celex("52020DC0080") is None  # not an act of sector 3


def test_numbers_that_are_not_acts_are_left_alone():
    assert list(act_references("See page 3/12 and Decision 3/2020 of the Board, and Regulation 5 of the rules.")) == []


def test_own_act_comes_from_the_celex_number_or_the_title():
    assert own_act(doc("x"))[:2] == ("regulation 2031/42", "Regulation (EU) 2031/42")
    titled = SourceDocument(doc_id="d", title="Regulation (EU) 2021/1119 establishing the framework for achieving climate "
                            "neutrality (‘European Climate Law’)", text="x", metadata={}, source="t", format="md", content_hash="h")  # fmt: skip
    assert own_act(titled) == ("regulation 2021/1119", "Regulation (EU) 2021/1119", ("European Climate Law", "Climate Law"))
    assert own_act(SourceDocument(doc_id="n", title="National plan", text="x", metadata={}, source="t", format="md", content_hash="h")) is None


# --- facts ------------------------------------------------------------------------------------------


def test_repeal_amendment_and_citations_are_typed(extractor):
    text = ("Repeal Directive (EU) 2019/77 is repealed with effect from 1 March 2032. Regulation (EU) 2018/1139 is amended "
            "as follows: in Article 17, a paragraph is added. The processing shall comply with Regulation (EU) 2016/679 of "
            "the European Parliament and of the Council of 27 April 2016 on the protection of natural persons, amending "
            "Regulation (EU) No 910/2014 and Directive (EU) 2018/1972, and repealing Directive 95/46/EC ( OJ L 119, 4.5.2016, p. 1).")  # fmt: skip
    ex = facts(extractor, doc(text))
    assert triples(ex, "repeals") == {("Regulation (EU) 2031/42", "Directive (EU) 2019/77"),
                                      ("Regulation (EU) 2016/679", "Directive 95/46/EC")}  # fmt: skip
    assert triples(ex, "amends") == {("Regulation (EU) 2031/42", "Regulation (EU) 2018/1139"),
                                     ("Regulation (EU) 2016/679", "Regulation (EU) No 910/2014"),
                                     ("Regulation (EU) 2016/679", "Directive (EU) 2018/1972")}  # fmt: skip
    assert triples(ex, "cites") == {("Regulation (EU) 2031/42", "Regulation (EU) 2016/679")}


def test_definitions_are_scoped_to_the_act_that_defines_them(extractor):
    text = ("Definitions For the purposes of this Regulation, the following definitions apply: (1) ‘data holder’ means a "
            "legal person that has the right to make data available; (2) 'user' means a natural or legal person that owns a "
            "connected product; (3) “data” means any digital representation of acts.")  # fmt: skip
    ex = facts(extractor, doc(text))
    assert triples(ex, "definition") == {
        ("data holder (Data Sharing Act)", "a legal person that has the right to make data available"),
        ("user (Data Sharing Act)", "a natural or legal person that owns a connected product"),
        ("data (Data Sharing Act)", "any digital representation of acts."),
    }
    other = facts(extractor, doc("(1) ‘user’ means a person who uses a product.", doc_id="32032r0001-art-2", celex="32032R0001",
                                 act="Product Act"))  # fmt: skip
    ours = {m for e in ex for m in e.mentions if m.class_iri == PKB + "DefinedTerm" and m.canonical == "user"}
    theirs = {m for e in other for m in e.mentions if m.class_iri == PKB + "DefinedTerm"}
    assert ours and theirs and {m.scope for m in ours} != {m.scope for m in theirs}  # look-alike terms stay apart
    assert triples(ex, "definedIn") >= {("user (Data Sharing Act)", "Regulation (EU) 2031/42")}


def test_provisions_carry_addressee_modality_time_limit_deadline_and_amounts(extractor):
    text = ("The Commission shall, not later than 72 hours after becoming aware of it, notify the incident to the Board. "
            "Member States shall adopt the measures by 17 October 2032. Infringements shall be subject to administrative fines "
            "of up to EUR 10 000 000 or up to 2 % of the total worldwide annual turnover. Providers may not charge a fee.")  # fmt: skip
    ex = facts(extractor, doc(text))
    modality = dict(triples(ex, "modality"))
    assert sorted(modality.values()) == ["may not", "shall", "shall", "shall"]
    actions = {a: v for a, v in triples(ex, "action")}
    notify = next(k for k in actions if "notify the incident" in k)
    assert notify.startswith("The Commission shall") and notify.endswith("(Data Sharing Act, Regulation (EU) 2031/42)")  # what linking matches
    assert (notify, "72 hours") in triples(ex, "timeLimit")
    assert any(who.lower().startswith("commission") for what, who in triples(ex, "addressee") if what == notify)
    fine = next(k for k in actions if "administrative fines" in k)
    assert (fine, "EUR 10 000 000") in triples(ex, "amount") and (fine, "10000000") in triples(ex, "amountValue")
    assert (fine, "2") in triples(ex, "percentage")
    adopt = next(k for k in actions if "adopt the measures" in k)
    assert (adopt, "2032-10-17") in triples(ex, "hasDeadline")
    assert (adopt, "Member State") in {(a, b.title()) for a, b in triples(ex, "addressee")}
    # A role noun the lexicon does not type is the addressee by its place before the modal.
    roles = facts(extractor, doc("1. Definitions apply. The controller and the processor shall designate an officer. "
                                 "The reports shall be made public."))  # fmt: skip
    assert {who for _, who in triples(roles, "addressee")} == {"controller and the processor"}  # a passive has none


def test_the_title_and_metadata_state_the_acts_own_links_once(extractor):
    title = ("Regulation (EU) 2031/42 of the European Parliament and of the Council on data sharing, amending Regulation "
             "(EU) 2017/2394 and repealing Directive (EU) 2019/77")  # fmt: skip
    text = "Article 1 This Regulation lays down rules on data sharing. " * 3 + "\n\nArticle 2 " + "It applies to data holders. " * 200
    ex = facts(extractor, doc(text, title=title, department="European Parliament, Council of the European Union"))
    assert len(ex) > 1
    first, rest = ex[:1], ex[1:]
    assert ("Regulation (EU) 2031/42", "Regulation (EU) 2017/2394") in triples(first, "amends")
    assert ("Regulation (EU) 2031/42", "Directive (EU) 2019/77") in triples(first, "repeals")
    assert {who for who, _ in triples(first, "issues")} >= {"European Parliament", "Council of the European Union"}
    assert not triples(rest, "amends") and not triples(rest, "issues")


@pytest.mark.parametrize(
    ("title", "issuers", "day"),
    [  # real formal titles (EUR-Lex), the non-breaking spaces included
        ("Directive (EU) 2022/2555 of the European Parliament and of the Council of 14\xa0December 2022 on measures for a "
         "high common level of cybersecurity across the Union, amending Regulation (EU) No\xa0910/2014",
         ("European Parliament", "Council of the European Union"), "2022-12-14"),
        ("Council Directive 2010/18/EU of 8 March 2010 implementing the revised Framework Agreement on parental leave",
         ("Council of the European Union",), "2010-03-08"),
        ("Commission Delegated Regulation (EU) 2019/856 of 26 February 2019 supplementing Directive 2003/87/EC",
         ("European Commission",), "2019-02-26"),
        ("European Parliament and Council Directive 94/62/EC of 20 December 1994 on packaging and packaging waste",
         ("European Parliament", "Council of the European Union"), "1994-12-20"),
        ("Decision No 529/2013/EU of the European Parliament and of the Council of 21 May 2013 on accounting rules",
         ("European Parliament", "Council of the European Union"), "2013-05-21"),
    ],
)  # fmt: skip
def test_an_eu_acts_formal_title_says_who_adopted_it_and_when(title, issuers, day):
    assert title_adoption(title) == Adoption(issuers, day)


def test_titles_that_are_not_formal_eu_titles_say_nothing():
    for title in ("Renewable Energy Act of 2024", "Regulation on Energy Efficiency in Public Buildings",
                  "Proposal for a Regulation of the European Parliament and of the Council", "GDPR Article 5", ""):  # fmt: skip
        assert title_adoption(title) is None
    assert title_adoption("Council Regulation (EU) 2020/1 of 31 February 2020").date is None  # no such day: no date, not a wrong one


def test_without_issuer_metadata_the_formal_title_names_the_issuers(extractor):
    title = "Regulation (EU) 2031/42 of the European Parliament and of the Council of 30 June 2031 on data sharing"
    ex = facts(extractor, doc("Article 1 This Regulation lays down rules on data sharing. " + "It applies to data holders. " * 200, title=title))
    assert triples(ex[:1], "issues") == {("European Parliament", "Regulation (EU) 2031/42"),
                                         ("Council of the European Union", "Regulation (EU) 2031/42")}  # fmt: skip
    assert not any(triples(ex[1:], "issues"))
    assert triples(ex, "adoptionDate") == {("Regulation (EU) 2031/42", "2031-06-30T00:00:00")}
    # the metadata, where it names issuers, is the authority
    ex = facts(extractor, doc("Article 1 This Regulation lays down rules on data sharing.", title=title, issuer="Data Board"))
    assert {who for who, _ in triples(ex, "issues")} == {"Data Board"}


# --- through the writer, the shapes and a store -----------------------------------------------------


def _stored(extractor, onto, d: SourceDocument, tmp_path: Path) -> OxigraphStore:
    """``d``'s facts written as the pipeline writes them, validated by the shapes (no conflict), in a store."""
    seg = segment(d)
    graphs = build_document_graphs(d, CATEGORY, seg, [extractor.extract(c, d, CATEGORY) for c in seg.chunks], BASE)
    validator = ShapeValidator(resource_dir("shapes"), resource_dir("ontologies"), onto)
    checked, conflicts = validate_document(d.doc_id, graphs, validator)
    assert conflicts == ()
    store = OxigraphStore(tmp_path / "store")
    store.extend(checked.quads)
    return store


def test_facts_pass_the_shapes_and_answer_sparql(extractor, onto, tmp_path: Path):
    text = ("Definitions (1) ‘data holder’ means a legal person that has the right to make data available; "
            "Directive (EU) 2019/77 is repealed. The Commission shall, within three months, publish guidelines. "
            "Infringements shall be subject to fines of up to EUR 500 000.")  # fmt: skip
    store = _stored(extractor, onto, doc(text), tmp_path)
    rows = store.select(f"""SELECT ?old ?def ?limit WHERE {{
        ?act <{PKB}repeals> ?o . ?o <{SKOS}prefLabel> ?old .
        ?t <{PKB}definition> ?def ; <{SKOS}prefLabel> ?term FILTER(STRSTARTS(STR(?term), "data holder"))
        ?p <{PKB}timeLimit> ?limit ; <{PKB}provisionOf> ?act }}""").rows
    assert [(r["old"].value, r["def"].value, r["limit"].value) for r in rows] == [
        ("Directive (EU) 2019/77", "a legal person that has the right to make data available", "three months")]
    amount = store.select(f"SELECT ?v WHERE {{ ?p <{PKB}amountValue> ?v }}").rows
    assert [float(r["v"].value) for r in amount] == [500000.0]
    store.close()


def test_switched_off_it_adds_nothing(onto):
    lexicon = LexiconExtractor(onto)
    d = doc("Directive (EU) 2019/77 is repealed. ‘user’ means a person.")
    seg = segment(d)
    plain = [lexicon.extract(c, d, CATEGORY) for c in seg.chunks]
    assert not any(r.property_iri in (PKB + "repeals", PKB + "definedIn") for e in plain for r in e.relations)


def test_the_lexicons_mention_of_an_act_becomes_that_act(extractor):
    """"Directive 2000/31/EC" is one entity with one label, whatever the lexicon made of it."""
    ex = facts(extractor, doc("The Commission shall apply Directive 2000/31/EC to the services."))
    acts = {(m.canonical, m.label) for e in ex for m in e.mentions if m.class_iri == PKB + "Legislation" and m.start < m.end}
    assert acts == {("directive 2000/31", "Directive 2000/31/EC")}


def test_the_act_named_by_its_identifier_in_its_own_text_is_the_documents_act(extractor):
    """The title heading "Regulation (EU) 2031/42 of the European Parliament …" in the text is no
    second act entity beside the document's own (its identifier links to the act the facts are about)."""
    title = "Regulation (EU) 2031/42 of the European Parliament and of the Council of 30 June 2031 on data sharing"
    ex = facts(extractor, doc(f"{title}\n\nArticle 1 Regulation (EU) 2031/42 lays down rules on data sharing.", title=title))
    acts = {(m.canonical, m.label) for e in ex for m in e.mentions if m.class_iri == PKB + "Legislation"}
    assert acts == {("regulation 2031/42", "Regulation (EU) 2031/42")}
    assert "Regulation (EU) 2031/42" in {m.text for e in ex for m in e.mentions if m.class_iri == PKB + "Legislation"}


def test_an_act_is_labelled_with_its_short_names_in_common_use(extractor, onto, tmp_path: Path):
    """Regulation (EU) 2023/1115's text never says "EUDR"; the KB labels the act so all the same."""
    title = "Regulation (EU) 2023/1115 of the European Parliament and of the Council of 31 May 2023 on … deforestation"
    d = SourceDocument(doc_id="32023R1115", title=title, text="Article 1 This Regulation lays down rules on commodities.",
                       metadata={"identifier": "32023R1115"}, source="t", format="md", content_hash="h")  # fmt: skip
    assert own_act(d) == ("regulation 2023/1115", "Regulation (EU) 2023/1115",
                          ("EU Deforestation Regulation", "Deforestation Regulation", "EUDR", "deforestation-free products regulation",
                           "EUDR Regulation"))  # fmt: skip  # "the EUDR regulation": the acronym with the act's type
    store = _stored(extractor, onto, d, tmp_path)
    rows = store.select(f"""SELECT ?alt WHERE {{ ?act <{SKOS}prefLabel> ?label ; <{SKOS}altLabel> ?alt
                            FILTER(STR(?label) = "Regulation (EU) 2023/1115") }}""").rows  # fmt: skip
    assert {"EUDR", "Deforestation Regulation"} <= {r["alt"].value for r in rows}
    store.close()


def test_the_document_node_carries_the_adoption_its_title_states(extractor, onto, tmp_path: Path):
    title = "Regulation (EU) 2031/42 of the European Parliament and of the Council of 30 June 2031 on data sharing"
    store = _stored(extractor, onto, doc("Article 1 This Regulation lays down rules on data sharing.", title=title), tmp_path)
    rows = store.select(f"SELECT ?day ?who WHERE {{ ?d <{DCTERMS}title> ?t ; <{DCTERMS}issued> ?day ; <{DCTERMS}publisher> ?who }}").rows
    assert sorted((r["day"].value[:10], r["who"].value) for r in rows) == [
        ("2031-06-30", "Council of the European Union"), ("2031-06-30", "European Parliament")]
    who = store.select(f"""SELECT ?name WHERE {{ ?i <{PKB}issues> ?act . ?i <{SKOS}prefLabel> ?name .
        ?act <{SKOS}prefLabel> ?label FILTER(STR(?label) = "Regulation (EU) 2031/42") }}""").rows
    assert sorted(r["name"].value for r in who) == ["Council of the European Union", "European Parliament"]
    day = store.select(f"SELECT ?day WHERE {{ ?act <{PKB}adoptionDate> ?day }}").rows  # passed the generated shapes
    assert [r["day"].value for r in day] == ["2031-06-30T00:00:00"]
    store.close()
