"""Lists in policy text (spr/lists.py) and extractive answers that quote a list whole.

The passages are in the three shapes the corpora have: Markdown lists ("- (a) …" on their own lines,
as in EUR-Lex Markdown), hard-wrapped numbered lists (German laws, wrapped at ~72 columns) and
lists written inline in one sentence (EUR-Lex plain text).
"""

from __future__ import annotations

from spr.fuse import fuse, sentences
from spr.generate import ExtractiveGenerator
from spr.lists import Lines, is_item, item_kind, list_block, list_unit
from spr.records import ChunkRef, Evidence
from spr.scoring import LexicalScorer

B = "https://example.org/"
FUND = (
    "#### Article 9\n\n##### Exclusion from the scope of support\n\n"
    "The Fund shall not support:\n\n"
    "- (a) the decommissioning or the construction of nuclear power stations;\n\n"
    "- (b) the manufacturing, processing and marketing of tobacco and tobacco products;\n\n"
    "- (c) investment related to the production, processing, distribution, storage or combustion of fossil fuels.\n\n"
    "Member States shall report on the use of the Fund every year."
)
LAW = (
    "(1) Die Treibhausgasemissionen werden im Vergleich zum Jahr 1990\n"
    "schrittweise wie folgt gemindert:\n\n"
    "1.  bis zum Jahr 2030 um mindestens 65 Prozent,\n\n"
    "2.  auf mindestens minus 25 Millionen Tonnen bis\n    zum Jahr 2040 um mindestens 88 Prozent.\n\n"
    "(2) Bis zum Jahr 2045 werden die Treibhausgasemissionen so weit gemindert."
)


def texts(text: str) -> list[str]:
    return [s.text for s in sentences(text)]


def test_items_are_recognised_by_bullet_or_enumerator_not_by_a_capitalised_abbreviation():
    for item in ("- (a) x", "(iv) x", "b) x", "1. x", "(2) x", "• x", "- x"):
        assert is_item(item), item
    for text in ("(EU) 2021/1119 applies.", "A. Scope", "Article 9", "-5 % by 2030"):
        assert not is_item(text), text


def test_a_markdown_list_is_one_block_from_its_lead_in_to_the_item_ending_in_a_full_stop():
    lines = Lines.of(FUND)
    lead = texts(FUND).index("The Fund shall not support:")
    block = (lead, lead + 3)
    assert [list_block(lines, k) for k in range(lead, lead + 4)] == [block] * 4
    assert list_block(lines, lead + 4) is None  # "Member States shall report …" follows the list
    assert list_block(lines, 0) is None  # a heading


def test_a_lead_in_is_quoted_with_its_items_and_an_item_under_its_lead_in():
    lines = Lines.of(FUND)
    lead = texts(FUND).index("The Fund shall not support:")
    whole = list_unit(lines, lead, 1000)
    assert whole.text.startswith("The Fund shall not support: (a) the decommissioning")
    assert whole.text.endswith("combustion of fossil fuels.")
    assert FUND[whole.start : whole.end].startswith("The Fund shall not support:") and whole.covered == {lead, lead + 1, lead + 2, lead + 3}
    # An item alone would read like a permission; it comes after its lead-in.
    item = list_unit(lines, lead + 1, 1000)
    assert item.text == "The Fund shall not support: (a) the decommissioning or the construction of nuclear power stations; …"
    # Items that do not fit are left out, and the reader is told so.
    cut = list_unit(lines, lead, 120)
    assert cut.text.endswith("nuclear power stations; …") and lead + 2 not in cut.covered
    far = list_unit(lines, lead + 3, 80)
    assert far.text.startswith("The Fund shall not support: … (c) investment") and far.covered == {lead, lead + 3}
    assert FUND[far.start : far.end].endswith("fossil fuels.")  # the citation spans every quoted word
    assert list_unit(lines, lead, 0) is None


def test_a_hard_wrapped_list_is_read_as_whole_sentences():
    lines = Lines.of(LAW)
    shown = [" ".join(lines.line(k).split()) for k in range(len(lines))]
    # The splitter (core.text) joins the wrapped lines of the lead-in and of the second item.
    assert shown[0] == "(1) Die Treibhausgasemissionen werden im Vergleich zum Jahr 1990 schrittweise wie folgt gemindert:"
    assert shown[2] == "2. auf mindestens minus 25 Millionen Tonnen bis zum Jahr 2040 um mindestens 88 Prozent."
    unit = list_unit(lines, 0, 1000)
    assert unit.text == f"{shown[0]} 1. bis zum Jahr 2030 um mindestens 65 Prozent, {shown[2]}"
    assert list_unit(lines, 2, 1000) == unit  # the last item, under its lead-in with the item before it
    assert list_block(lines, 3) is None


