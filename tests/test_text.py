"""core.text: sentence splitting (both modes its callers use) and the shared English morphology."""

from __future__ import annotations

import pytest

from core.text import (
    ABBREVIATIONS,
    IRREGULAR_VERBS,
    past_participle,
    past_tense,
    plural,
    present_participle,
    sentence_spans,
    singular,
    split_sentences,
    stem,
    third_person,
    verb_base,
)

LEGAL = "Regulation (EU) No. 2021/1119 applies. See Art. 5, p. 12 and pp. 3-4, cf. Arts. 6 and 7, e.g. in Member States."


# --- sentences ----------------------------------------------------------------------------------


def test_abbreviations_do_not_end_sentences():
    assert split_sentences(LEGAL) == [
        "Regulation (EU) No. 2021/1119 applies.",
        "See Art. 5, p. 12 and pp. 3-4, cf. Arts. 6 and 7, e.g. in Member States.",
    ]
    for abbreviation in ABBREVIATIONS:
        assert len(split_sentences(f"As in {abbreviation} 5 and {abbreviation} Annex.")) == 1, abbreviation
    # Only the listed spelling: "no." ending a sentence is a word.
    assert split_sentences("The answer is no. The rule stands.") == ["The answer is no.", "The rule stands."]


def test_trimmed_spans_keep_offsets_and_drop_blank_lines():
    text = "# Targets\n\n  The Plan sets 12 GW.  An interim target applies! \"Rooftops\" count.\r\n\n(2) 500 MW"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [
        "# Targets", "The Plan sets 12 GW.", "An interim target applies!", '"Rooftops" count.', "(2) 500 MW",
    ]  # fmt: skip
    assert all(text[a:b] == text[a:b].strip() for a, b in spans)


def test_a_capital_or_digit_is_required_after_the_stop_by_default():
    text = "Operators shall register; the Bureau may audit. approx. the same. 2030 is the year."
    assert split_sentences(text) == ["Operators shall register; the Bureau may audit. approx. the same.", "2030 is the year."]
    assert split_sentences(text, require_capital=False) == [
        "Operators shall register;", "the Bureau may audit.", "approx.", "the same.", "2030 is the year.",
    ]  # fmt: skip
    # Opening quotes and brackets may come before the capital; a stop must be followed by a blank
    # (one inside closing quotes or brackets ends nothing).
    assert split_sentences("It ends. (The next one.) It ends. \u201cQuoted.\u201d Done. [A] b.") == [
        "It ends.", "(The next one.) It ends.", "\u201cQuoted.\u201d Done.", "[A] b.",
    ]  # fmt: skip


def test_untrimmed_spans_tile_the_text():
    text = "\n\nNo. 5 applies. Art. 3 too; and e.g. this.\n\n  Next one.  "
    spans = sentence_spans(text, require_capital=False, trim=False)
    assert [text[a:b] for a, b in spans] == ["No. 5 applies.", " Art. 3 too;", " and e.g. this.\n\n", "  Next one.  "]
    # Contiguous from the first sentence to the end: every offset after the leading blank lines
    # falls in exactly one span.
    assert spans[0][0] == 2 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@pytest.mark.parametrize("text", ["", "   ", "\n\n", " \n \n "])
def test_blank_text_has_no_sentences(text):
    assert sentence_spans(text) == [] and split_sentences(text) == []
    assert sentence_spans(text, trim=False) == []


def test_a_text_without_a_stop_is_one_sentence():
    assert split_sentences("Rooftops: 500 MW") == ["Rooftops: 500 MW"]
    assert sentence_spans("Rooftops: 500 MW", trim=False) == [(0, 16)]


# --- morphology ---------------------------------------------------------------------------------


def test_irregular_table_drives_every_form():
    for base, (past, participle) in IRREGULAR_VERBS.items():
        assert past_tense(base) == past and past_participle(base) == participle
        assert stem(past) == stem(participle) == stem(base), base
    assert "find" not in IRREGULAR_VERBS and past_tense("found") == "founded"  # found = establish


