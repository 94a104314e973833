"""The answerability check (spr/answerable.py): premises the evidence must mention, values the
answer must state, and the abstentions it makes in the extractive and LLM answer paths."""

from __future__ import annotations

import pytest

from spr import answerable, asking
from spr.fuse import ContextPiece, FusedContext
from spr.generate import ExtractiveGenerator
from spr.records import ChunkRef, Evidence, is_abstention
from spr.scoring import LexicalScorer


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Within how many days must a manufacturer ship a security update?", "duration"),
        ("How long can it take to answer, and can it take longer?", "duration"),
        ("How often must the tests be run?", "duration"),
        ("What is the maximum fine the Commission can impose on a gatekeeper?", "money"),
        ("How much is the fee a provider pays to register a system?", "money"),
        ("What percentage of the cost of a heat pump is subsidised?", "money"),  # a cost: money or a share
        ("What share of its land area must a state designate for wind?", "percent"),
        ("How big a cut in emissions is Germany obliged to make by 2030?", None),
        ("By which year does Bulgaria intend to close the plants?", "time"),
        ("When does the Cyber Resilience Act apply in general?", "time"),
        ("By when must the plan be submitted?", "time"),
        # a deadline, a date or a time limit is a time (a date or a span: "within 72 hours")
        ("What was the deadline for Member States to transpose the Directive?", "time"),
        ("What is the latest date for ending coal-fired power in Germany?", "time"),
        ("Which is the shorter deadline: the breach report or the early warning?", "time"),
        ("What data must the provider keep?", None),
        ("How many experts sit on the scientific panel?", "number"),
        ("How much offshore wind capacity does Sweden aim for?", "number"),
        ("Who is responsible for AI literacy?", None),
        ("Is there any case in which the supervisor does not publish the penalty?", None),  # "in which" relates a clause
        ("Must the board members take cybersecurity courses?", None),
        # a question opening with a condition asks what its main clause asks (rag-eurlex)
        ("When adopting implementing acts under Regulation (EU) 2018/1139, what requirements must be taken into account?", None),
        ("If a provider breaches Article 5, how much can the fine be?", "money"),
        ("When does the CRA apply in general, and from when must manufacturers report?", "time"),
    ],
)
def test_asked_value(question, kind):
    assert asking.asked_value(question) == kind


@pytest.mark.parametrize(
    ("kind", "sentence", "question", "expected"),
    [
        ("duration", "The provider shall notify within 72 hours of becoming aware of it.", "", True),
        ("duration", "The controller shall reply within one month of receipt.", "", True),
        ("duration", "The report shall be submitted without undue delay.", "", True),
        ("duration", "The Commission shall adopt implementing acts under Article 45(2).", "", False),
        ("money", "Administrative fines up to 10 000 000 EUR shall be imposed.", "", True),
        ("money", "fines of up to 2 % of the total worldwide annual turnover", "", True),
        ("money", "Member States shall lay down the rules on penalties (Regulation (EU) 2016/679).", "", False),
        ("percent", "Renewables shall reach 30 % of gross final consumption.", "", True),
        ("percent", "Renewables shall reach 30 per cent by 2030.", "", True),
        ("percent", "Renewables shall reach a higher share by 2030.", "What share by 2030?", False),
        ("time", "This Regulation shall apply from 2 August 2026.", "", True),
        ("time", "The coal phase-out is planned by 2038.", "By which year is coal phased out?", True),
        ("time", "The coal phase-out is planned by 2038.", "Is coal phased out by 2038, and when?", False),
        ("number", "The panel shall consist of 60 independent experts.", "", True),
        ("number", "The panel is set up under Article 68 and Annex III.", "", False),
        ("number", "The target was set in 2019 for 2030.", "", False),  # years count for "when" only
        ("number", "Each Member State shall designate two authorities.", "", True),
    ],
)
def test_states_value(kind, sentence, question, expected):
    assert answerable.states_value(kind, sentence, question) is expected


