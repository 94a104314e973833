"""How many forward passes the draft-and-verify parser would need, with no model: an oracle that
emits each held-out question's gold S-expression stands in for it.

    .venv/bin/python bench/sim_drafts.py --variant pql-2h [--branches 3] [--no-labels] [--no-grammar]

The parser's greedy decoding accepts the longest prefix of a draft that the model itself would
have produced, plus the model's next token (:func:`spr.parsing.decode.greedy_draft_verify`); when
the model emits the gold expression, the passes follow from the drafter alone. ``--branches B``
also drafts from the B most frequent next tokens of the training targets at the current position
(a multi-draft pass verifying all of them at once), counting the pass as wide as all drafts
together. As the parser does, the drafter also completes relation labels from the KB's labels
(:class:`spr.parsing.decode.LabelDrafter`; ``--no-labels``: not) and decoding ends where the
grammar forces the closing brackets (:func:`spr.parsing.grammar.forced_closing`; ``--no-grammar``:
where the expression is closed). Questions and training targets are the split of ``bench/eval_pathquestion.py``
(held-out paths); the tokenizer is the parser base's (written to the user cache on the parser's
first load). docs/structured.md "Parser decoding and training" lists what it measured.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.eval_pathquestion import DATA  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from spr.eval.pathquestion_kbqa import files, load_questions, relation_labels, split_by_path  # noqa: E402
from spr.parsing.decode import LabelDrafter, NgramDrafter  # noqa: E402
from spr.parsing.grammar import decoding_ends  # noqa: E402
from spr.parsing.lora import prompt  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", default="pql-2h")
    ap.add_argument("--branches", type=int, default=1, help="drafts per pass: the drafter's, and from the next most frequent tokens")
    ap.add_argument("--n", type=int, default=150, help="held-out questions")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--no-labels", action="store_true", help="no drafts from the KB's relation labels")
    ap.add_argument("--no-grammar", action="store_true", help="decode the closing brackets the grammar forces")
    args = ap.parse_args()

    from transformers import AutoTokenizer

    bases = [p for p in (user_cache_dir() / "parser-base").glob("*") if (p / "tokenizer_config.json").is_file()]
    if not bases:
        raise SystemExit("no parser base in the user cache: load the LoRA parser once (e.g. the test suite) first")
    tok = AutoTokenizer.from_pretrained(bases[0])
    q_file, kb_file = files(DATA, args.variant)
    train, held = split_by_path(load_questions(q_file), args.seed)

    def ids(text: str) -> list[int]:
        return tok(text, add_special_tokens=False)["input_ids"]

    def decode(tokens) -> str:
        return tok.decode(tokens, skip_special_tokens=True)

    targets = [ids(" " + t) + [tok.eos_token_id] for t in sorted({q.sexpr for q in train})]
    labels = None if args.no_labels else LabelDrafter((ids(" " + lab) for lab in relation_labels(kb_file)), decode, ids(" ])"), ids(" ]"))
    drafter = NgramDrafter(targets, labels=labels)

    def done(generated: list[int]) -> bool:
        return decoding_ends(decode(generated), close_by_grammar=not args.no_grammar)

    following: dict[tuple[int, ...], Counter[int]] = {(): Counter(t[0] for t in targets)}
    for seq in targets:
        for i in range(1, len(seq)):
            for n in range(1, min(drafter.max_n, i) + 1):
                following.setdefault(tuple(seq[i - n : i]), Counter())[seq[i]] += 1

    def next_tokens(context: list[int]) -> list[int]:
        for n in range(min(drafter.max_n, len(context)), -1, -1):
            key = tuple(context[-n:]) if n else ()
            if key in following and (n or not context):
                return [t for t, _ in following[key].most_common(args.branches)]
        return []

    passes, widths = [], []
    for q in random.Random(args.seed).sample(held, min(args.n, len(held))):
        prompt_ids = tok(prompt(q.question), add_special_tokens=False)["input_ids"]
        gold = tok(" " + q.sexpr, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        generated: list[int] = []
        count, width = 0, 0
        while len(generated) < len(gold) and not done(generated):
            drafts = [drafter.draft(generated, prompt_ids)]
            if args.branches > 1:
                drafts += [[t, *drafter.draft([*generated, t], prompt_ids)] for t in next_tokens(generated) if drafts[0][:1] != [t]]
            rest = gold[len(generated) :]
            accepted = max(next((k for k, (a, b) in enumerate(zip(d, rest)) if a != b), min(len(d), len(rest))) for d in drafts)
            width += sum(len(d) for d in drafts) + (len(prompt_ids) if count == 0 else 1)
            new = rest[: accepted + 1]
            # the parser stops at the first token that closes the expression or forces its end
            cut = next((i + 1 for i in range(len(new)) if done(generated + new[: i + 1])), len(new))
            generated += new[:cut]
            count += 1
        passes.append(count)
        widths.append(width / count)
    shortcuts = ", ".join(n for n, off in (("KB labels", args.no_labels), ("grammar closings", args.no_grammar)) if not off)
    print(f"{args.variant} ({shortcuts or 'no shortcuts'}), {args.branches} draft(s) per pass: {statistics.mean(passes):.2f} passes per parse "
          f"(median {statistics.median(passes):g}), {statistics.mean(widths):.1f} tokens per pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