def test_a_list_written_on_one_line_is_one_sentence_and_no_block():
    inline = "The officer shall have the following tasks: (a) to inform; (b) to monitor compliance."
    assert all(list_block(Lines.of(inline), k) is None for k in range(len(Lines.of(inline))))
    earlier = "Scope:\n- energy;\n- transport.\n- (c) stray item."
    assert list_block(Lines.of(earlier), 3) is None  # after a list's last item: no lead-in of its own


def answer(question: str, list_chars: int) -> tuple[str, str]:
    chunk = ChunkRef(B + "chunk/fund", B + "doc/fund", "Just Transition Fund Regulation", 500, 500 + len(FUND), FUND)
    context = fuse([Evidence("chunk", FUND, 0.8, "k", chunk=chunk)], 1000)
    draft = ExtractiveGenerator(LexicalScorer(0.3), max_facts=0, max_sentences=2, list_chars=list_chars).generate(question, context)
    for citation in draft.citations:  # each quoted sentence cites its own span
        assert FUND[citation.start - chunk.start : citation.end - chunk.start] == citation.quote  # exact document offsets
    return draft.text, draft.citations[0].quote


def test_extractive_answer_quotes_the_exclusion_with_its_lead_in():
    question = "Can the Fund support the construction of nuclear power stations?"
    before, _ = answer(question, 0)
    assert before.startswith("(a) the decommissioning or the construction of nuclear power stations;")  # reads like a permission
    text, quote = answer(question, 1000)
    assert text.startswith("The Fund shall not support: (a) the decommissioning or the construction of nuclear power stations;")
    assert quote.startswith("The Fund shall not support:") and "(a) the decommissioning" in quote
    assert text.count("nuclear power stations") == 1  # the list is not quoted twice


def test_two_items_of_one_list_share_one_quote_with_the_lead_in_once():
    text, quote = answer("Can the Fund support nuclear power stations or the marketing of tobacco products?", 100)
    assert text.count("The Fund shall not support:") == 1 and text.count("[1]") == 1
    assert "(a) the decommissioning" in text and "(b) the manufacturing, processing and marketing of tobacco" in text
    assert quote.startswith("The Fund shall not support:") and quote.endswith("tobacco products;")


def test_extractive_answer_to_a_what_question_lists_the_items():
    text, quote = answer("What shall the Fund not support?", 1000)
    assert "(a) the decommissioning" in text and "(b) the manufacturing" in text and "(c) investment" in text
    assert quote.endswith("fossil fuels.")


def test_llm_evidence_keeps_an_item_under_its_lead_in():
    from spr.llm_answer import focus

    chunk = ChunkRef(B + "chunk/fund", B + "doc/fund", "Just Transition Fund Regulation", 0, len(FUND), FUND)
    context = fuse([Evidence("chunk", FUND, 0.8, "k", chunk=chunk)], 1000)
    question = "Can the Fund pay for building nuclear power stations?"
    focused = focus(question, context, LexicalScorer(0.0), 40)
    (piece,) = focused.pieces
    assert "nuclear power stations" in piece.text
    assert piece.text.index("The Fund shall not support:") < piece.text.index("nuclear power stations")
    # The lead-in costs budget: with room for the item alone, neither is read (never a bare item).
    # (the item costs 24 estimated tokens, its lead-in 10)
    assert "nuclear" not in focus(question, context, LexicalScorer(0.0), 30).render()


PRICE = (
    "### § 19 Höchstpreis\n\n(1) Der Höchstpreis in den Ausschreibungen ist\n\n"
    "1.  im verkürzten Verfahren für das Jahr 2020 165 000 Euro pro Megawatt\n    Nettonennleistung,\n\n"
    "2.  für das Zieldatum 2022 155 000 Euro pro Megawatt Nettonennleistung und\n\n"
    "3.  für das Zieldatum 2026 89 000 Euro pro Megawatt Nettonennleistung.\n\n"
    "(2) Der Bieter darf höchstens den Höchstpreis bieten."
)


def test_a_lead_in_without_a_colon_opens_a_list_at_its_first_item():
    lines = Lines.of(PRICE)
    assert lines.line(1) == "(1) Der Höchstpreis in den Ausschreibungen ist"
    unit = list_unit(lines, 3, 1000)
    assert unit.text == (
        "(1) Der Höchstpreis in den Ausschreibungen ist 1. im verkürzten Verfahren für das Jahr 2020 165 000 Euro pro"
        " Megawatt Nettonennleistung, 2. für das Zieldatum 2022 155 000 Euro pro Megawatt Nettonennleistung und …"
    )
    assert list_block(lines, 1) == (1, 4)
    assert list_block(lines, 0) is None and list_block(lines, 5) is None  # the heading, the next paragraph
    assert item_kind("(b) x") == item_kind("(iv) x") == "alpha" and item_kind("2. x") == "digit" and item_kind("- x") == "bullet"