def test_premise_names_skip_grammar_and_generic_words():
    assert answerable.premise_names("Acme rules apply to insurers?") == []  # a first word is capitalized by grammar
    assert answerable.premise_names("Does ACME apply to insurers?") == ["acme"]  # an acronym first is a name
    assert answerable.premise_names("Does a website need consent under the ePrivacy rules?") == ["eprivacy"]
    assert answerable.premise_names("How many heat pumps does Denmark's plan aim for?") == ["denmark"]


def test_an_act_named_by_its_short_name_is_one_premise():
    assert answerable.premise_names("Under the EU Data Act, what is the notice period?") == ["data act"]
    assert answerable.premise_names("Does DORA apply to insurers?") == ["dora"]
    assert answerable.premise_names("Does a website need consent under the ePrivacy Directive?") == ["eprivacy directive"]
    # the act's words are not what the question is about
    assert answerable.focus_words("How many members does the Data Governance Act's board have?") == {"board", "member"}


def test_an_act_is_found_by_any_of_its_names_or_its_identifier():
    deforestation = ["Regulation (EU) 2023/1115 of the European Parliament … on deforestation", "Article 3 Prohibition"]
    assert answerable.missing_premises("Which commodities does the EUDR cover?", deforestation) == []
    assert answerable.missing_premises("Which commodities does the EU Deforestation Regulation cover?", deforestation) == []
    cra = ["Cyber Resilience Act Article 64", "Non-compliance … administrative fines of up to EUR 15 000 000 … digital markets"]
    assert answerable.missing_premises("What is the maximum fine under the CRA?", cra) == []
    # the words of an act the evidence does not hold ("digital", "markets") do not stand in for it
    assert answerable.missing_premises("What is the maximum fine under the Digital Markets Act?", cra) == ["digital markets act"]
    cra_passage = answerable.Passage(tuple(cra), ("Non-compliance shall be subject to administrative fines of up to EUR 15 000 000.",))
    verdict = answerable.check("What is the maximum fine the European Commission can impose under the Digital Markets Act?", [cra_passage])
    assert not verdict.answerable and verdict.reason == "the evidence never mentions: digital markets act"


def test_missing_premises_match_word_starts_and_numbers_in_any_form():
    texts = ["Germany's climate plan sets 20 000 000 tonnes for 2030."]
    assert answerable.missing_premises("What does the German plan set for 2030?", texts) == []
    assert answerable.missing_premises("Does the plan set 20 million tonnes?", texts) == []
    assert answerable.missing_premises("What does Austria set for 2040?", texts) == ["austria", "2040"]


def test_regression_the_askers_case_is_no_premise():
    """dev-de: "installed in 1995" abstained ("never mentions: 1995") where § 72 GEG answers by a rule."""
    rule = answerable.Passage(("Heizkessel, die ab dem 1. Januar 1991 eingebaut wurden …", "GEG › § 72"),
                              ("Heizkessel dürfen nach Ablauf von 30 Jahren nicht mehr betrieben werden.",))  # fmt: skip
    case = "My gas boiler was installed in 1995. Can I keep running it indefinitely?"
    assert answerable.check(case, [rule]).answerable
    assert answerable.missing_premises(case, rule.texts) == []
    # The sentence that asks still states premises: a number there must be in the evidence.
    assert answerable.missing_premises("My boiler is old. Can a boiler installed in 1995 keep running?", rule.texts) == ["1995"]
    units = answerable.Passage(("Stromsteuergesetz › § 3",), ("Die Steuer beträgt 20,50 Euro je Megawattstunde.",))
    assert answerable.missing_premises("What is the electricity tax per MWh?", units.texts) == []  # a unit symbol names nothing


