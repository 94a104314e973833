"""Question shapes of the policy facts (kgpipeline/extract/policy_facts.py), for the rule parser.

People ask about definitions, time limits, amounts, percentages, dates and addressees in a few
recurring shapes; each maps to one relation of the policy facts, applied to what the rest of the
question describes (a defined term, or a provision's wording, which relation-constrained linking
matches against the provisions that have that relation):

    What does 'personal data' mean under the GDPR?      (JOIN (R [ definition ]) [ personal data (GDPR) ])
    How does the AI Act define a 'provider'?            (JOIN (R [ definition ]) [ provider (AI Act) ])
    Within how many hours must a breach be notified?    (JOIN (R [ time limit ]) [ Within how many hours must a breach be notified ])
    How much can the fine for X be?                     (JOIN (R [ amount ]) [ How much can the fine for X be ])
    By when must Member States adopt the measures?      (JOIN (R [ has deadline ]) [ By when must Member States … ])
    From what date does the AI Act apply?               (JOIN (R [ has date ]) [ From what date does the AI Act apply ])
    Who must notify a breach to the authority?          (JOIN (R [ addressee ]) [ Who must notify a breach to the authority ])
    To whom must a provider report an incident?         (JOIN (R [ action ]) [ To whom must a provider report an incident ])
    (and percentages)
    Which directive does NIS2 repeal?                   (JOIN (R [ repeals ]) [ NIS2 ])
    Which regulation is amended by DORA?                (JOIN (R [ amends ]) [ DORA ])
    Which act repeals Directive 95/46/EC?               (JOIN [ repeals ] [ Directive 95/46/EC ])
    Who issues the European Climate Law?                (JOIN [ issues ] [ European Climate Law ])
    When was the GDPR adopted?                          (JOIN (R [ adopted on ]) [ GDPR ])

A provision is described by the whole question: a sentence embedding matches a question to the
clause that answers it (labelled with its subject, modal, action and act) far better than the
question's leftover keywords (measured: "From what date does the GDPR apply?" ranks "It shall
apply from 25 May 2018 (GDPR)" 2nd among the KB's surface forms; "GDPR apply" does not reach the
top 100). Relation labels are the ontology's; the grounder still ranks relations by similarity,
so a KB without policy facts finds nothing here and the generic shapes follow.
"""

from __future__ import annotations

import re

from spr.grounding.sexpr import Entity, Expr, Join, Label, Relation, to_text

_QUOTED = re.compile(r"(?:^|[\s(])[‘'“\"](?P<term>[^’'”\"]{2,80})[’'”\"]")
_ACT = re.compile(r"\b(?:under|in|of|by|according to|for the purposes of)\s+(?:the\s+)?(?P<act>(?:[A-Z][\w\-/()]*\s*){1,5})\s*\??$")
_ACT_FIRST = re.compile(r"^(?:how|what)\s+(?:does|do)\s+(?:the\s+)?(?P<act>(?:[A-Z][\w\-/()]*\s*){1,5}?)\s+(?:define|mean by)\b", re.I)
_DEFINE = re.compile(r"\b(?:mean|means|meant|define|defines|defined|definition|counts? as|who is|what is|what are)\b", re.I)
_UNQUOTED_DEF = re.compile(
    r"^(?:what|who)\s+(?:is|are)\s+(?:meant\s+by\s+)?(?:an?\s+|the\s+)?(?P<term>[\w\- ]{2,60}?)\s+"
    r"(?:under|according to|in|within the meaning of)\s+(?:the\s+)?(?P<act>[A-Z][\w\- ]{1,40}?)\s*\?$", re.I)  # fmt: skip
