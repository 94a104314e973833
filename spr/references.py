"""The numbers in policy text that state nothing: references to articles, paragraphs and acts
("Article 33(1)", "Regulation (EU) 2016/679", "Annex III"), Official Journal citations, the dated
footnotes of an act's history, section, page and list numbers. :mod:`spr.values` reads values
without them; :mod:`spr.verify` checks an answer's figures without them ("takes 2" is not backed by
"Article 2"). Depends on nothing else in :mod:`spr`, so both may import it.
"""

from __future__ import annotations

import re

MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
# References are numbers that state nothing: "Article 33(1)", "Regulation (EU) 2016/679", "point (b)",
# "Annex III", list numbering "2." at a sentence's start.
REFERENCE = re.compile(
    r"\b(?:articles?|art\.|paragraphs?|points?|subparagraphs?|annex(?:es)?|chapters?|sections?|titles?|recitals?|"
    r"parts?|tables?|figures?|tab\.|fig\.|§+)\s*[\dIVXLC]+(?:\.\d+)*[a-z]?\b(?:\s*\(\w{1,4}\))*(?:\s*(?:,|and|or|to)\s*[\dIVXLC]+[a-z]?\b(?:\s*\(\w{1,4}\))*)*"
    r"|\b(?:No\.?\s*)?\d{2,4}/\d{1,4}(?:/\w+)?\b|\(\d{1,3}\)|^\s*\d{1,3}[.)]\s"
    r"|\b\d+(?:\.\d+){2,}\b|\|\s*\d{1,4}\s*$"  # section numbers "2.1.2.3"; a page number "… | 37"
    # a paragraph's number inside an article: "… in the Union. 2. The provider …", "(Article 54) 2. … 3. …"
    r"|(?<=[.;:)…] )\d{1,3}\.(?= (?:[A-Z(‘'\"]|…))"
    r"|\bOJ [CL]\s?\d+\s?[A-Z]?,\s*\d{1,2}\.\d{1,2}\.\d{4},\s*p\.\s*\d+"  # "OJ C 233, 16.6.2022, p. 22"
    # an act's legislative history and the acts it cites, in its footnotes: "Position of the European
    # Parliament of 10 November 2022 … and decision of the Council of 28 November 2022", "Regulation
    # (EU) 2019/881 of the European Parliament and of the Council of 17 April 2019": dates of acts
    # and procedures, not of a rule
    rf"|\b(?:position|opinion|decision|council|commission)\b[^.;()]{{0,80}}?\bof \d{{1,2}} {MONTH} \d{{4}}",
    re.IGNORECASE,
)
# A footnote or page number before a sentence of extracted text: "38 In June 2018 …", "15 Source: …".
_LEADING_NUMBER = re.compile(r"^\s*\d{1,3}\s+(?=[A-Z(])")


def without_references(text: str) -> str:
    """``text`` without the numbers that state nothing: references ("Article 33(1)", "Regulation
    (EU) 2016/679", "Annex III"), footnote and page numbers.

    >>> without_references("Under Article 58(2) of Regulation (EU) 2016/679, fines reach 4 %.")
    'Under   of Regulation (EU)  , fines reach 4 %.'
    >>> without_references("… in the Union. 2. The provider shall act within 2 months. (Article 54) 2. … 3. …")
    '… in the Union.   The provider shall act within 2 months. ( )   …   …'
    """
    return REFERENCE.sub(" ", _LEADING_NUMBER.sub(" ", " ".join(text.split())))