def test_a_quoted_phrase_is_a_premise_like_a_number():
    """SQuAD 2.0: "Who wrote 'On the Computational Complexity of Science'?" was answered from the
    passage on "… of Algorithms" (every capitalized word of the title is there, one by one)."""
    paper = answerable.Passage(("Hartmanis and Stearns wrote On the Computational Complexity of Algorithms in 1965.",),
                               ("Hartmanis and Stearns wrote On the Computational Complexity of Algorithms in 1965.",))  # fmt: skip
    swapped = answerable.check('Who wrote "On the Computational Complexity of Science"?', [paper])
    assert not swapped.answerable and swapped.missing[-1] == "“on the computational complexity of science”"
    assert answerable.check('Who wrote "On the Computational Complexity of Algorithms"?', [paper]).answerable
    # a term of art, inflected in the text; one quoted word is a scare quote, no premise
    csrd = ["Large undertakings shall include a sustainability statement in their management report."]
    assert answerable.missing_premises("Must a 'large undertaking' report?", csrd) == []
    assert answerable.missing_premises('Which "important" entity must report?', csrd) == []


def test_check_reasons():
    estonia = answerable.Passage(("Estonia plans …", "Estonia's NECP"), ("Oil shale power ends in 2035.",))
    ok = answerable.check("By which year does Estonia stop oil shale power?", [estonia])
    assert ok.answerable and ok.asked == "time" and ok.answers == ("Oil shale power ends in 2035.",)
    missing = answerable.check("By which year does Norway stop coal?", [estonia])
    assert not missing.answerable and missing.missing == ("norway",)
    assert missing.reason == "the evidence never mentions: norway"
    report = answerable.Passage(("The report …",), ("The report is sent promptly.",))
    untyped = answerable.check("How many days does it take?", [report])
    assert not untyped.answerable and untyped.reason == "no sentence states a duration"


def test_a_value_counts_only_in_a_passage_about_the_question_subject():
    romania = answerable.Passage(("Romania could use hydrogen …", "Romania_NECP"), ("Romania could produce 3 TWh of hydrogen.",))
    croatia = answerable.Passage(("Croatia's plan on hydrogen …", "Croatia_NECP"), ("Hydrogen matters.",))
    verdict = answerable.check("How much renewable hydrogen does Croatia's plan aim to produce?", [romania, croatia])
    assert not verdict.answerable and verdict.reason == "no sentence states a number"
    # a comparison names two subjects; a passage about either may state the value
    greece = answerable.Passage(("Greek lignite …", "Greece_NECP"), ("Lignite plants close by 2028.",))
    both = answerable.check("Which closes lignite plants first, Germany or Greece, and in what year?", [greece])
    assert both.answerable and both.answers == ("Lignite plants close by 2028.",)


def test_a_quantity_must_stand_next_to_what_it_counts():
    # dev-necp's "How many heat pumps …" was answered with a count of something else
    counts = "Denmark counts 11 new offshore wind farms towards its 2030 target."
    denmark = answerable.Passage((counts,), (counts,), ("Denmark_NECP", "Renewables"))
    declined = answerable.check("How many heat pumps does Denmark's plan aim to have installed by 2030?", [denmark])
    assert not declined.answerable and declined.reason == "no sentence stating a number mentions: heat, install, pump"
    units = "Denmark aims for 500,000 units by 2030."
    pumps = answerable.Passage((units,), (units,), ("Denmark_NECP", "Heat pumps"))
    under_heading = answerable.check("How many heat pumps does Denmark's plan aim to have installed by 2030?", [denmark, pumps])
    assert under_heading.answerable  # the heading says what the figure counts
    # it decides whether to answer, not the order of the value-stating sentences
    shares = ("Poland declares to achieve a 21%-23% share of RES by 2030.", "Poland must reach a 15% share of renewable energy by 2020.")
    poland = answerable.Passage(shares, shares, ("Poland_NECP", "Targets"))
    verdict = answerable.check("What renewables share does Poland commit to reaching by 2030?", [poland])
    assert verdict.answerable and verdict.answers[0].startswith("Poland declares")
    # dates and durations belong to events said in verbs ("invade" / "invasion"): not checked
    landed = "The Normans landed after their invasion at Bannow Bay in 1169."
    bay = answerable.Passage((landed,), (landed,))
    assert answerable.check("In what year did the Normans invade at Bannow Bay?", [bay]).answerable


