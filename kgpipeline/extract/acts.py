"""The act a document itself is, with every name it goes by. Acts named in a text, by identifier
or short name, are read by :mod:`core.acts` (shared with the answer side); an act is identified by
its series, year and number (``key``: "regulation 2016/679"), so every spelling of one act is one
entity with one label (one skos:prefLabel). Used by :mod:`kgpipeline.extract.policy_facts`.
"""

from __future__ import annotations

import re

from core.acts import KNOWN_ACTS, ActRef, act_from_celex, act_references
from kgpipeline.records import SourceDocument

__all__ = ["ActRef", "act_from_celex", "act_references", "own_act"]


_SHORT_NAME = re.compile(r"\(\s*[‘'“\"]?([A-Z][\w\- ]{2,60}?(?:Act|Law|Directive|Regulation|Framework))[’'”\"]?\s*\)")


_NAMES_BY_KEY = {act.key: act.names for act in KNOWN_ACTS}


def own_act(document: SourceDocument) -> tuple[str, str, tuple[str, ...]] | None:
    """(key, label, other names) of the act a document is, from its CELEX number or title. The
    other names are the document's own (metadata, a short title in its title), then the act's
    short names in common use (:data:`core.acts.KNOWN_ACTS`: "EUDR" for Regulation (EU)
    2023/1115, whose text never says so)."""
    meta = document.metadata or {}
    names = [str(meta[k]).strip() for k in ("act", "short_title", "alias") if isinstance(meta.get(k), str) and meta[k].strip()]
    title = document.title or ""
    names += [m.group(1).strip() for m in _SHORT_NAME.finditer(title)]
    for key in ("celex", "identifier", "celex_id"):
        value = meta.get(key)
        if isinstance(value, str) and (act := act_from_celex(value)):
            return act[0], act[1], _with_known_names(act[0], names)
    first = next(act_references(title[:120]), None)
    if first is not None and first.start < 20:
        return first.key, first.label, _with_known_names(first.key, names)
    return None


def _with_known_names(key: str, names: list[str]) -> tuple[str, ...]:
    seen = {name.casefold() for name in names}
    return tuple(dict.fromkeys(names + [n for n in _NAMES_BY_KEY.get(key, ()) if n.casefold() not in seen]))
