"""What the S-expression grammar tells a decoder while it writes (:mod:`spr.grounding.sexpr_reader`
reads the finished text): whether an expression is complete, and which closing brackets must
follow when the grammar allows nothing else.

Every operator takes a fixed number of arguments, so once the last argument of each open operator
is written — ``(JOIN (R [ genre ]) (JOIN (R [ artist ]) [ Paris ]`` — only ``))`` can follow. The
LoRA parser writes those brackets itself instead of spending a forward pass of the model on them
(:meth:`spr.parsing.lora.LoRAParser.decode`).
"""

from __future__ import annotations

from spr.grounding.sexpr import COMPARISONS
from spr.grounding.sexpr_reader import TOKEN

# Arguments per operator, as spr.grounding.sexpr_reader reads them ((R rel) is a reversed relation).
ARITY = {"JOIN": 2, "AND": 2, "COUNT": 1, "ARGMAX": 2, "ARGMIN": 2, "TC": 3, "R": 1, **{c.upper(): 2 for c in COMPARISONS}}


def expression_closed(text: str) -> bool:
    """True once ``text`` holds a complete parenthesized expression, a newline after some output,
    or an unbalanced closing parenthesis (parentheses inside ``[ labels ]`` and ``"strings"`` do
    not count; a backslash escapes the next character there, as the reader reads them)."""
    depth, closed, inside, escaped = 0, False, "", False
    for ch in text:
        if inside:  # the closing character of the label or string we are in
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == inside:
                inside = ""
        elif ch in '["':
            inside = "]" if ch == "[" else '"'
        else:
            depth += (ch == "(") - (ch == ")")
            closed = closed or (depth == 0 and ch == ")")
    return closed or "\n" in text.strip("\n ") or depth < 0


def decoding_ends(text: str, close_by_grammar: bool = True) -> bool:
    """Where greedy decoding of ``text`` stops: the expression is closed, or (``close_by_grammar``)
    only the closing brackets the decoder then writes itself may follow."""
    return expression_closed(text) or (close_by_grammar and forced_closing(text) is not None)


def forced_closing(text: str) -> str | None:
    """The ``)`` … ``)`` that must end ``text`` when the grammar allows nothing else next: every
    open operator has all its arguments. None when something else may follow, when ``text`` is
    already a whole expression, or when it is no well-formed beginning of one (an unknown operator,
    too many arguments, an unterminated label). A bare word or a string at the very end may still
    go on ("2026-01" of a date, ``"5"`` of ``"5"^^xsd:decimal``), so it counts as complete only once
    a space follows it."""
    stack: list[list] = []  # [operator or None until read, arguments read]
    pos, last = 0, ""
    while pos < len(text) and text[pos:].strip():
        m = TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            return None  # an unterminated label, string or IRI: the model is still inside it
        pos, last = m.end(), m.lastgroup
        if last == "open":
            stack.append([None, 0])
        elif last == "close":
            if not stack:
                return None
            stack.pop()
            if not stack:
                return None  # already a whole expression
            stack[-1][1] += 1
        elif stack and stack[-1][0] is None:
            op = m.group(last).upper() if last == "atom" else ""
            if op not in ARITY:
                return None
            stack[-1][0] = op
        elif stack:
            stack[-1][1] += 1
        else:
            return None  # an argument outside any expression
    if not stack or last == "open" or (last in ("atom", "string") and not text[-1:].isspace()):
        return None
    closing = ""
    while stack:
        op, args = stack.pop()
        if op is None or args != ARITY[op]:
            return None
        closing += ")"
        if stack:
            stack[-1][1] += 1
    return closing