def test_a_target_must_be_for_the_asked_year():
    # dev-necp's "What share … does Greece aim for in 2040?" was answered with its 2030 share
    target = "The national objective for the RES share in gross final energy consumption is at least 35% by 2030."
    greece = answerable.Passage((target, "Greece plans for 2030 and 2040"), (target,), ("Greece_NECP", "Renewable energy sources"))
    declined = answerable.check("What share of renewable energy does Greece aim for in 2040?", [greece])
    assert not declined.answerable and declined.reason == "no sentence stating a percent is for 2040"
    assert answerable.check("What share of renewable energy does Greece aim for by 2030?", [greece]).answerable
    # the year may stand in the heading the figure is under (a table row under "Targets for 2040")
    row = "The share of renewable energy in gross final energy consumption reaches 45%."
    table = answerable.Passage((row, "Greece_NECP"), (row,), ("Greece_NECP", "Targets for 2040"))
    assert answerable.check("What share of renewable energy does Greece aim for in 2040?", [greece, table]).answerable
    # an act's number is no year; a question without a year is not checked this way
    assert asking.question_years("What does Regulation (EU) 2018/1999 require in 2030?") == {"2030"}
    assert answerable.check("What share of renewable energy does Greece aim for?", [greece]).answerable


def test_a_passage_about_one_option_is_about_the_subject():
    # "On the Iberian peninsula, …, Spain's or Portugal's?": Portugal's passage never says "Iberian"
    # nor "Spain", yet it states Portugal's value; before, only a passage naming two of the three did
    share = "Renewables are expected to contribute at least 80% of electricity generation by 2030."
    portugal = answerable.Passage((share, "Portugal_NECP"), (share,))
    question = "On the Iberian peninsula, which plan foresees a higher renewable share in electricity for 2030, Spain's or Portugal's?"
    iberia = answerable.Passage(("Spain and Portugal form the Iberian Peninsula.",), ("The Iberian interconnection ratio is 2.8%.",))
    verdict = answerable.check(question, [iberia, portugal])
    assert verdict.answerable and share in verdict.answers
    romania = answerable.Passage((share, "Romania_NECP"), (share,))  # about neither option
    assert share not in answerable.check(question, [iberia, romania]).answers


def _context(*passages: tuple[str, str]) -> FusedContext:
    """A context of passages (title, text) as the fusion packs them."""
    pieces, sources = [], {}
    for cid, (title, text) in enumerate(passages, start=1):
        chunk = ChunkRef(f"urn:c{cid}", f"urn:d{cid}", title, 0, len(text), text)
        evidence = Evidence(kind="chunk", text=text, score=1.0, source="vector", chunk=chunk)
        pieces.append(ContextPiece(cid=cid, evidence=evidence, text=text, tokens=len(text.split())))
        sources[cid] = chunk
    return FusedContext(tuple(pieces), sources, sum(p.tokens for p in pieces), 1000)


def test_extractive_answer_quotes_the_sentence_that_states_the_value():
    context = _context(("Cyber Resilience Act", "Manufacturers shall report exploited vulnerabilities to the CSIRT. "
                        "Manufacturers shall send an early warning within 24 hours of becoming aware of an exploited vulnerability."))
    generator = ExtractiveGenerator(LexicalScorer(0.2), max_facts=0, max_sentences=1, check=True)
    draft = generator.generate("Within how many hours must manufacturers report exploited vulnerabilities?", context)
    assert not draft.abstained and "24 hours" in draft.text


