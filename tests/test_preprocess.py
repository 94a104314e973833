"""Preprocessor: format detection, extraction per format, cleaning, and precise InputErrors."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from core.errors import InputError
from kgpipeline.preprocess import (
    clean_text,
    detect_format,
    discover_files,
    load_documents,
    split_front_matter,
    strip_inline_headers,
    strip_page_furniture,
)

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "corpus"
DATA = ROOT.parent / "shared" / "data" / "policy_corpora"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared/data not present")


def make_pdf(pages: list[list[str]], title: str = "") -> bytes:
    """A minimal valid PDF: one Helvetica text line per entry, pages in order."""
    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    n = len(pages)
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(n))}] /Count {n} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, lines in enumerate(pages):
        ops = " ".join(f"({esc(line)}) Tj T*" for line in lines)
        content = f"BT /F1 11 Tf 14 TL 72 760 Td {ops} ET".encode()
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
            f" /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objs.append(f"<< /Title ({esc(title)}) >>".encode())
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for k, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, len(objs), xref)
    return bytes(out)


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return p


# --- detection and errors ---------------------------------------------------------------------


def test_detect_format_sniffs_content_before_extension(tmp_path):
    assert detect_format(write(tmp_path, "report.txt", make_pdf([["Hello"]]))) == "pdf"
    assert detect_format(write(tmp_path, "a.md", "# Title\n")) == "markdown"
    assert detect_format(write(tmp_path, "a.jsonl", "{}\n")) == "jsonl"
    assert detect_format(write(tmp_path, "page.view", "<!DOCTYPE html><html></html>")) == "html"
    assert detect_format(CORPUS / "westmark-wind-guidelines.html") == "html"


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("img.md", b"\x89PNG\r\n\x1a\n....", "binary file (PNG image)"),
        ("blob.txt", b"abc\x00\x01\x02def", "binary content (NUL bytes)"),
        ("notes.xyz", b"plain words", "unsupported file extension '.xyz'"),
        ("fake.pdf", b"this is not a pdf", "not a valid PDF file"),
        ("fake.docx", b"PK\x03\x04garbage", "corrupt zip container"),
        ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage", "PDF"),
        ("latin1.txt", "Gebäude".encode("latin-1"), "not valid UTF-8 (byte 0xe4 at offset 3)"),
        ("empty.md", b"", "empty file (0 bytes)"),
        ("blank.txt", b"   \n\n  ", "no text content"),
        ("bad-yaml.md", b"---\ntitle: [unclosed\n---\nBody text.\n", "invalid YAML front matter"),
        ("bad-cat.md", b"---\ncategory: poetry\n---\nBody text.\n", "unknown category 'poetry'"),
    ],
)
def test_bad_input_raises_input_error_with_precise_message(tmp_path, name, data, message):
    path = write(tmp_path, name, data)
    with pytest.raises(InputError) as exc:
        load_documents(path)
    assert message in str(exc.value)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)


def test_zip_that_is_not_docx_and_missing_and_directory_and_size_limit(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(InputError, match="zip archive that is not a DOCX"):
        load_documents(write(tmp_path, "x.docx", buf.getvalue()))
    with pytest.raises(InputError, match="file not found"):
        load_documents(tmp_path / "nope.md")
    with pytest.raises(InputError, match="is a directory"):
        load_documents(tmp_path)
    big = write(tmp_path, "big.txt", "word " * 1000)
    with pytest.raises(InputError, match="exceeds the size limit of 100 bytes"):
        load_documents(big, max_bytes=100)


# --- formats ------------------------------------------------------------------------------------


def test_markdown_front_matter_becomes_metadata():
    doc, = load_documents(CORPUS / "renewable-energy-act-2024.md").documents
    assert doc.doc_id == "nl-rea-2024"  # from `identifier`
    assert doc.title == "Renewable Energy Act of 2024"
    assert doc.metadata["date"] == "2024-03-15"  # YAML date made JSON-friendly
    assert doc.category == "legal-regulation"
    assert doc.text.startswith("# Renewable Energy Act of 2024\n\n## Chapter I General Provisions")
    assert "---" not in doc.text and len(doc.content_hash) == 16


def test_front_matter_requires_mapping():
    meta, rest = split_front_matter("---\njust a line\n---\nBody")
    assert meta == {} and rest.startswith("---")


def test_html_keeps_headings_and_drops_navigation_and_captions():
    doc, = load_documents(CORPUS / "westmark-wind-guidelines.html").documents
    assert doc.format == "html"
    assert doc.title == "Guidelines for Onshore Wind Siting in Westmark Province"
    assert "## Siting principles" in doc.text and "## Targets and timeline" in doc.text
    assert "Home" not in doc.text and "Figure 1" not in doc.text
    # Source line breaks inside <p> are soft.
    assert "to help municipalities select sites" in doc.text
    assert doc.metadata["issuer"] == "Energy Bureau of Westmark Province"


def test_docx_heading_styles_become_markdown_headings(tmp_path):
    import docx

    d = docx.Document()
    d.core_properties.title = "Westmark Storage Notice"
    d.add_heading("Westmark Storage Notice", level=0)  # "Title" style
    d.add_heading("1 Purpose", level=1)
    d.add_paragraph("The Energy Bureau of Westmark Province supports battery storage.")
    d.add_heading("1.1 Funding", level=2)
    d.add_paragraph("The Bureau will provide EUR 3 million by 31 May 2026.")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Year", "Amount"
    table.cell(1, 0).text, table.cell(1, 1).text = "2026", "EUR 3 million"
    path = tmp_path / "notice.docx"
    d.save(path)
    doc, = load_documents(path).documents
    assert doc.format == "docx" and doc.title == "Westmark Storage Notice"
    assert "## 1 Purpose" in doc.text and "### 1.1 Funding" in doc.text
    assert "| Year | Amount |\n| 2026 | EUR 3 million |" in doc.text


def test_docx_corrupt_package(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("word/document.xml", "<not-xml")
    with pytest.raises(InputError, match="corrupt DOCX"):
        load_documents(write(tmp_path, "bad.docx", buf.getvalue()))


def test_pdf_headers_footers_page_numbers_and_hyphenation(tmp_path):
    pages = [
        ["Nordland Energy Bureau - Annual Report", "Article 1 Scope", "The Bureau shall publish the regu-",
         "lation on grid access before the end", "of the year.", "Page 1 of 3"],
        ["Nordland Energy Bureau - Annual Report", "Figure 2: Installed capacity by region",
         "Article 2 Funds", "The Bureau will spend EUR 5 million.", "Page 2 of 3"],
        ["Nordland Energy Bureau - Annual Report", "Article 3 Entry into force",
         "This report applies from 1 May 2025.", "Page 3 of 3"],
    ]
    path = write(tmp_path, "report.pdf", make_pdf(pages, title="Annual Report 2025"))
    doc, = load_documents(path).documents
    assert doc.format == "pdf" and doc.title == "Annual Report 2025"
    assert "Annual Report" not in doc.text and "Page" not in doc.text and "Figure" not in doc.text
    assert "publish the regulation on grid access before the end of the year." in doc.text
    assert "Article 2 Funds\n\nThe Bureau will spend" in doc.text
    assert doc.metadata["page_count"] == 3


def test_pdf_without_text(tmp_path):
    with pytest.raises(InputError, match="no extractable text"):
        load_documents(write(tmp_path, "scan.pdf", make_pdf([[], []])))


def test_jsonl_bad_lines_are_skipped_and_reported(tmp_path):
    lines = [
        json.dumps({"id": "A-1", "title": "Opinion One", "text": "The Bureau issues this opinion."}),
        "{not json",
        json.dumps(["a", "list"]),
        json.dumps({"id": "A-3", "title": "No text"}),
        "",
        json.dumps({"id": "A-1", "content": "Duplicate id, content field.", "category": "standard"}),
        json.dumps({"id": "A-5", "text": "Bad category.", "category": "poetry"}),
    ]
    result = load_documents(write(tmp_path, "items.jsonl", "\n".join(lines)))
    assert [d.doc_id for d in result.documents] == ["a-1", "a-1-l6"]
    assert result.documents[1].category == "standard" and result.documents[1].source.endswith(":6")
    reasons = {s.line: s.reason for s in result.skipped}
    assert set(reasons) == {2, 3, 4, 7}
    assert reasons[2].startswith("not JSON") and "not a JSON object" in reasons[3]
    assert "no text field" in reasons[4] and "unknown category 'poetry'" in reasons[7]


def test_jsonl_with_no_usable_line(tmp_path):
    with pytest.raises(InputError, match=r"no usable JSONL records \(2 lines skipped; first: line 1: not JSON"):
        load_documents(write(tmp_path, "bad.jsonl", "nope\n[1]\n"))


def test_sample_jsonl_field_mapping():
    docs = load_documents(CORPUS / "bureau-statements.jsonl").documents
    assert [d.doc_id for d in docs] == ["neb-op-2025-01", "neb-ms-2025-02", "web-cm-2025-03"]
    assert docs[0].metadata["date"] == "2025-03-03" and "text" not in docs[0].metadata


# --- cleaning (pure) -----------------------------------------------------------------------------


def test_clean_text_unicode_wrap_and_captions():
    raw = (
        "The ﬁrst   Energy Bureau of Westmark Province shall estab-\nlish a centre\nfor\tdata.\r\n\r\n"
        "Table 2: Budget by year\n\nBund-\nLänder cooperation and Klima-\nund Umweltschutz continue.\n"
    )
    out = clean_text(raw, mode="plain")
    assert out.startswith("The first Energy Bureau of Westmark Province shall establish a centre for data.")
    assert "Table 2" not in out
    assert "Bund-Länder cooperation and Klima- und Umweltschutz continue." in out


def test_markdown_soft_wraps_join_but_lists_and_tables_stay():
    raw = "A paragraph that\nwraps here.\n\n- (a) item one\n- (b) item\n  continued\n\n| a | b |\n| 1 | 2 |\n"
    out = clean_text(raw, mode="markdown")
    assert out == "A paragraph that wraps here.\n\n- (a) item one\n\n- (b) item continued\n\n| a | b |\n| 1 | 2 |"


def test_strip_page_furniture_keeps_body_lines():
    pages = [f"Westmark Gazette No. {i}\nBody line {i} about wind.\n- {i} -" for i in range(1, 4)]
    assert strip_page_furniture(pages) == [f"Body line {i} about wind." for i in range(1, 4)]


def test_inline_running_headers_of_flattened_pdf_text():
    text = " ".join(f"Integrated Plan for Nordland {n} of 90 Text of page {n}." for n in (3, 4, 5))
    out, header = strip_inline_headers(text)
    assert header == "Integrated Plan for Nordland"
    assert "of 90" not in out and "Text of page 4." in out


def test_page_furniture_is_no_title(tmp_path):
    # A flattened plan opens with its page number, or the tail of its running header: the file name
    # says more than either (the NECP text exports: 11 of 162 were titled "52", "2.2", "and climate plan …").
    for first in ("52", "2.4.3.ii.", "and climate plan for the period 2021-2030 | 45"):
        path = tmp_path / "Nordland_National Objectives_Decarbonisation.txt"
        path.write_text(f"{first}\n\nNordland aims to cut emissions by 55 % by 2030 compared to 1990.\n", encoding="utf-8")
        doc, = load_documents(path).documents
        assert doc.title == "Nordland_National Objectives_Decarbonisation", first
    path.write_text("Integrated Plan for Nordland\n\nNordland aims to cut emissions.\n", encoding="utf-8")
    assert load_documents(path).documents[0].title == "Integrated Plan for Nordland"


def test_discover_files_lists_supported_sample_files():
    names = [p.name for p in discover_files(CORPUS)]
    assert "westmark-wind-guidelines.html" in names and "bureau-statements.jsonl" in names
    assert len(names) >= 10


def test_loading_is_deterministic():
    a, = load_documents(CORPUS / "national-solar-plan.md").documents
    b, = load_documents(CORPUS / "national-solar-plan.md").documents
    assert a == b and a.content_hash == b.content_hash


# --- real corpora ---------------------------------------------------------------------------------


@needs_data
def test_real_egd_markdown_and_articles_jsonl():
    doc, = load_documents(DATA / "egd_regulations" / "32021R1119.md").documents
    assert doc.doc_id == "32021r1119" and doc.title.startswith("Regulation (EU) 2021/1119")
    assert doc.metadata["source"] == "http://data.europa.eu/eli/reg/2021/1119/oj"
    assert "#### Article 2" in doc.text
    result = load_documents(DATA / "eu_regulations_pypi" / "articles.jsonl")
    assert len(result.documents) == 404 and not result.skipped
    assert len({d.doc_id for d in result.documents}) == 404
    first = result.documents[0]
    assert first.doc_id == "32016r0679-art-1" and first.title == "GDPR Article 1"
    assert first.metadata["eli"] == "http://data.europa.eu/eli/reg/2016/679/oj"


@needs_data
def test_real_necp_text_loses_inline_page_headers():
    path = DATA / "necp_national_energy_climate_plans" / "national_objectives_and_targets"
    doc, = load_documents(path / "Austria_National Objectives and Targets_Decarbonisation.txt").documents
    assert doc.title == "Integrated National Energy and Climate Plan for Austria"
    assert " of 268" not in doc.text
    doc, = load_documents(path / "France_National Objectives and Targets_Decarbonisation.txt").documents
    assert doc.title == "France_National Objectives and Targets_Decarbonisation"  # its text opens with page number 52
