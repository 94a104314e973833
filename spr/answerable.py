"""Is the answer in the evidence at all? Three checks made before an answer quotes or generates.

Sentence scores cannot tell an answerable question from an unanswerable one (docs/answers.md "Answers":
AUC ~0.5): a question about a fine the corpus never sets finds sentences about other fines that
score as high as the right ones. What does tell them apart, in the manner of classic QA systems,
is whether the evidence holds what the question presupposes and what it asks for:

- **premise**: the names and numbers the question states ("Norway", "MiCA", "in 2040"; numbers of
  the sentences that ask, not of the asker's case, :func:`spr.asking.asked_part`) occur in
  the retrieved passages (their text, document titles or heading paths). Evidence that never
  mentions them is about something else, however close its wording.
- **answer type**: a question that asks for a value ("within how many days", "what share",
  "by which year", "how much … fine") needs a sentence stating one: a number with the asked kind
  of unit, not one the question itself states, not an article or act number
  (:func:`spr.values.states_value`); a question asking for a minimum is not answered by sentences
  that only set maxima ("fines up to …").
- **contrast**: the sentences that nearly copy the question do not say its opposite ("most"
  where it asks about "least"; :func:`spr.contrast.contradicted`).

Pure functions over strings; :func:`check` is what the answer paths call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from core.acts import KnownAct, acts_named, mentions_act
from core.keywords import question_language
from spr.asking import (
    asked_dimensions,
    asked_part,
    asked_value,
    asks_end,
    asks_minimum,
    money_kinds,
    only_upper_bounds,
    question_years,
    says_end,
)
from spr.choices import choice, compares
from spr.contrast import contradicted
from spr.countries import COUNTRY_OF
from spr.durations import asked_duration, states_duration
from spr.fuse import FusedContext
from spr.gloss import acronyms, gloss
from spr.lexical import content_words
from spr.values import QUANTITIES, ValueKind, is_unit_symbol, states_dimension, states_value
from spr.verify import unmatched_numbers

# --- what the question presupposes ----------------------------------------------------------------
# Capitalized words that name nothing in particular in policy questions (or are the question's
# grammar); a name outside this list is a premise the evidence must mention.
_GENERIC = frozenset(
    "i a an the eu european union member state states commission council parliament regulation directive "
    "decision act law laws article articles annex chapter section title recital part national federal "
    "government ministry ministries plan plans energy climate may must can could does do did is are was "
    "were what which who whom whose when where why how under in on of for by from to and or if as at "
    "with within since until after before during".split()
)
_NAME = re.compile(r"(?<![\w'’])([A-Z][\w’'-]*|[a-z]+[A-Z][\w’'-]*)")
_POSSESSIVE = re.compile(r"[’']s?$")
_PLURAL_ACRONYM = re.compile(r"^([A-Z]{2,}\d*)s$")  # "NECPs" names the NECP
def premise_names(question: str) -> list[str]:
    """The names ``question`` states: capitalized words that are neither its first word nor a
    generic word of policy language, and inner-capital words ("ePrivacy"); lower-cased. An act
    named by a short name in common use (:func:`core.acts.acts_named`: "the EU Data Act", "the
    EUDR") is one name, found in evidence that names that act (:func:`core.acts.mentions_act`).

    >>> premise_names("How much initial capital must a crypto-asset service provider hold under MiCA?")
    ['mica']
    >>> premise_names("What 2030 target does Norway's plan set under the Regulation?")
    ['norway']
    >>> premise_names("What fine can the Commission impose under the Digital Markets Act on Acme?")
    ['acme', 'digital markets act']
    >>> premise_names("How much electricity tax per MWh do railways in Germany pay?")
    ['germany']
    """
    text = question.strip()
    acts = acts_named(text)
    first = re.match(r"\W*[\w’'-]+", text)
    start = first.end() if first else 0
    out: list[str] = []
    for match in _NAME.finditer(text):
        if any(named.start <= match.start() < named.end for named in acts):
            continue
        if is_unit_symbol(match.group(1)):
            continue  # "per MWh" states a unit, not a subject (:func:`spr.values.is_unit_symbol`)
        word = _name_word(match.group(1))
        if match.start() < start and not re.search(r"[a-z][A-Z]|[A-Z]{2}", match.group(1)):
            continue  # the question's first word is capitalized by grammar, unless it is an acronym
        if len(word) < 2 or word in _GENERIC or word in out:
            continue
        head, _, tail = match.group(1).partition("-")
        if tail.islower() and head.lower() in _GENERIC:
            continue  # "EU-wide", "Union-level": a generic name made an adjective
        out.append(word)
    return out + list(dict.fromkeys(named.name.lower() for named in acts))


def _name_word(written: str) -> str:
    """A name as the premises list it: lower-cased, no possessive, an acronym's plural singular."""
    return _PLURAL_ACRONYM.sub(r"\1", _POSSESSIVE.sub("", written).strip("-")).lower()


# A phrase the question quotes ("On the Computational Complexity of Algorithms", 'large
# undertaking'): the asker's exact words for a title or a term of art. Not an apostrophe inside or
# after a word ("Spain's", "Members'").
_QUOTED = re.compile(r"(?<![\w'’])['‘\"“]([^'’\"”‘“?]{3,100}?)['’\"”](?!\w)")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)