def test_extractive_answer_abstains_when_the_premise_is_missing_or_no_value_is_stated():
    context = _context(("Cyber Resilience Act", "Manufacturers shall report exploited vulnerabilities to the CSIRT."))
    generator = ExtractiveGenerator(LexicalScorer(0.2), max_facts=0, max_sentences=1, check=True)
    no_value = generator.generate("Within how many hours must manufacturers report exploited vulnerabilities?", context)
    assert is_abstention(no_value.text) and no_value.abstain_reason == "no sentence states a duration"
    other_act = generator.generate("Must manufacturers report exploited vulnerabilities under MiCA?", context)
    assert is_abstention(other_act.text) and other_act.abstain_reason == "the evidence never mentions: mica"
    unchecked = ExtractiveGenerator(LexicalScorer(0.2), max_facts=0, max_sentences=1, check=False)
    assert not unchecked.generate("Must manufacturers report exploited vulnerabilities under MiCA?", context).abstained


def test_a_question_that_turns_its_closest_sentence_round_is_declined():
    """SQuAD 2.0's unanswerable questions copy a sentence with one word turned: an antonym, a
    negation, another number. The check declines them and says which word."""
    context = _context(("Complexity", "The question of whether P equals NP is one of the most important open questions in "
                        "theoretical computer science. A computational problem can be viewed as an infinite collection of "
                        "instances together with a solution for every instance."))  # fmt: skip
    generator = ExtractiveGenerator(LexicalScorer(0.2), max_facts=0, max_sentences=1, check=True)
    least = generator.generate("What is one of the least important open questions in theoretical computer science?", context)
    assert is_abstention(least.text) and least.abstain_reason == "the sentence says 'most', not 'least'"
    limited = generator.generate("What can be viewed as a limited collection of instances together with a solution?", context)
    assert limited.abstain_reason == "the sentence says 'infinite', not 'limited'"
    negated = generator.generate("What is not one of the most important open questions in theoretical computer science?", context)
    assert negated.abstain_reason == "the question says 'not', the sentence does not"
    # the question as the sentence says it is answered
    most = generator.generate("What is one of the most important open questions in theoretical computer science?", context)
    assert not most.abstained and "P equals NP" in most.text
    # one aligned sentence without a contrast answers, whatever the others say
    both = _context(("Plans", "Coal use will increase in the north until 2025. Coal use will decrease in the north after 2025."))
    assert not generator.generate("When will coal use decrease in the north?", both).abstained


@pytest.mark.parametrize(
    ("kind", "sentence"),
    [
        ("time", "BEK ( 1 ) OJ C 233, 16.6.2022, p. 22 ."),  # an Official Journal reference
        # an act's footnotes: its legislative history and the acts it cites, dated (dev-eu's DORA and CRA
        # application dates were answered with them)
        ("time", "( 3 ) Position of the European Parliament of 10 November 2022 (not yet published in the Official "
                 "Journal) and decision of the Council of 28 November 2022."),
        ("time", "( 3 ) Regulation (EU) 2019/881 of the European Parliament and of the Council of 17 April 2019 on ENISA."),
        ("time", "and climate plan for the period 2021-2030 | 45"),  # a running header with its page
        ("number", "38 In June 2018 the Parliament agreed on a policy framework."),  # a footnote mark
        ("number", "Luxembourg aims, as set out in Section 2.1.1, for lower demand."),  # a section number
        ("number", "Source: the 4th National Energy Efficiency Action Plan."),  # an ordinal
        ("number", "2.2."),  # a heading
        ("duration", "Staff shall ensure the participation of providers in the tests for 3 years."),
    ],
)
def test_extracted_text_furniture_states_no_value(kind, sentence):
    expected = kind == "duration"  # "participation" is not "part" + a roman numeral
    assert answerable.states_value(kind, sentence, "") is expected


def test_dated_rules_still_state_their_dates():
    assert answerable.states_value("time", "It shall apply from 17 January 2025.", "Since when do the rules apply?")
    assert answerable.states_value("time", "The Commission shall adopt a decision by 31 December 2025.", "")


