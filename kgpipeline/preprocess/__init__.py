"""Preprocessing stage: a file → cleaned, normalized :class:`SourceDocument` records.

Formats: PDF (pypdf), DOCX (python-docx), HTML (BeautifulSoup + lxml), Markdown (with YAML
front matter), plain text (front matter allowed too), JSONL (one document per line).

Modules: ``sniff`` (format detection, decoding), ``readers`` (PDF, DOCX, HTML, Markdown/text),
``jsonl`` (the JSONL reader), ``frontmatter`` (YAML front matter), ``clean`` (Unicode
normalization, page furniture, captions, de-hyphenation, paragraph joining), ``documents``
(title/id/category of a record), ``load`` (the entry points :func:`discover_files` and
:func:`load_documents`).

JSONL field mapping (first field present wins):
  text      ``text``, ``content``, ``body``, ``article_text``
  title     ``title``, ``name``, ``heading``; else ``act`` (+ " Article N" from ``article_number``)
  id        ``id``, ``doc_id``, ``identifier``, ``celex``, ``eli``; + "-art-N" from
            ``article_number``/``article``; else "<file stem>-<line>"; duplicates get "-l<line>"
  category  ``category`` (same values as front matter); every other field goes to metadata.
A line that is not a JSON object with text is skipped and reported in ``LoadResult.skipped``.
"""

from kgpipeline.preprocess.clean import clean_text, normalize_unicode, strip_inline_headers, strip_page_furniture
from kgpipeline.preprocess.documents import normalize_category
from kgpipeline.preprocess.frontmatter import split_front_matter
from kgpipeline.preprocess.load import DEFAULT_MAX_BYTES, discover_files, load_documents
from kgpipeline.preprocess.sniff import EXTENSIONS, detect_format

__all__ = [
    "DEFAULT_MAX_BYTES",
    "EXTENSIONS",
    "clean_text",
    "detect_format",
    "discover_files",
    "load_documents",
    "normalize_category",
    "normalize_unicode",
    "split_front_matter",
    "strip_inline_headers",
    "strip_page_furniture",
]
