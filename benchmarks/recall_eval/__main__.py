"""``python -m benchmarks.recall_eval [--json] [--weights relevance=1,decay=0.3,...]``

Runs every question of ``questions.jsonl`` through recall at the fixed evaluation time, keyword-only
and with full fusion (plus ``--weights`` when given), and prints recall@1/5/10 and MRR per
configuration, overall and per kind, then the questions where the configurations disagree most.
Exit code 2 for bad arguments, 3 while recall is not implemented.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.recall_eval.report import format_report
from benchmarks.recall_eval.runner import (
    PARAPHRASE_FILE,
    K,
    RecallNotReady,
    configurations,
    evaluate,
    load_questions,
    parse_weights,
    subset,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall_eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--weights", metavar="NAME=X,...",
                        help="also run these fusion weights "
                             "(relevance, decay, graph, review_blend)")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="only N questions, taken round-robin across kinds")
    parser.add_argument("--kind", choices=["srd", "kepano", "memory", "paraphrase"],
                        help="only this kind")
    parser.add_argument("--embeddings", action="store_true",
                        help="embed every note with the packaged local model (vaultmem"
                             "[embeddings]) and add the paraphrase questions and the vectors-only "
                             "and hybrid configurations")
    parser.add_argument("--vector-cache", type=Path, metavar="DIR",
                        help="with --embeddings: reuse (and update) the vectors of earlier runs "
                             "kept in DIR")
    parser.add_argument("--tiers", default="",
                        help="with --embeddings: also rerun vectors and hybrid with every vector "
                             "quantised to these tiers, e.g. warm,cold,archive")
    parser.add_argument("--top", type=int, default=10, metavar="N",
                        help="disagreements to list (default 10)")
    parser.add_argument("--vaults", type=Path, metavar="DIR",
                        help="folder holding the real vaults (default tests/vaults)")
    args = parser.parse_args(argv)
    try:
        custom = parse_weights(args.weights) if args.weights else None
    except ValueError as err:
        parser.error(f"--weights: {err}")
    questions = load_questions()
    if args.embeddings:
        questions += load_questions(PARAPHRASE_FILE)
    if args.kind:
        questions = [q for q in questions if q.kind == args.kind]
    if args.limit is not None:
        questions = subset(questions, args.limit)

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty() and (done == total or done % 25 == 0):
            print(f"\r{done}/{total} queries", end="\n" if done == total else "", file=sys.stderr)

    try:
        tiers = [t for t in args.tiers.split(",") if t.strip()] if args.embeddings else []
        evaluation = evaluate(questions, configs=configurations(custom, embeddings=args.embeddings),
                              vaults_dir=args.vaults, k=K, progress=progress,
                              embeddings=args.embeddings, tiers=tiers,
                              vector_cache=args.vector_cache)
    except RecallNotReady as err:
        print(f"recall eval: {err}", file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps(evaluation.as_json(args.top), indent=2, ensure_ascii=False))
    else:
        print(format_report(evaluation, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