def test_a_count_needs_a_noun_or_unit_after_the_number():
    assert answerable.states_value("number", "It expects 20 stations by 2030.", "How many stations by 2030?")
    assert not answerable.states_value("number", "Efficiency improves by 39.5% by 2030.", "How many jobs by 2030?")
    assert answerable.states_value("number", "Emissions fall by 70 % by 2030.", "How much do emissions fall by 2030?")
    assert answerable.states_value("number", "It is presumed when compute is greater than 10 25 .", "How much compute?")


def test_money_and_ranges_are_not_counts():
    question = "How many nuclear power plants does Nordland operate?"
    assert not answerable.states_value("number", "The state gives EUR 300 million from the fund between 2025 and 2029.", question)
    assert not answerable.states_value("number", "It costs 300 euros per plant.", question)
    assert answerable.states_value("number", "Nordland operates 3 nuclear power plants.", question)


def test_a_count_in_units_is_asked_for_by_naming_the_unit():
    sentence = "The strategy sets a goal of 2 GW of electrolyser capacity by 2030."
    assert not answerable.states_value("number", sentence, "How many nuclear power plants does Nordland operate?")
    assert answerable.states_value("number", sentence, "How many gigawatts of electrolysers does Nordland plan?")


def test_a_value_asked_in_a_unit_must_be_stated_in_a_unit_of_its_dimension():
    # dev-necp's "How many gigawatts of offshore wind does Hungary plan …?" (unanswerable) could be
    # answered by a renewables share and a count of something else
    share = "Hungary plans to raise wind and solar power to a 21 % share by 2030 in 20 municipalities."
    hungary = answerable.Passage((share, "Hungary_NECP"), (share,), ("Hungary_NECP", "Renewables"))
    declined = answerable.check("How many gigawatts of offshore wind does Hungary plan to install by 2030?", [hungary])
    assert not declined.answerable and declined.reason == "no sentence states a number in units of power"
    stated = "Hungary plans 1.2 GW of offshore wind by 2030."
    wind = answerable.Passage((stated, "Hungary_NECP"), (stated,), ("Hungary_NECP", "Offshore wind"))
    assert answerable.check("How many gigawatts of offshore wind does Hungary plan to install by 2030?", [hungary, wind]).answerable
    # "capacity" is power, or energy for storage; a unit after "per" is a rate's, not the one asked
    assert asking.asked_dimensions("How much new nuclear capacity does Portugal's plan foresee by 2030?") == {"power", "energy"}
    storage = "Storage reaches 3 GWh in 2030."
    battery = answerable.Passage((storage, "Portugal_NECP"), (storage,), ("Portugal_NECP", "Storage"))
    assert answerable.check("How much storage capacity does Portugal's plan foresee by 2030?", [battery]).answerable
    assert asking.asked_dimensions("How much less electricity tax per MWh do railways pay?") == frozenset()
    # the units as German laws write them, for English questions over them (translated retrieval)
    assert answerable.states_dimension(frozenset({"power"}), "bis zum Jahr 2030 auf 8 Gigawatt Steinkohle")
    assert not answerable.states_dimension(frozenset({"power"}), "20,50 Euro je Megawattstunde")


def test_the_date_of_an_end_needs_a_sentence_that_speaks_of_an_end():
    # dev-necp's "In which year does Czechia plan to stop generating electricity from coal?"
    # (unanswerable) was answered with a table of 2040 fuel shares
    table = "Table 36: Share of fuels in gross electricity generation, 2016 level and 2040 target: coal 50 % and 11-21 %."
    czechia = answerable.Passage((table, "Czechia_NECP"), (table,), ("Czechia_NECP", "Electricity"))
    declined = answerable.check("In which year does Czechia plan to stop generating electricity from coal?", [czechia])
    assert not declined.answerable and declined.reason == "no sentence stating a time says that anything ends"
    exit_ = "The gradual phase-out of coal-fired power generation by no later than 2038 is to be enshrined in law."
    germany = answerable.Passage((exit_, "Germany_NECP"), (exit_,), ("Germany_NECP", "Decarbonisation"))
    assert answerable.check("By what year at the latest does Germany intend to stop generating electricity from coal?", [germany]).answerable
    # a question about a start or a deadline is not asked about an end
    dated = "Member States shall apply those measures from 18 October 2024."
    assert answerable.check("From when do the national measures apply?", [passage(dated)]).answerable