def test_a_numbered_paragraph_after_a_lettered_list_is_not_one_of_its_items():
    text = "Each plan shall contain:\n- (a) a timeline;\n- (b) the impacts;\n3. Member States shall publish the plans."
    lines = Lines.of(text)
    assert list_block(lines, 0) == (0, 2)
    assert list_block(lines, 3) is None
    # A line that ends without punctuation before a later item is no lead-in: only a first item opens a list.
    assert list_block(Lines.of("Scope of the plan\n(b) the impacts;"), 0) is None
    # A title over numbered paragraphs is no lead-in.
    assert list_block(Lines.of("Scope\n\n1. This Regulation applies to net-zero technologies.\n\n2. It does not apply to X."), 1) is None


def test_an_enumerator_after_a_line_that_ends_no_clause_starts_no_item():
    # "… (§ 111a Satz" / "1) ein Aufsichtsverfahren …": a wrapped sentence, even where the splitter
    # keeps the lines apart (the line before is shorter than a wrapped line usually is).
    text = "dass gegen ein Unternehmen (§ 111a Satz\n1) ein Aufsichtsverfahren eingeleitet worden ist."
    lines = Lines.of(text)
    assert len(lines) == 2 and lines.item(1) is None and lines.item(0) is None
    assert list_block(lines, 0) is None and list_block(lines, 1) is None
    assert Lines.of("Es gilt\n\n1) ein Verfahren.").item(1) == "digit"  # after a blank line it is an item


NESTED = (
    "Die Bundesregierung wird ermächtigt, durch Rechtsverordnung\n\n"
    "1.  Anforderungen an Windenergieanlagen zu regeln, und zwar\n\n"
    "a)  für Windenergieanlagen an Land Anforderungen\n\n"
    "aa) an das Verhalten der Anlagen im Fehlerfall,\n\n"
    "bb) an die Frequenzhaltung und\n\n"
    "b)  für Windenergieanlagen auf See Anforderungen an die Spannungshaltung,\n\n"
    "2.  in den Fällen des § 119 die Umlage abzusenken,\n\n"
    "3a. (weggefallen)\n\n"
    "4.  Ausnahmen zu regeln.\n\n"
    "Das Gesetz tritt am Tag nach der Verkündung in Kraft."
)


def test_a_list_nested_in_an_item_is_a_list_of_its_own_within_the_outer_one():
    lines = Lines.of(NESTED)
    assert lines.line(1).startswith("1.  Anforderungen")  # the splitter cut "1." off; the lines keep it
    assert [item_kind(lines.line(k)) for k in range(len(lines))] == [None, "digit", "alpha", "double", "double", "alpha", "digit", "digit", "digit", None]
    # Each line belongs to the innermost list it is in; the outer one runs over the nested ones.
    blocks = [list_block(lines, k) for k in range(len(lines))]
    assert blocks == [(0, 8), (1, 5), (2, 4), (2, 4), (2, 4), (1, 5), (0, 8), (0, 8), (0, 8), None]
    assert list_unit(lines, 6, 150).text == "Die Bundesregierung wird ermächtigt, durch Rechtsverordnung … 2. in den Fällen des § 119 die Umlage abzusenken, …"
    assert list_unit(lines, 4, 200).text == (
        "a) für Windenergieanlagen an Land Anforderungen aa) an das Verhalten der Anlagen im Fehlerfall, bb) an die Frequenzhaltung und"
    )


def test_llm_evidence_reads_a_lead_in_the_splitter_cut_after_its_number():
    from spr.llm_answer import focus

    text = "1.  Anforderungen an Windenergieanlagen auf See sind zu regeln, und zwar\n\na)  an die Frequenzhaltung der Anlagen,\n\nb)  an die Spannung."
    chunk = ChunkRef(B + "chunk/law", B + "doc/law", "Gesetz", 0, len(text), text)
    context = fuse([Evidence("chunk", text, 0.8, "k", chunk=chunk)], 1000)
    (piece,) = focus("Frequenzhaltung", context, LexicalScorer(0.0), 60).pieces
    # "1." and the rest of its line are two sentences to the focus; both come with the item
    assert piece.text.startswith("(Gesetz) 1. … Anforderungen an Windenergieanlagen auf See sind zu regeln, und zwar … a) an die Frequenzhaltung")


# An inline list as EUR-Lex plain text writes one: a single sentence of well over list_chars.
PRACTICES = (
    "Prohibited AI practices 1. The following AI practices shall be prohibited: "
    + "; ".join(f"({letter}) the placing on the market of AI systems that {what}, with the objective or the effect of "
                "materially distorting the behaviour of a person in a manner that causes significant harm"
                for letter, what in zip("abcd", ["deploy subliminal techniques", "exploit vulnerabilities of children",
                                                "evaluate persons by their social score", "scrape facial images from the internet"]))
    + "; and (e) the use of AI systems to infer emotions of a natural person in the workplace, except for medical or safety reasons. "
    "2. Member States shall lay down rules on penalties."
)