_LEAD = re.compile(
    r"^(?:(?:could|can|is|are|does|do)\b[^?]*\?\s*)?"  # "Could …? Below how many …" keeps the second question
)
# (pattern of the asking words, relation label); the first match wins, so the specific come first.
_SHAPES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), label)
    for p, label in (
        (r"\b(?:within|in|after)\s+how\s+(?:many|much)\s+(?:hours|days|weeks|months|years|time)\b|\bhow\s+long\b|"
         r"\bhow\s+many\s+(?:hours|days|weeks|months|years)\b|\bwhat\s+(?:is\s+the\s+)?time\s+limit\b|"
         r"\bwhat\s+is\s+the\s+latest\b", "time limit"),
        # A quantity asked for a coming year is a target: "What is Westmark's 2030 target for
        # renewables?", "What share … should renewables reach by 2030?", "How much lower must
        # emissions be in 2030?", "By how much must emissions fall by 2030?"
        (r"^by\s+how\s+(?:much|many)\b(?=.*\b20[2-9]\d\b)|"
         r"^(?:what|which|how\s+(?:much|many))\b(?=.*\b20[2-9]\d\b)(?=.*\b(?:targets?|goals?|objectives?|aims?|ambitions?|reach|share|"
         r"reduc\w*|cut|lower|higher|improve\w*|rate|level|per\s?cent|percentage)\b)", "target amount"),
        (r"\bwhat\s+(?:percentage|share|per\s?cent|proportion)\b|\bhow\s+many\s+per\s?cent\b", "percentage"),
        (r"\bhow\s+much\b|\b(?:maximum|highest)\s+(?:fine|amount|penalty)\b|\bin\s+euros?\b", "amount"),
        (r"\bby\s+(?:when|what\s+date|which\s+date)\b|^when\s+(?:is|are)\b(?=.*\bdue\b)", "has deadline"),  # "the deadline of X" is the generic shape
        (r"\b(?:from|as\s+of|since)\s+(?:when|what\s+date|which\s+date)\b|\bwhen\s+(?:does|do|did|will|shall)\b", "has date"),
        # "To whom must a provider report …", "Who can a manufacturer appoint …": the answer is the
        # object of the provision's action, which the action's wording holds.
        (r"(?:^|,\s*)(?:(?:(?:to|from|by|with)\s+whom|whom)\s+(?:must|shall|should|may|can|could|has\s+to|have\s+to)\s+[\w-]+|"
         r"(?:who|which\s+(?:[\w-]+\s+){0,2}?(?:body|authority|agency|institution|party))\s+"
         r"(?:must|shall|should|may|can|could|has\s+to|have\s+to)\s+(?:an?|the|its|their)\s+[\w-]+)", "action"),
        (r"^(?:who|which\s+(?:body|authority|actor|entity|institution|party))\s+(?:must|shall|has\s+to|have\s+to|is\s+required\s+to|"
         r"should|may|can|is\s+responsible\s+for)\b", "addressee"),
        (r"^who\s+(?!is\b|are\b|was\b|were\b|has\b|does\b|did\b)[a-z]+s\b", "addressee"),  # "Who keeps the registry …?"
    )
)  # fmt: skip
_FILLER = re.compile(r"\b(?:must|shall|should|may|can|could|does|do|did|is|are|was|were|be|been|has|have|to|the|a|an|what|which|"
                     r"who|when|how|many|much|at\s+most|at\s+the\s+latest|up\s+to|where\s+feasible|generally)\b", re.I)  # fmt: skip


# Cross-references between acts: an act named by its identifier or its short name ("GDPR", "NIS2",
# "the AI Act", "the Cyber Resilience Act"), a verb of the relation, and "which act/directive/...".
_ACT_NAME = (
    r"(?:(?:Regulation|Directive|Decision)\s+(?:\((?:EU|EC|EEC|Euratom)\)\s+)?(?:No\s+)?\d+/\d+(?:/(?:EU|EC|EEC))?"
    r"|(?:[A-Z][A-Za-z]*\s+){0,3}(?:Act|Law|Code)\b|[A-Z][A-Z0-9]{1,}[a-z0-9]*\b)"
)
_WHICH_ACT = re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:acts?|laws?|directives?|regulations?|decisions?|legislation)\b", re.I)
_XREF_VERBS: tuple[tuple[str, str], ...] = (
    (r"repeal(?:s|ed|ing)?", "repeals"),
    (r"amend(?:s|ed|ing)?|delet(?:e|es|ed)|replac(?:e|es|ed)|add(?:s|ed)?\s+itself|insert(?:s|ed)?", "amends"),
    (r"refer(?:s|red)?\s+to|rel(?:y|ies|ied)\s+on|points?\s+to|cit(?:e|es|ed)|take[s]?\s+its\s+definition", "cites"),
)