# --- German questions (read through spr.gloss) ----------------------------------------------------
CERTIFICATE = "(3) Ein Energieausweis ist für eine Gültigkeitsdauer von zehn Jahren auszustellen."
TAX = "Die Steuer beträgt 20,50 Euro für eine Megawattstunde."
CITIES = "Gemeindegebiete mit mehr als 100 000 Einwohnern legen Wärmepläne vor."


def passage(*sentences: str) -> answerable.Passage:
    return answerable.Passage(tuple(sentences), tuple(sentences))


@pytest.mark.parametrize(
    "question, kind",
    [
        ("Wie lange ist ein Energieausweis gültig?", "duration"),
        ("Wie hoch ist der Stromsteuersatz für Bahnen?", "money"),
        ("Welchen Anteil des Bruttostromverbrauchs sollen erneuerbare Energien 2030 decken?", "percent"),
        ("Bis wann soll die Bundesverwaltung klimaneutral sein?", "time"),
        ("Wie viele Mitglieder hat der Expertenrat?", "number"),
        ("Welche Behörde überwacht den Netzzugang?", None),
    ],
)
def test_german_questions_ask_for_the_same_kinds_of_value(question, kind):
    from spr.gloss import gloss

    assert asking.asked_value(gloss(question)) == kind


def test_german_questions_are_checked_and_answered_with_the_german_sentence():
    ok = answerable.check("Wie lange ist ein Energieausweis gültig?", [passage("Der Ausweis wird ausgestellt.", CERTIFICATE)])
    assert ok.answerable and ok.asked == "duration" and ok.answers == (CERTIFICATE,)
    money = answerable.check("Wie hoch ist der reguläre Stromsteuersatz?", [passage(TAX)])
    assert money.answerable and money.answers == (TAX,)
    # the value must be stated: a sentence without one does not answer "wie hoch"
    none = answerable.check("Wie hoch ist der reguläre Stromsteuersatz?", [passage("Die Steuer entsteht mit der Entnahme.")])
    assert not none.answerable and none.reason == "no sentence states a money"
    # premises: numbers in German form, and acronyms (capitals alone mark every German noun)
    cities = "Bis wann müssen Großstädte mit mehr als 100.000 Einwohnern einen Wärmeplan vorlegen?"
    assert answerable.check(cities, [passage(CERTIFICATE)]).reason == "the evidence never mentions: 100000"
    assert answerable.check(cities, [passage(CITIES)]).missing == ()
    lng = answerable.check("Bis wann dürfen LNG-Terminals betrieben werden?", [passage(CERTIFICATE)])
    assert lng.reason == "the evidence never mentions: lng"
    assert answerable.check_applies("Wie lange gilt der Ausweis?") and not answerable.check_applies("Combien de temps dure-t-il ?")


def test_a_translated_question_is_checked_in_the_documents_language():
    """An English question over German laws: its translation is what the check reads (German
    units, the evidence's own words); the English question itself finds no English duration."""
    context = _context(("Gebäudeenergiegesetz", "Der Ausweis wird ausgestellt. " + CERTIFICATE))
    english = "How long is an energy performance certificate valid?"
    as_asked = ExtractiveGenerator(LexicalScorer(0.0), max_facts=0, max_sentences=1, check=True)
    assert as_asked.generate(english, context).abstain_reason == "no sentence states a duration"
    translated = ExtractiveGenerator(
        LexicalScorer(0.0), max_facts=0, max_sentences=1, check=True, check_question="Wie lange ist ein Energieausweis gültig?"
    )
    draft = translated.generate(english, context)
    assert not draft.abstained and "zehn Jahren" in draft.text


