"""The model's check ([answer] model_check) calibrated for a judge model: AUC and every threshold's
false abstention / abstention on unanswerable, replayed over answers made without the check.

    # once per set: the answers without the check (rows with the question, the answer, the label)
    .venv/bin/python bench/eval_answers.py --set S --embed E --model-check off --json runs/S.json
    # the judge reads every answer once (cached), then the replay
    .venv/bin/python bench/calibrate_model_check.py runs/*.json \
        --calibrate squad2 --calibrate dev-eu --calibrate dev-necp --json out.json

The judge is the config's [llm] model (``--config policykb.toml``; the embedded
Qwen2.5-Coder-1.5B by default): a stronger model on an endpoint (``provider = "openai"``) gets its
own AUC and threshold from the same answers. The threshold chosen is the highest of
``--threshold`` values that adds at most ``--max-added`` false abstention to each ``--calibrate``
set (docs/answers.md#the-models-check); every set's replay at every threshold is printed beside it.
P(yes) replies are cached in ``--llm-cache`` (a SQLite file), so a second run costs nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.cache import user_cache_dir  # noqa: E402
from core.config import load_config  # noqa: E402
from core.llm import make_llm  # noqa: E402
from spr.eval.calibration import auc, checked, highest_threshold, replay, score_rows  # noqa: E402
from spr.model_check import DECLINED  # noqa: E402

THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="bench/eval_answers.py --json files, made with --model-check off")
    ap.add_argument("--config", type=Path, default=None, help="policykb.toml whose [llm] is the judge (default: the embedded model)")
    ap.add_argument("--calibrate", action="append", default=[], help="a set whose false abstention may rise by --max-added at most (repeatable)")
    ap.add_argument("--threshold", action="append", type=float, default=[], help=f"thresholds to replay (default: {', '.join(map(str, THRESHOLDS))})")
    ap.add_argument("--pool", action="append", default=[], metavar="NAME=S1,S2", help="also the AUC of these sets' answers pooled (repeatable)")
    ap.add_argument("--max-added", type=float, default=0.01, help="false abstention the check may add to a --calibrate set")
    ap.add_argument("--llm-cache", type=Path, default=user_cache_dir() / "bench" / "model-check.sqlite", help="P(yes) replies cached here")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    sets: dict[str, list[dict]] = {}
    for path in args.runs:
        run = json.loads(path.read_text())
        kind = run["kinds"].get("extractive")
        if kind is None:
            print(f"{path}: no extractive answers, skipped", file=sys.stderr)
            continue
        if any(str(r.get("abstain_reason", "")).startswith(DECLINED) for r in kind["rows"]):
            print(f"{path}: made with the check on; rerun bench/eval_answers.py with --model-check off", file=sys.stderr)
            return 2
        sets[run["set"]] = kind["rows"]
    missing = [s for s in args.calibrate if s not in sets]
    if missing:
        print(f"--calibrate names sets no run holds: {', '.join(missing)}", file=sys.stderr)
        return 2

    config = load_config(args.config)
    args.llm_cache.parent.mkdir(parents=True, exist_ok=True)
    llm = make_llm(config.llm.model_copy(update={"cache": True}), args.llm_cache)
    print(f"judge: {llm.model_id}", flush=True)
    scores: dict[str, dict[str, float]] = {}
    for name, rows in sets.items():
        started = time.perf_counter()
        scores[name] = score_rows(llm, rows)
        print(f"  {name}: {len(scores[name])} answers read in {time.perf_counter() - started:.0f} s", flush=True)

    thresholds = sorted(set(args.threshold or THRESHOLDS))
    replays = {name: {t: replay(rows, scores[name], t) for t in (None, *thresholds)} for name, rows in sets.items()}
    chosen = highest_threshold(replays, args.calibrate, args.max_added) if args.calibrate else None

    print("\nAUC of P(yes), answerable against unanswerable (answers the check reads):")
    aucs = {}
    for name, rows in sets.items():
        aucs[name] = auc([(bool(r["answerable"]), scores[name][str(r["id"])]) for r in rows if checked(r)])
        print(f"  {name}: {aucs[name]}")
    for pool in args.pool:
        name, _, members = pool.partition("=")
        chosen_sets = [m for m in members.split(",") if m in sets]
        aucs[name] = auc([(bool(r["answerable"]), scores[m][str(r["id"])]) for m in chosen_sets for r in sets[m] if checked(r)])
        print(f"  {name} ({', '.join(chosen_sets)} pooled): {aucs[name]}")
    print("\n| set | threshold | false abstention | abstains on unanswerable | token recall | declined answerable / unanswerable |")
    print("|---|---|---|---|---|---|")
    for name, by_t in replays.items():
        for t, r in by_t.items():
            mark = " (chosen)" if t is not None and t == chosen else ""
            print(f"| {name} | {'off' if t is None else t}{mark} | {r.false_abstention:.3f} | "
                  f"{'–' if r.abstain_unanswerable is None else f'{r.abstain_unanswerable:.3f}'} | {r.token_recall:.3f} | "
                  f"{r.declined_answerable} / {r.declined_unanswerable} |")
    if args.calibrate:
        print(f"\nthreshold: {chosen} (the highest adding ≤ {args.max_added} false abstention to {', '.join(args.calibrate)})")
    if args.json:
        args.json.write_text(json.dumps({
            "judge": llm.model_id, "threshold": chosen, "calibrate": args.calibrate, "max_added": args.max_added, "auc": aucs,
            "replays": {name: [vars(r) for r in by_t.values()] for name, by_t in replays.items()},
            "scores": scores,
        }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
