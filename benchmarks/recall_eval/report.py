"""Plain-text report of an :class:`~benchmarks.recall_eval.runner.Evaluation`: an aligned table of
recall@1/5/10 and MRR per configuration and scope, and the questions the configurations disagree
on most."""

from __future__ import annotations

from benchmarks.recall_eval.runner import Evaluation


def _rank(rank: object) -> str:
    return "-" if rank is None else str(rank)


def _cut(text: object, width: int) -> str:
    value = "-" if text is None else str(text)
    return value if len(value) <= width else value[: width - 1] + "…"


def _tail(path: object, width: int) -> str:
    """A path cut from the left, so the file name stays readable."""
    value = "-" if path is None else str(path).removesuffix(".md")
    return value if len(value) <= width else "…" + value[-(width - 1):]


def format_table(evaluation: Evaluation) -> str:
    """One row per scope and configuration; ΔMRR is against the first configuration."""
    table = evaluation.scores()
    base = evaluation.configs[0].name
    header = ["scope", "config", "n", "R@1", "R@5", "R@10", "MRR", "ΔMRR"]
    rows: list[list[str]] = []
    for scope in evaluation.scopes():
        for config in evaluation.configs:
            s = table[config.name][scope]
            delta = s.mrr - table[base][scope].mrr
            rows.append([scope, config.name, str(s.n), f"{s.recall_1:.3f}", f"{s.recall_5:.3f}",
                         f"{s.recall_10:.3f}", f"{s.mrr:.3f}",
                         "" if config.name == base else f"{delta:+.3f}"])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    left = {0, 1}

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    previous = None
    for row in rows:
        if previous is not None and row[0] != previous:
            out.append("")
        out.append(line(row))
        previous = row[0]
    return "\n".join(out)


def format_configs(evaluation: Evaluation) -> str:
    lines = [f"recall eval at {evaluation.now.isoformat()}, k={evaluation.k}, "
             f"{len(evaluation.questions)} questions"]
    for config in evaluation.configs:
        errors = len(evaluation.errors(config.name))
        lines.append(f"  {config.name:<8} weights: {config.describe()}; "
                     f"{evaluation.mean_ms(config.name):.1f} ms/query"
                     + (f"; {errors} queries failed" if errors else ""))
    return "\n".join(lines)


def format_disagreements(evaluation: Evaluation, base: str, other: str, top: int = 10) -> str:
    """The ``top`` questions whose answer rank moves most between ``base`` and ``other``."""
    rows = evaluation.disagreements(base, other, top)
    if not rows:
        return f"{other} and {base} rank every answer the same."
    header = ["#", base, other, "kind", "query", f"top hit ({base})", f"top hit ({other})"]
    body = []
    for n, row in enumerate(rows, 1):
        kind = str(row["kind"]) + (f"/{row['aspect']}" if row["aspect"] else "")
        body.append([str(n), _rank(row[f"rank_{base}"]), _rank(row[f"rank_{other}"]), kind,
                     _cut(row["query"], 56), _tail(row[f"top_{base}"], 34),
                     _tail(row[f"top_{other}"], 34)])
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    right = {0, 1, 2}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    title = f"Largest rank changes, {base} → {other} (rank of the first answer, - = not in top k):"
    return "\n".join([title, line(header), *(line(r) for r in body)])


def format_errors(evaluation: Evaluation, limit: int = 5) -> str:
    lines = []
    for config in evaluation.configs:
        errors = evaluation.errors(config.name)
        for question, error in errors[:limit]:
            lines.append(f"  {config.name}: {question.query!r}: {error}")
        if len(errors) > limit:
            lines.append(f"  {config.name}: … {len(errors) - limit} more")
    return "\n".join(["Failed queries:", *lines]) if lines else ""


def format_report(evaluation: Evaluation, top: int = 10) -> str:
    parts = [format_configs(evaluation), "", format_table(evaluation)]
    base = evaluation.configs[0].name
    for config in evaluation.configs[1:]:
        parts += ["", format_disagreements(evaluation, base, config.name, top)]
    errors = format_errors(evaluation)
    if errors:
        parts += ["", errors]
    return "\n".join(parts)