def identifiers(question: str) -> set[str]:
    """The names ``question`` writes as identifiers, lower-cased: a capital or a digit after a
    letter inside the word ("REPowerEU", "NIS2", "ePrivacy", "MiCA"). Coined, not inflected:
    :func:`missing_premises` matches them whole ("repowereu" is not "repowering").

    >>> sorted(identifiers("What does the REPowerEU plan add to NIS2 and the Climate Law?"))
    ['nis2', 'repowereu']
    """
    return {
        _name_word(m.group(1))
        for m in _NAME.finditer(question)
        if re.search(r"[A-Za-z][A-Z0-9]", m.group(1)) and "-" not in m.group(1)  # "EU-wide" is a word
    }


def quoted_phrases(question: str) -> list[str]:
    """The phrases of two to twelve words ``question`` quotes, lower-cased, without a leading
    article; one quoted word is often a scare quote (an "important" entity) and is left out.

    >>> quoted_phrases('Who wrote "On the Computational Complexity of Science"? Was it "good"?')
    ['on the computational complexity of science']
    >>> quoted_phrases("Is Spain's target or the Members' one in 'the Grand Model'?")
    ['grand model']
    """
    out: list[str] = []
    for match in _QUOTED.finditer(question):
        phrase = _ARTICLE.sub("", " ".join(match.group(1).split()).strip(" .,;:")).lower()
        if 2 <= len(phrase.split()) <= 12 and phrase not in out:
            out.append(phrase)
    return out


def _says_phrase(phrase: str, haystack: str) -> bool:
    """Whether ``haystack`` (lower-cased) holds ``phrase``'s words in order, any punctuation or
    spacing between them; the last word, when long, also inflected ("large undertakings")."""
    words = re.findall(r"\w+", phrase)
    if not words:
        return True
    last = words[-1][:-2] if len(words[-1]) >= 6 else words[-1]
    pattern = r"\W+".join([*(re.escape(w) for w in words[:-1]), re.escape(last)])
    return re.search(rf"(?<!\w){pattern}", haystack) is not None


def _acts_of(question: str) -> dict[str, KnownAct]:
    """The acts ``question`` names, by the premise name :func:`premise_names` gives each."""
    return {named.name.lower(): named.act for named in acts_named(question.strip())}


def missing_premises(question: str, texts: Iterable[str], names: Sequence[str] | None = None) -> list[str]:
    """The question's names and numbers that none of ``texts`` mentions. A name matches a word
    that starts with it ("German" matches "Germany's"; a country's adjective also its name); a
    number matches in any written form (:func:`spr.verify.numbers`).

    >>> missing_premises("What does Norway's plan aim for by 2040?", ["Sweden aims for 2040 …"])
    ['norway']
    >>> missing_premises("My boiler was installed in 1995. May I keep it?", ["Boilers installed before 1991 …"])
    []
    >>> missing_premises('Who wrote "Reductibility Among Combinatorial Problems"?', ["Karp's Reducibility Among Combinatorial Problems"])
    ['reductibility', '“reductibility among combinatorial problems”']

    ``names``: the question's names when they are not read from its capitals (a German question).
    """
    texts = list(texts)
    haystack = " ".join(" ".join(t.split()) for t in texts).lower()
    acts = _acts_of(question) if names is None else {}
    coined = identifiers(question) if names is None else set()

    def mentioned(name: str) -> bool:
        if name in acts:
            return mentions_act(acts[name], texts)
        # A long name also matches without its last two letters: inflections and typos
        # ("Raouliii" for "Raoulii"), at the price of rare look-alikes. An identifier is not
        # inflected: "REPowerEU" is not "repowering".
        forms = [name[:-2] if len(name) >= 6 and name not in coined else name] + ([COUNTRY_OF[name]] if name in COUNTRY_OF else [])
        return any(re.search(rf"(?<!\w){re.escape(form)}", haystack) for form in forms)

    missing = [name for name in (premise_names(question) if names is None else names) if not mentioned(name)]
    missing += sorted(unmatched_numbers(asked_part(question), haystack))  # not the numbers of the asker's case
    if names is None:  # a quoted phrase is as precise as a number: "… of Science" is not "… of Algorithms"
        missing += [f"“{p}”" for p in quoted_phrases(question) if not _says_phrase(p, haystack)]
    return missing


