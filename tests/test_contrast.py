"""Contrasts between a question and its near copies (spr/contrast.py): antonyms, negations and
numbers turned round, as the answerability check (spr/answerable.py) uses them."""

from __future__ import annotations

import pytest

from spr import answerable
from spr.contrast import contrast as find


@pytest.mark.parametrize(
    ("question", "sentence", "contrast"),
    [
        ("What problem is deciding whether the input has a factor more than k?", "It is deciding whether the input has a factor less than k.", "less"),
        ("What makes the bounds dependent of the specific model?", "This makes the bounds independent of the specific model.", "independent"),
        ("What is uncommonly consumed by alternate models?", "Time is commonly consumed by alternate models.", "commonly"),
        ("What solves the problem of multiplying three numbers?", "This solves the problem of multiplying two numbers.", "2"),
        ("Who invaded Scotland in the 10th century?", "William invaded Scotland in the 11th century.", "11"),
        # not contrasts: a negation said otherwise, reference numbers, a word that only looks negated
        ("Which products are not covered by the act?", "The act shall not apply to products for defence.", None),
        ("Which entities are not covered by the act?", "Entities other than banks are excluded from the act.", None),
        ("What powers does Article 58 give the authority?", "The powers of Article 16 are given to the authority.", None),
        ("What information must the provider give the authority?", "The provider must give the authority formation data.", None),
    ],
)
def test_contrasts(question, sentence, contrast):
    found = find(question, sentence)
    assert (found is None) if contrast is None else (found is not None and f"'{contrast}'" in found)


def test_a_near_copy_that_turns_words_round_is_declined_unless_the_question_compares():
    """SQuAD 2.0: "informal" and "input" swapped kept the sentence under the near-copy share, so
    the swap went unseen; a comparison's evidence says the opposite for the option not picked."""
    formal = ("A decision problem can be viewed as a formal language, where the members of the language "
              "are instances whose output is yes.")  # fmt: skip
    swapped = answerable.check("What can be viewed as an informal language where the language instances whose input is yes?",
                               [answerable.Passage((formal,), (formal,))])  # fmt: skip
    assert not swapped.answerable and swapped.reason == "the sentence says 'formal', not 'informal'"
    least = "The 1974 outbreak killed the least people of the two tornado outbreaks, the 2011 outbreak killed more."
    compared = answerable.check("Which of the two tornado outbreaks killed the most people?", [answerable.Passage((least,), (least,))])
    assert compared.answerable


def test_an_only_both_say_is_no_negation():
    """SQuAD 2.0: "only" in both the question and the sentence does not stand for the question's
    "cannot" ("What states that only problems that cannot be solved in polynomial time can be
    feasibly computed?" over "… only those problems that can be solved …")."""
    thesis = "The thesis states that only those problems that can be solved in polynomial time can be feasibly computed."
    negated = answerable.check("What states that only problems that cannot be solved in polynomial time can be feasibly computed?",
                               [answerable.Passage((thesis,), (thesis,))])  # fmt: skip
    assert not negated.answerable and negated.reason == "the question says 'not', the sentence does not"
    barred = "Only providers that are not established in the Union shall appoint a representative."
    assert answerable.check("Which providers that are not established in the Union must appoint a representative?",
                            [answerable.Passage((barred,), (barred,))]).answerable  # fmt: skip


def test_a_short_question_counts_as_a_near_copy_only_when_held_whole():
    """SQuAD 2.0: "What algorithm is always practical?" over "… a polynomial time algorithm is not
    always practical." has three content words; below four a question aligned with nothing. Held
    whole it is a near copy; two of three words are not."""
    said = "Nevertheless, a polynomial time algorithm is not always practical."
    turned = answerable.check("What algorithm is always practical?", [answerable.Passage((said,), (said,))])
    assert not turned.answerable and turned.reason == "the sentence says 'not', the question does not"
    assert answerable.check("What algorithm is always fast?", [answerable.Passage((said,), (said,))]).answerable