def _cross_reference(q: str) -> list[Expr]:
    """``(JOIN (R [ rel ]) [ act ])`` (or the subject form) for "which act does X repeal/amend/cite"."""
    which = _WHICH_ACT.search(q)
    if which is None and not re.match(r"^where\s+does\b", q, re.I):
        return []
    for verbs, label in _XREF_VERBS:
        verb = re.search(rf"\b(?:{verbs})\b", q, re.I)
        if verb is None:
            continue
        # "Which act repeals X?": the asked act is the subject, X the object.
        if which is not None and re.match(rf"\s*(?:{verbs})\s+(?:the\s+)?(?P<act>{_ACT_NAME})", q[which.end() :]):
            act = re.match(rf"\s*(?:{verbs})\s+(?:the\s+)?(?P<act>{_ACT_NAME})", q[which.end() :]).group("act")  # type: ignore[union-attr]
            return [Join(Relation(Label(label)), Entity(Label(act.strip())))]
        named = [m.group(0).strip() for m in re.finditer(_ACT_NAME, q) if which is None or m.start() >= which.end()]
        named = [n for n in named if n.upper() not in {"EU", "ICT", "TLPT", "CSIRT", "DNS"}]
        if named:  # "Which directive does NIS2 repeal?", "… is amended by DORA?"
            return [Join(Relation(Label(label), reverse=True), Entity(Label(named[0])))]
    return []


# Who adopted an act: "Who issues the European Climate Law?", "Which institutions adopted the GDPR?",
# "By whom was Regulation (EU) 2021/1119 adopted?". Only when what follows the verb names an act —
# "Who issues permits?" asks for the addressee of a provision.
_ISSUE_VERB = r"(?:issu|adopt|enact|pass|publish|promulgat|approv|sign)\w*"
_ISSUER_FORMS = (
    re.compile(rf"^(?:who|which\s+(?:[\w-]+\s+){{0,2}}?(?:bod(?:y|ies)|institutions?|authorit(?:y|ies)|organs?))\s+"
               rf"(?:(?:has|have|had|did|does|do)\s+)?{_ISSUE_VERB}\s+(?P<obj>.+?)\s*\??$", re.I),
    re.compile(rf"^by\s+whom\s+(?:was|is|were|are|has|had)\s+(?:been\s+)?(?P<obj>.+?)\s+{_ISSUE_VERB}\s*\??$", re.I),
    re.compile(rf"^who\s+(?:was|is|were|are)\s+(?P<obj>.+?)\s+{_ISSUE_VERB}\s+by\s*\??$", re.I),
)  # fmt: skip
_ACT_TYPE = r"Act|Law|Code|Regulation|Directive|Decision|Treaty|Charter|Convention|Protocol|Agreement|Plan|Strategy|Programme|Notice|Guidelines|Standard"
_AN_ACT = re.compile(
    rf"^(?:the\s+)?(?P<act>[A-Z][A-Z0-9]+|[A-Z0-9][^?]*?(?:\b(?:{_ACT_TYPE})|\d+/\d+(?:/[A-Za-z]+)?)"
    rf"|(?:[A-Z][\w'-]*\s+)+(?i:{_ACT_TYPE}))$"  # "the Just Transition Fund regulation": a name, then its type
)  # fmt: skip