def off_topic(question: str, missing: Sequence[str], names: Sequence[str] | None = None) -> bool:
    """Whether evidence missing ``missing`` (:func:`missing_premises`) misses most of the names
    ``question`` states (more than half), or a number it states. A comparison ("Germany or
    Greece?") may find one side; evidence about another country, act or year misses the subject."""
    names = premise_names(question) if names is None else names
    missing_names = [m for m in missing if m in names]
    return 2 * len(missing_names) > len(names) or len(missing) > len(missing_names)


def about(names: Sequence[str], question: str, texts: Iterable[str], stated: Sequence[str] | None = None) -> bool:
    """Whether a passage is about what the question names: it mentions at least half of ``names``
    (the question's names that the evidence mentions somewhere). A passage on Spain may answer
    "Spain's or Portugal's?"; a passage on Romania does not answer a question about Croatia."""
    missing = set(missing_premises(question, texts, stated))
    return 2 * sum(name in missing for name in names) <= len(names)


def _as_question(option: str) -> str:
    return f"About {option}?"  # as a question's object: its first word is read as a name too


def names_option(option: str, texts: Iterable[str]) -> bool:
    """Whether ``texts`` mention an option of a choice ("Germany", "the GDPR"): its names and
    numbers, an act by any of its names (:func:`missing_premises`)."""
    return not missing_premises(_as_question(option), texts)


def _option_names(question: str, known: Sequence[str]) -> list[set[str]]:
    """For a question choosing between options (:func:`spr.choices.choice`), the names of each
    option that the evidence mentions; empty for any other question, or when no option has one."""
    found = choice(question)
    if found is None:
        return []
    options = [{n for n in premise_names(_as_question(o)) if n in known} for o in found.options]
    return options if any(options) else []


def about_either(options: Sequence[set[str]], known: Sequence[str], question: str, texts: Iterable[str]) -> bool:
    """:func:`about` for a choice ("On the Iberian peninsula, … for 2030, Spain's or Portugal's?"):
    a passage on one option is on the subject when it mentions that option's names and is
    :func:`about` the question's names less the other options' ("iberian", "portugal" for a
    passage on Portugal)."""
    missing = set(missing_premises(question, texts))
    for i, names in enumerate(options):
        others = set().union(*(o for j, o in enumerate(options) if j != i))
        own = [n for n in known if n not in others or n in names]
        if names and not names & missing and 2 * sum(n in missing for n in own) <= len(own):
            return True
    return False


# --- what the question asks about ----------------------------------------------------------------
# The words of asking for a value ("what share", "how much", "does the plan aim for", "by 2030")
# say what kind of answer is wanted, not what it is about.
_ASKING = frozenset(
    "what which how much many when where who whose whom why year years date dates day days month months time "
    "share percentage percent per cent proportion portion fraction rate level amount number figure value values total "
    "maximum minimum least most highest lowest target targets aim aims aimed goal goals objective objectives plan plans "
    "planned planning set sets expect expects expected intend intends intended foresee foresees envisage envisages "
    "envisaged according updated submitted national country countries state states member union european eu "
    "new current long soon often quickly fast high large big must may can could should shall will does do did is are "
    "was were be been have has had reach reached achieve achieved by until since from in for of on to the a an and or "
    "its it their they this that these those under within after before during into than up down about over".split()
)