def test_a_minimum_is_not_answered_by_sentences_that_only_set_maxima():
    """Regression (dev-eu eu-049): "the minimum fine a data protection authority has to impose"
    was answered with the GDPR's fines "up to 20 000 000 EUR" — there is no minimum to quote."""
    gdpr = answerable.Passage(("GDPR Article 83 …",), ("Infringements shall be subject to administrative fines up to 20 000 000 EUR.",))
    verdict = answerable.check("What is the minimum fine a data protection authority has to impose under the GDPR?", [gdpr])
    assert not verdict.answerable and verdict.reason.startswith("the question asks for a minimum")
    assert answerable.check("What is the maximum fine under the GDPR?", [gdpr]).answerable
    nis2 = answerable.Passage(("NIS2 Article 34 …",), ("Essential entities are subject to fines of a maximum of at least EUR 10 000 000.",))
    assert answerable.check("What minimum fine ceiling must national law allow under NIS2?", [nis2]).answerable
    cra = answerable.Passage(("CRA Article 13 …",), ("The support period shall be at least five years.",))
    assert answerable.check("For how long, at minimum, must a manufacturer handle vulnerabilities?", [cra]).answerable


def test_a_sum_must_be_of_the_kind_the_question_asks_for():
    """Regression (dev-eu eu-047): "the annual fee that essential entities must pay to their national
    CSIRT under NIS2" was answered with NIS2's fines for essential entities — it sets no fee."""
    fines = "Essential entities are subject to administrative fines of a maximum of at least EUR 10 000 000."
    nis2 = answerable.Passage((fines, "Directive (EU) 2022/2555 (NIS2)"), (fines,), ("NIS2", "Article 34 General conditions"))
    fee = answerable.check("How much is the annual fee that essential entities must pay under NIS2?", [nis2])
    assert not fee.answerable and fee.reason == "no sentence stating a sum names a fee"
    assert answerable.check("How high can the fine for essential entities be under NIS2?", [nis2]).answerable
    # the heading may name the kind the sentence states ("Periodic penalty payments" over "up to 1 % …")
    daily = "The amount shall be up to 1 % of the average daily worldwide turnover."
    heads = ("Digital Operational Resilience Act (DORA)", "Article 35 Periodic penalty payments")
    dora = answerable.Passage((daily, *heads), (daily,), heads)
    assert answerable.check("How large can the periodic penalty payment be under DORA?", [dora]).answerable
    # a question naming no kind of sum is not checked for one
    price = answerable.Passage(("Certificates cost EUR 55 in 2026.",), ("Certificates cost EUR 55 in 2026.",))
    assert answerable.check("What price applies to certificates in 2026?", [price]).answerable


def test_an_extractive_answer_quotes_no_sentence_about_another_country():
    """Regression (dev-necp): "How much offshore wind capacity does Sweden's plan aim to have by
    2030?" quoted Denmark's energy island from the Danish plan."""
    island = "The Danish Government have initiated studies on an energy island with 10 GW of offshore wind before 2030."
    generator = ExtractiveGenerator(LexicalScorer(0.2), max_facts=0, max_sentences=2, check=True)
    danish = _context(("Denmark_NECP", island), ("Sweden_NECP", "Sweden reports on its electricity grids."))
    declined = generator.generate("What does Sweden's plan say about offshore wind before 2030?", danish)
    assert is_abstention(declined.text) and declined.abstain_reason == "the best sentence is about denmark"
    assert not generator.generate("What does Denmark's plan say about offshore wind before 2030?", danish).abstained
    # below the best sentence, one about another country is left out; one naming none stays
    swedish = "Sweden's plan says offshore wind is to reach 5 GW before 2030 in its waters."
    both = _context(("Denmark_NECP", island), ("Sweden_NECP", swedish + " Offshore wind farms need grid connections."))
    answer = generator.generate("What does Sweden's plan say about offshore wind before 2030?", both)
    assert not answer.abstained and "5 GW" in answer.text and "Danish" not in answer.text
