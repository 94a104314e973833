"""Segmentor: heading detection, section tree, chunk offsets/ids, recursive splitter, speed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kgpipeline.preprocess import discover_files, load_documents
from kgpipeline.records import SourceDocument
from kgpipeline.segment import count_tokens, find_headings, match_heading, segment, split_span

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "corpus"
DATA = ROOT.parent / "shared" / "data" / "policy_corpora"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared/data not present")


def doc_of(text: str, doc_id: str = "d") -> SourceDocument:
    return SourceDocument(doc_id, "d.txt", "text", "T", text)


def check_chunks(doc: SourceDocument, seg, max_tokens: int = 512, min_tokens: int = 32) -> None:
    """The invariants every segmentation must keep."""
    assert seg.chunks, doc.doc_id
    for c in seg.chunks:
        assert doc.text[c.start : c.end] == c.text and c.text == c.text.strip()
        assert c.tokens == count_tokens(c.text)
    assert [c.ordinal for c in seg.chunks] == list(range(len(seg.chunks)))
    assert len({c.chunk_id for c in seg.chunks}) == len(seg.chunks)
    assert all(a.start < b.start for a, b in zip(seg.chunks, seg.chunks[1:]))
    # Every non-blank character of the document lies in some chunk.
    covered = bytearray(len(doc.text))
    for c in seg.chunks:
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
    assert all(covered[i] or doc.text[i].isspace() for i in range(len(doc.text)))
    ids = {s.section_id for s in seg.sections}
    assert all(s.parent_id is None or s.parent_id in ids for s in seg.sections)
    assert all(c.section_id == "" or c.section_id in ids for c in seg.chunks)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("Article 5 Penalties", ("article", "Article 5", "Penalties")),
        ("Art. 12a - Reporting", ("article", "Art. 12a", "Reporting")),
        ("§ 3 Begriffsbestimmungen", ("article", "§ 3", "Begriffsbestimmungen")),
        ("CHAPTER IV", ("chapter", "CHAPTER IV", "")),
        ("Part 2: Funding", ("part", "Part 2", "Funding")),
        ("IV. Funding and Budget", ("roman", "IV", "Funding and Budget")),
        ("B. Background", ("letter", "B", "Background")),
        ("1.2.3 Scope of application", ("numbered", "1.2.3", "Scope of application")),
        ("2. Targets", ("numbered", "2", "Targets")),
    ],
)
def test_match_heading_recognises_heading_kinds(line, expected):
    kind, _rank, number, title = match_heading(line)
    assert (kind, number, title) == expected


@pytest.mark.parametrize(
    "line",
    [
        "Article 5 of Regulation (EU) 2018/1999 is amended as follows:",
        "1. The Bureau shall publish the report by 31 March.",
        "2030 Targets",
        "15 GDP: http://www.example.org/statistics",
        "(a) the operator;",
        "In 2025 the Bureau will act.",
    ],
)
def test_match_heading_rejects_sentences_and_references(line):
    assert match_heading(line) is None


def test_tree_of_the_sample_act():
    doc, = load_documents(CORPUS / "renewable-energy-act-2024.md").documents
    seg = segment(doc)
    check_chunks(doc, seg)
    assert seg.strategy == "structure"
    top = seg.children(None)
    assert [s.heading for s in top] == [
        "Chapter I General Provisions", "Chapter II Obligations", "Chapter III Enforcement"]
    assert [s.order for s in top] == [0, 1, 2] and all(s.level == 1 for s in top)
    arts = seg.children(top[1].section_id)
    assert [(s.number, s.level, s.order) for s in arts] == [("Article 3", 2, 0), ("Article 4", 2, 1)]
    assert arts[0].section_id == "nl-rea-2024-s2.1"
    assert arts[0].path == ("Chapter II Obligations", "Article 3 Renewable Energy Registry")
    assert doc.text[top[1].start : top[1].end].startswith("## Chapter II Obligations")
    assert top[1].end == top[2].start
    # One chunk per article; the title and the chapter heading lines ride along with the next article.
    assert len(seg.chunks) == 6
    assert seg.chunks[0].text.startswith("# Renewable Energy Act of 2024\n\n## Chapter I")
    assert seg.chunks[0].section_id == "nl-rea-2024-s1.1"
    assert "shall establish a Renewable Energy Registry" in seg.chunks[2].text


def test_bare_article_headings_take_their_title():
    text = "#### Article 1\n\n##### Subject matter\n\nBody one.\n\n#### Article 2\n\nScope\n\nBody two.\n"
    heads = find_headings(text)
    assert [h.text for h in heads] == ["Article 1 Subject matter", "Article 2 Scope"]
    assert [h.level for h in heads] == [1, 1]


def test_plain_text_headings_levels_by_kind():
    text = "Chapter I Basics\n\nArticle 1 Aim\n\nText one.\n\nArticle 2 Means\n\nText two.\n\nChapter II More\n\nArticle 3 End\n\nText."
    heads = find_headings(text)
    assert [(h.number, h.level) for h in heads] == [
        ("Chapter I", 1), ("Article 1", 2), ("Article 2", 2), ("Chapter II", 1), ("Article 3", 2)]


def test_all_sample_documents_keep_the_invariants():
    for path in discover_files(CORPUS):
        for doc in load_documents(path).documents:
            check_chunks(doc, segment(doc))


def test_ids_are_deterministic_and_content_bound():
    doc, = load_documents(CORPUS / "national-solar-plan.md").documents
    a, b = segment(doc), segment(doc)
    assert [c.chunk_id for c in a.chunks] == [c.chunk_id for c in b.chunks]
    assert a.chunks[0].chunk_id.startswith("national-solar-plan-c0000-")
    edited = SourceDocument(doc.doc_id, doc.source, doc.format, doc.title, doc.text.replace("12 GW", "13 GW"))
    c = segment(edited)
    changed = [x.chunk_id != y.chunk_id for x, y in zip(a.chunks, c.chunks)]
    assert changed.count(True) == 1  # only the chunk whose text changed gets a new id


def long_text(paragraphs: int = 120) -> str:
    para = ("The Energy Bureau shall publish a report on grid congestion in Westmark Province. "
            "It will list every substation above 20 MW and the planned upgrades. ")
    return "\n\n".join(para for _ in range(paragraphs))  # 27 tokens per paragraph


def test_recursive_splitter_without_headings():
    doc = doc_of(long_text())
    seg = segment(doc)
    check_chunks(doc, seg)
    assert seg.strategy == "recursive" and seg.sections == ()
    assert len(seg.chunks) > 3
    assert all(c.tokens <= 512 for c in seg.chunks)
    # Consecutive windows overlap by whole paragraphs totalling at most 50 tokens: one here.
    for a, b in zip(seg.chunks, seg.chunks[1:]):
        assert b.start < a.end and count_tokens(doc.text[b.start : a.end]) == 27


def test_long_section_is_split_within_its_section():
    text = "# Title\n\n## 1 Intro\n\nShort intro text. It has two sentences.\n\n## 2 Grid\n\n" + long_text(60)
    doc = doc_of(text)
    seg = segment(doc)
    check_chunks(doc, seg)
    grid = [c for c in seg.chunks if c.section_path == ("2 Grid",)]
    assert len(grid) > 2 and all(c.tokens <= 512 for c in grid)
    assert grid[0].text.startswith("## 2 Grid")


def test_splitter_falls_back_to_sentences_words_and_hard_cuts():
    one_paragraph = " ".join(["The Bureau shall act."] * 300)
    spans = split_span(one_paragraph, 0, len(one_paragraph), max_tokens=100, overlap=10)
    assert all(count_tokens(one_paragraph[a:b]) <= 100 for a, b in spans)
    assert all(one_paragraph[a:b].endswith("act.") for a, b in spans)  # cut at sentence ends
    blob = "x" * 10 + ",y" * 400  # no whitespace at all: hard token cut
    spans = split_span(blob, 0, len(blob), max_tokens=64, overlap=8)
    assert spans[0][0] == 0 and spans[-1][1] == len(blob)
    assert all(count_tokens(blob[a:b]) <= 64 for a, b in spans)


def test_small_fragments_merge_into_a_neighbour():
    para = " ".join(["The Bureau shall report every quarter to the Ministry on the plan."] * 12)
    text = "\n\n".join([para] * 5 + ["Done."])  # a one-sentence tail fragment
    doc = doc_of(text)
    seg = segment(doc, max_tokens=300, overlap=0)
    check_chunks(doc, seg)
    assert seg.chunks[-1].text.endswith("Done.") and seg.chunks[-1].text != "Done."


@needs_data
def test_real_documents_keep_the_invariants_and_structure():
    doc, = load_documents(DATA / "egd_regulations" / "32021R1119.md").documents
    seg = segment(doc)
    check_chunks(doc, seg)
    arts = [s for s in seg.sections if s.number.startswith("Article")]
    assert len(arts) == 14 and arts[3].heading == "Article 4 Intermediate Union climate targets"
    law, = load_documents(DATA / "de_energy_laws" / "ksg.md").documents
    seg = segment(law)
    check_chunks(law, seg)
    paragraph_3 = next(s for s in seg.sections if s.number == "§ 3")
    assert paragraph_3.path == ("Abschnitt 2 - Klimaschutzziele und Jahresemissionsmengen", "§ 3 Nationale Klimaschutzziele")
    necp = DATA / "necp_national_energy_climate_plans" / "national_objectives_and_targets"
    for path in sorted(necp.glob("*.txt"))[:5]:
        d, = load_documents(path).documents
        check_chunks(d, segment(d))


@needs_data
def test_egd_corpus_preprocess_and_segment_speed():
    files = sorted((DATA / "egd_regulations").glob("3*.md"))
    t0 = time.perf_counter()
    chars = 0
    for path in files:
        for doc in load_documents(path).documents:
            segment(doc)
            chars += len(doc.text)
    elapsed = time.perf_counter() - t0
    print(f"EGD corpus: {len(files)} files, {chars} chars, {elapsed:.2f} s, {chars / 3000 / elapsed:.0f} pages/s")
    assert elapsed < 2.0