def focus_words(question: str) -> set[str]:
    """The content words a question asks *about*, stemmed as :func:`spr.lexical.content_words`
    stems them: not the words of asking for a value, not the names and numbers it states
    (:func:`premise_names`, checked as premises).

    >>> sorted(focus_words("What carbon tax rate per tonne of CO2 does Ireland's plan set for 2030?"))
    ['carbon', 'tax', 'ton']
    >>> focus_words("How much will it be in 2030?")
    set()
    """
    names = set(premise_names(question))
    for named in reversed(acts_named(question)):  # an act's name says what the question is under, not about
        question = question[: named.start] + " " + question[named.end :]
    words = [w for w in re.findall(r"[a-z0-9]+", question.lower().replace("’", "'")) if w not in _ASKING and w not in names]
    return {stem for w in words if not w.isdigit() and len(w) > 2 for stem in content_words(w)}


def mentions(focus: set[str], texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` holds one of the ``focus`` words (stemmed alike)."""
    return any(focus & set(content_words(t)) for t in texts)


# --- the check ------------------------------------------------------------------------------------
def check_applies(question: str) -> bool:
    """Whether the check can read ``question``: English, or German through :func:`spr.gloss.gloss`
    (other languages are not checked).

    >>> check_applies("How long is the certificate valid?"), check_applies("Wie lange gilt der Ausweis?")
    (True, True)
    >>> check_applies("Combien de temps le certificat est-il valable ?")
    False
    """
    return _language(question) in ("en", "de")


def _language(question: str) -> str:
    language = question_language(question)
    return language if language in ("en", "de") else "other"


@dataclass(frozen=True)
class Passage:
    """A retrieved passage as the checks read it: ``texts`` (its text, document title and heading
    path; for a fact its verbalization and source chunk) and the ``sentences`` an answer may quote
    from it."""

    texts: tuple[str, ...]
    sentences: tuple[str, ...]
    heads: tuple[str, ...] = ()  # its document title and heading path: what its sentences are under


def check_context(question: str, context: FusedContext, sentences: Sequence[tuple[int, str]]) -> Verdict:
    """:func:`check` over a fused context whose candidate ``sentences`` are (citation id, text)
    pairs, best first; the verdict's answers keep that order."""
    by_cid: dict[int, list[str]] = {}
    for cid, text in sentences:
        by_cid.setdefault(cid, []).append(text)
    verdict = check(question, list(passages(context, by_cid).values()))
    order = {text: i for i, (_, text) in reversed(list(enumerate(sentences)))}
    return replace(verdict, answers=tuple(sorted(verdict.answers, key=order.__getitem__)))


def passages(context: FusedContext, sentences: Mapping[int, Sequence[str]]) -> dict[int, Passage]:
    """The context's pieces by citation id, each with the given candidate sentences (citation id
    → sentences)."""
    texts: dict[int, list[str]] = {}
    heads: dict[int, tuple[str, ...]] = {}
    for piece in context.pieces:
        texts.setdefault(piece.cid, []).append(piece.text)
    for cid, chunk in context.sources.items():
        if chunk is not None:
            texts.setdefault(cid, []).extend([chunk.text, chunk.title, chunk.heading_path])
            heads[cid] = (chunk.title, chunk.heading_path)
    return {cid: Passage(tuple(t), tuple(sentences.get(cid, ())), heads.get(cid, ())) for cid, t in texts.items()}


@dataclass(frozen=True)
class Verdict:
    """Whether the evidence can hold the answer. ``reason`` says why not, for logs and ``--explain``:
    "the evidence never mentions: norway" or "no sentence states a duration". ``answers``: the
    sentences that state the asked value in a passage about the question's subject, best first."""

    answerable: bool
    asked: ValueKind | None = None
    missing: tuple[str, ...] = ()
    reason: str = ""
    answers: tuple[str, ...] = ()


def check(question: str, found: Sequence[Passage]) -> Verdict:
    """The premise check over every passage, then (for a question asking for a value) the answer
    type over each passage's sentences, counting only passages about what the question names
    (a Romanian target does not answer a question about Croatia).

    A German question and its evidence are read through :func:`spr.gloss.gloss` (its names are
    its acronyms: German capitalizes every noun); the verdict's answers are the sentences as written.
    """
    stated: list[str] | None = None
    read: Callable[[str], str] = str
    if _language(question) == "de":
        stated, read = acronyms(question), gloss
        question = gloss(question)
    asked = asked_value(question)
    texts = [[read(t) for t in p.texts] for p in found]  # read once: the premises and each passage's subject
    asking = asked_part(question)  # the sentences that ask, without the asker's case
    names = premise_names(question) if stated is None else stated
    premises = missing_premises(question, [t for passage in texts for t in passage], stated)
    # The asker's case is theirs, names as numbers: "We're an online retailer with our EU head
    # office in Dublin …" asks a rule the law states without Dublin. A name only the case states
    # that the evidence lacks does not decide; one it has still tells which passages are on topic.
    told = set(names) - set(premise_names(asking)) if stated is None else set()
    missing = tuple(name for name in premises if name not in told)
    if off_topic(question, missing, stated):
        return Verdict(False, asked, missing, "the evidence never mentions: " + ", ".join(missing))
    if stated is None and not compares(question) and (turned := contradicted(question, [s for p in found for s in p.sentences])):
        return Verdict(False, asked, (), turned)  # "the least important …" over "the most important …"
    if asked is None:
        return Verdict(True, asked)
    known = [name for name in names if name not in premises]
    options = _option_names(question, known) if stated is None else []
    answers = tuple(
        s
        for p, read_texts in zip(found, texts, strict=True)
        if (about_either(options, known, question, read_texts) if options else about(known, question, read_texts, stated))
        for s in p.sentences
        if states_value(asked, read(s), question)
    )
    if not answers:
        return Verdict(False, asked, (), f"no sentence states a {asked}")
    span = asked_duration(question) if stated is None and asked == "duration" else None
    if span:
        # "How long can the notice stay online?" asks what lasts: "without undue delay" says when
        # it goes up, "every three years" how often (spr.durations). Only a fitting sentence answers.
        answers = tuple(s for s in answers if states_duration(span, s))
        if not answers:
            return Verdict(False, asked, (), f"no sentence stating a duration states a {span}")
    heads = {s: p.heads for p in found for s in p.sentences}  # what each sentence stands under
    focus = focus_words(question) if stated is None and asked in QUANTITIES else set()  # English questions
    if focus:
        # A quantity answers only next to what it is a quantity of: "How many heat pumps does
        # Denmark's plan aim for?" is not answered by its renewables share. (Dates and durations
        # belong to events, said in verbs whose forms words cannot follow: "invade" / "invasion".)
        # It decides whether to answer, not which sentence comes first: "RES" is the renewables
        # of "What renewables share …" to a reader, not to word matching.
        if not any(mentions(focus, [s, *heads.get(s, ())]) for s in answers):
            return Verdict(False, asked, (), f"no sentence stating a {asked} mentions: " + ", ".join(sorted(focus)))
    if stated is None and asked == "time" and asks_end(asking):
        # The date of an end: a sentence with a year but no end in it (a table of 2040 shares)
        # does not say when coal power stops. Asked, not told: "Our financial year ends on 31
        # December. When must we publish?" asks no end.
        if not any(says_end(" ".join([read(s), *heads.get(s, ())])) for s in answers):
            return Verdict(False, asked, (), "no sentence stating a time says that anything ends")
    dimensions = asked_dimensions(question) if stated is None and asked in QUANTITIES else frozenset()
    if dimensions:
        # "How many gigawatts of offshore wind …?" is not answered by a renewables share, nor by
        # the megawatts of solar power: the unit stands next to what the question asks about.
        if not any(states_dimension(dimensions, read(s)) and (not focus or mentions(focus, [s, *heads.get(s, ())])) for s in answers):
            return Verdict(False, asked, (), f"no sentence states a {asked} in units of " + " or ".join(sorted(dimensions)))
    years = question_years(asking) if asked in QUANTITIES else set()
    if years:
        # A target is a value for a year: "What share … does Greece aim for in 2040?" is not
        # answered by its 2030 share, though a table of the plan names 2040 elsewhere.
        if not any(years & question_years(" ".join([read(s), *heads.get(s, ())])) for s in answers):
            return Verdict(False, asked, (), f"no sentence stating a {asked} is for " + " or ".join(sorted(years)))
    kinds = money_kinds(question) if stated is None and asked == "money" else set()
    if kinds:
        if not any(kinds & money_kinds(" ".join([s, *heads.get(s, ())])) for s in answers):
            return Verdict(False, asked, (), "no sentence stating a sum names a " + " or ".join(sorted(kinds)))
    if asks_minimum(question) and all(only_upper_bounds(read(s)) for s in answers):
        return Verdict(False, asked, (), f"the question asks for a minimum; every sentence stating a {asked} sets a maximum")
    return Verdict(True, asked, answers=answers)