@pytest.mark.parametrize(
    ("base", "third", "past", "participle", "ing"),
    [
        ("issue", "issues", "issued", "issued", "issuing"),
        ("establish", "establishes", "established", "established", "establishing"),
        ("apply", "applies", "applied", "applied", "applying"),
        ("deploy", "deploys", "deployed", "deployed", "deploying"),
        ("set", "sets", "set", "set", "setting"),
        ("ban", "bans", "banned", "banned", "banning"),
        ("plan", "plans", "planned", "planned", "planning"),
        ("aim", "aims", "aimed", "aimed", "aiming"),
        ("fix", "fixes", "fixed", "fixed", "fixing"),
        ("give", "gives", "gave", "given", "giving"),
        ("have", "has", "had", "had", "having"),
        ("agree", "agrees", "agreed", "agreed", "agreeing"),
        ("tie", "ties", "tied", "tied", "tying"),
    ],
)
def test_verb_forms(base, third, past, participle, ing):
    assert third_person(base) == third
    assert verb_base(third) == base
    assert past_tense(base) == past and past_participle(base) == participle
    assert present_participle(base) == ing


def test_verb_base_leaves_other_words_alone():
    assert [verb_base(w) for w in ("set", "children", "status", "analysis", "is", "does")] == [
        "set", "children", "status", "analysis", "be", "do",
    ]  # fmt: skip
    # "-ses" is read as "-se" + "s" ("uses", "imposes"), so a base in "-s" does not come back.
    assert third_person("focus") == "focuses" and verb_base("focuses") == "focuse"
    assert verb_base("imposes") == "impose" and verb_base("discusses") == "discuss"


def test_singular_and_plural():
    assert [singular(w) for w in ("bureaus", "authorities", "centres", "bus", "analysis", "Branches", "taxes")] == [
        "bureau", "authority", "centre", "bus", "analysis", "branch", "tax",
    ]  # fmt: skip
    for noun in ("policy", "agency", "plan", "branch", "tax", "authority", "bureau"):
        assert singular(plural(noun)) == noun


def test_stem_meets_inflections_and_leaves_numbers():
    groups = [
        ("issue", "issues", "issued", "issuing"),
        ("establish", "establishes", "established", "establishing"),
        ("register", "registers", "registered", "registering"),
        ("submit", "submits", "submitted", "submitting"),
        ("exceed", "exceeds", "exceeded", "exceeding"),
        ("policy", "policies"),
        ("build", "builds", "built", "building"),
    ]
    for words in groups:
        assert len({stem(w) for w in words}) == 1, words
    assert stem("Installations") == "installation"
    assert [stem(w) for w in ("2000", "200", "50,000", "1.5")] == ["2000", "200", "50,000", "1.5"]
    assert stem("set") == "set" and stem("led") == "lead"


def test_sentences_of_a_hard_wrapped_text_are_whole():
    from core.text import split_sentences

    law = (
        "(2) Bis zum Jahr 2045 werden die Treibhausgasemissionen so weit\n"
        "gemindert, dass Netto-Treibhausgasneutralität erreicht wird. Nach dem\n"
        "Jahr 2050 sollen negative Treibhausgasemissionen erreicht werden, und zwar bis zum 31.\n"
        "März eines jeden Jahres."
    )
    assert split_sentences(law) == [
        "(2) Bis zum Jahr 2045 werden die Treibhausgasemissionen so weit\ngemindert, dass Netto-Treibhausgasneutralität erreicht wird.",
        "Nach dem\nJahr 2050 sollen negative Treibhausgasemissionen erreicht werden, und zwar bis zum 31.\nMärz eines jeden Jahres.",
    ]
    # Short lines are headings, a clause end or a blank line ends the sentence, a Markdown heading,
    # bullet or table row starts anew.
    plain = "Article 5\nPenalties\nAn operator who fails to register shall pay a fine of up to EUR 50,000\nper installation.\n\nNext one"
    assert split_sentences(plain) == ["Article 5", "Penalties", "An operator who fails to register shall pay a fine of up to EUR 50,000\nper installation.", "Next one"]
    markdown = "The Fund shall support the following investments in every region\n- (a) SMEs;\n- (b) research.\n#### Article 9\n| a | b |"
    assert split_sentences(markdown) == ["The Fund shall support the following investments in every region", "- (a) SMEs;", "- (b) research.", "#### Article 9", "| a | b |"]
    assert split_sentences("It applies from 2030. March is not a day.") == ["It applies from 2030.", "March is not a day."]