# ... and when: "When was the GDPR adopted?", "On what date was Directive 2009/31/EC signed?",
# "When did the EU adopt the European Climate Law?"
_ADOPTED = r"(?:adopted|signed|enacted|passed|approved|issued)"  # not "published": a publication date is another day
_ADOPTION_FORMS = (
    re.compile(rf"^(?:when|(?:on\s+)?(?:what|which)\s+(?:date|day))\s+(?:was|were)\s+(?P<obj>.+?)\s+{_ADOPTED}\s*\??$", re.I),
    re.compile(r"^when\s+did\s+(?:the\s+)?(?:[\w-]+\s+){0,4}?(?:adopt|sign|enact|pass|approve|issue)\s+(?P<obj>.+?)\s*\??$", re.I),
)  # fmt: skip


def _adoption(q: str) -> list[Expr]:
    """``(JOIN [ issues ] [ act ])`` for "who issued/adopted <an act>", ``(JOIN (R [ adopted on ])
    [ act ])`` for "when was <an act> adopted"; [] otherwise."""
    for forms, expr in ((_ISSUER_FORMS, lambda act: Join(Relation(Label("issues")), act)),
                        (_ADOPTION_FORMS, lambda act: Join(Relation(Label("adopted on"), reverse=True), act))):  # fmt: skip
        for form in forms:
            m = form.match(q)
            act = _AN_ACT.match(m.group("obj")) if m else None
            if act is not None:
                return [expr(Entity(Label(act.group("act").strip())))]
    return []


def policy_parse(question: str) -> list[Expr]:
    """Labelled S-expressions for a policy-fact question, best first; [] when no shape fits."""
    q = " ".join(question.split())
    if adoption := _adoption(q):
        return adoption
    out: list[Expr] = _cross_reference(q)
    term = _definition_term(q)
    if term and out and not term.endswith(")"):  # the act the question names elsewhere scopes the term
        term = f"{term} ({to_text(out[0].arg).strip('[] ')})" if isinstance(out[0], Join) else term
    if term:
        # "Where does NIS2 take its definition of 'cybersecurity' from?": the definition itself
        # names the act it borrows from ("… as defined in … Regulation (EU) 2019/881"), which is
        # more precise than every act NIS2 cites.
        out.insert(0, Join(Relation(Label("definition"), reverse=True), Entity(Label(term))))
    body = _LEAD.sub("", q) if "?" in q[:-1] else q
    for pattern, label in _SHAPES:
        if pattern.search(body) and _rest(pattern.sub(" ", body)):
            # The provision is described by the whole question: sentence embeddings match a
            # question to the clause that answers it far better than its remaining keywords.
            out.append(Join(Relation(Label(label), reverse=True), Entity(Label(question_label(q)))))
            break
    return out


def question_label(question: str) -> str:
    """The question as an S-expression label (brackets and the final question mark dropped)."""
    return " ".join(question.replace("[", "(").replace("]", ")").split()).rstrip(" ?")


def _definition_term(q: str) -> str:
    """The defined term a definition question asks about, with its act ("provider (AI Act)")."""
    quoted = _QUOTED.search(q)
    if quoted and _DEFINE.search(q):
        term = quoted.group("term").strip()
        act = _ACT.search(q[quoted.end() :]) or _ACT_FIRST.search(q)
        return f"{term} ({act.group('act').strip()})" if act else term
    m = _UNQUOTED_DEF.match(q)
    if m and len(m.group("term").split()) <= 5 and not re.search(r"\b(?:deadline|fine|amount|date|limit)\b", m.group("term"), re.I):
        return f"{m.group('term').strip()} ({m.group('act').strip()})"
    return ""


def _rest(text: str) -> str:
    """What remains of the question once the asking words are gone: the provision's description."""
    words = _FILLER.sub(" ", text.replace("?", " ")).split()
    return " ".join(words).strip(" ,.")