def inline_answer(question: str, list_chars: int = 300) -> tuple[str, str]:
    chunk = ChunkRef(B + "chunk/ai", B + "doc/ai", "AI Act", 0, len(PRACTICES), PRACTICES)
    context = fuse([Evidence("chunk", PRACTICES, 0.8, "k", chunk=chunk)], 2000)
    draft = ExtractiveGenerator(LexicalScorer(0.2), max_facts=0, max_sentences=1, list_chars=list_chars).generate(question, context)
    (citation,) = draft.citations
    assert PRACTICES[citation.start : citation.end] == citation.quote  # an exact span all the same
    return draft.text, citation.quote


def test_a_long_inline_list_is_quoted_by_the_item_that_answers_under_its_lead_in():
    text, quote = inline_answer("May an employer use AI to infer the emotions of workers in the workplace?")
    assert text.startswith("The following AI practices shall be prohibited: … (e) the use of AI systems to infer emotions")
    assert "subliminal" not in text and "social score" not in text  # the other items are skipped …
    assert quote.startswith("The following AI practices") and quote.endswith("medical or safety reasons.")  # … but stay in the cited span
    whole, _ = inline_answer("May an employer use AI to infer the emotions of workers in the workplace?", list_chars=5000)
    assert "subliminal" in whole  # a list that fits in list_chars is quoted whole, as before


def test_a_long_inline_list_whose_items_all_answer_is_quoted_whole():
    text, _ = inline_answer("Which AI practices placing AI systems on the market shall be prohibited?")
    assert all(f"({letter})" in text for letter in "abcde")


# What something must contain: EUR-Lex writes the contents as an inline list, EUR-Lex Markdown one
# item a line; either way every item answers "What must … contain?".
INSTRUCTIONS = (
    "The instructions for use shall contain at least the following information: "
    + "; ".join(f"({letter}) {what}, described in a manner that deployers of the system can follow and act upon"
                for letter, what in zip("abcd", ["the identity and contact details of the provider",
                                                "the characteristics and limitations of performance of the system",
                                                "the human oversight measures", "the expected lifetime of the system"]))
    + ". Providers shall keep the instructions up to date."
)


class ItemScorer:
    """Word overlap, except that an item read under its lead-in scores by its own words only — as the
    embedding half of the product's score often does: the lead-in's words do not lift every item."""

    name, threshold = "items", 0.2

    def score(self, question, candidates):
        own = [c.split(": ", 1)[1] if c.count("(") == 1 and ": (" in c else c for c in candidates]
        return LexicalScorer(self.threshold).score(question, own)


def contents_answer(question: str, text: str, list_chars: int = 300) -> str:
    chunk = ChunkRef(B + "chunk/ai", B + "doc/ai", "AI Act", 0, len(text), text)
    context = fuse([Evidence("chunk", text, 0.8, "k", chunk=chunk)], 4000)
    draft = ExtractiveGenerator(ItemScorer(), max_facts=0, max_sentences=1, list_chars=list_chars).generate(question, context)
    assert text[draft.citations[0].start : draft.citations[0].end] == draft.citations[0].quote
    return draft.text


def test_a_question_about_contents_gets_the_whole_inline_list_that_states_them():
    text = contents_answer("We sell a screening tool to employers. What must the instructions for use contain?", INSTRUCTIONS)
    assert all(f"({letter})" in text for letter in "abcd") and "…" not in text
    # a question about one item still gets that item under the lead-in
    one = contents_answer("Must the instructions for use give the provider's contact details?", INSTRUCTIONS)
    assert "(a) the identity and contact details" in one and "(d)" not in one


def test_a_question_about_contents_gets_a_line_list_past_list_chars():
    lines = "\n".join(f"- ({letter}) {what}, as described in the provider's technical documentation;"
                      for letter, what in zip("abcdef", ["a description of the system", "the intended purpose", "the risks",
                                                         "the oversight measures", "the data sets", "the lifetime"]))
    text = "Each plan shall include:\n" + lines + "\n\nMember States shall publish the plans."
    whole = contents_answer("What does each plan have to include?", text, list_chars=200)
    assert all(f"({letter})" in whole for letter in "abcdef") and not whole.rstrip(" [1]").endswith("…")
    cut = contents_answer("Does each plan include a description of the system?", text, list_chars=200)
    assert cut.startswith("Each plan shall include: (a) a description") and "(f)" not in cut  # no question about contents: cut as before
