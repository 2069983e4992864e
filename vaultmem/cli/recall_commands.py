"""``recall`` and ``review``: find notes for a query, list memories due for review.

See docs/user-guide.md, "Recall" and "Scores" (review priority).
"""

from __future__ import annotations

import datetime as dt

import click

from vaultmem.cli.common import (
    counted,
    fmt_score,
    json_option,
    now_option,
    print_json,
    refused_by,
    vault_command,
)
from vaultmem.core.notes.excerpts import excerpt
from vaultmem.core.notes.fields import LAYERS, STATUSES
from vaultmem.core.notes.timestamps import parse_datetime
from vaultmem.core.recall.recall_fusion import UNRANKED_BM25, FusionWeights, review_period
from vaultmem.services.index.note_filters import checked_tag, folder_parts
from vaultmem.services.recall.recall import Hit, recall_weights, touched_hits
from vaultmem.services.recall.recall_filters import KINDS
from vaultmem.services.vault import Vault


def _parse_since(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> dt.datetime | None:
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter(
            f"{value!r} is empty: give a datetime (ISO 8601, e.g. 2026-11-01) or leave --since out"
        )
    try:
        return parse_datetime(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a datetime (use ISO 8601, e.g. 2026-11-01 or 2026-11-01T09:00:00)"
        ) from None


def _words(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    if value and not " ".join(value).strip():
        raise click.BadParameter(f"empty query {' '.join(value)!r}: give a few words to look for")
    return value


@click.command()
@click.argument("query", nargs=-1, required=True, callback=_words)
@click.option("--k", "k", type=click.IntRange(min=1),
              help="How many results (default: [recall] k, 10).")
@click.option("--status", type=click.Choice(STATUSES), help="Only memories with this status.")
@click.option("--layer", type=click.Choice(LAYERS), help="Only memories in this layer.")
@click.option("--tag", callback=refused_by(checked_tag),
              help="Only notes with this tag or one nested in it (project: project/a).")
@click.option("--folder", callback=refused_by(folder_parts),
              help="Only notes under this vault folder, e.g. LTM.")
@click.option("--since", callback=_parse_since, metavar="DATETIME",
              help="Only notes used or created at or after DATETIME.")
@click.option("--include-archived", is_flag=True, help="Also search archived memories.")
@click.option("--include-superseded", is_flag=True,
              help="Also show memories a correction superseded (ranked below their successor).")
@click.option("--include-notes", is_flag=True,
              help="Also let box, trace, template and dashboard notes take slots (not with "
              "--kind).")
@click.option("--kind", type=click.Choice(KINDS),
              help="Only this kind of note: memory, note (a person's own), box, trace, template.")
@click.option("--explain", is_flag=True, help="Show each signal's contribution to every score.")
@click.option("--touch", is_flag=True,
              help="Reinforce the first memory returned (use_count + 1), the one you used.")
@click.option("--touch-hit", "touch_hit", multiple=True, metavar="RANK_OR_ID",
              help="Reinforce this hit (its rank, id or title) instead of the first (not with "
              "--touch). Repeatable.")
@json_option
@now_option
@vault_command
def recall(vault: Vault, query: tuple[str, ...], k: int | None, explain: bool, touch: bool,
           touch_hit: tuple[str, ...], as_json: bool, now: dt.datetime,
           **filters: object) -> None:
    """Find the notes that best answer QUERY (words; quotes and operators are plain text).

    Ranks by keyword relevance (BM25, title above body), memory strength (decay score), links to
    the strongest hits, episode context (the turn after a matching turn of a conversation), and
    blends in memories due for review (every third result). Superseded memories, boxes, traces,
    templates and the dashboard are left out unless asked for (docs/user-guide.md, "Recall").
    """
    if touch and touch_hit:
        raise click.UsageError(
            "--touch reinforces the first memory and --touch-hit the hits named: give one of them"
        )
    if filters.get("kind") is not None and filters.get("include_notes"):
        raise click.UsageError(
            f"--include-notes has no effect with --kind {filters['kind']}: the kind already "
            "chooses the notes; give one of them"
        )
    text = " ".join(query)
    chosen: object = list(touch_hit) if touch_hit else touch
    hits = vault.recall(text, k=k, now=now, touch=chosen, **filters)
    if as_json:
        print_json({"query": text, "hits": [hit.as_dict() for hit in hits]})
        return
    if not hits:
        click.echo(f"no notes match {text!r}")
        return
    if explain:
        _print_explained(hits, recall_weights(vault), text)
    else:
        for hit in hits:
            mark = "  [review]" if hit.review else ""
            mark += "  [conflicted]" if hit.conflicted else ""
            click.echo(f"{hit.rank:>3}. {hit.score:6.3f}  {hit.path}{mark}")
            line = excerpt(hit.text)
            if line:
                click.echo(f"{'':13}{line}")
            if hit.episode:
                click.echo(f"{'':13}episode: {hit.episode}")
    if chosen:
        touched = touched_hits(hits, chosen)
        names = ", ".join(hit.title for hit in touched) or "none"
        click.echo(f"reinforced {counted(len(touched), 'memory', 'memories')}: {names}", err=True)


def _print_explained(hits: list[Hit], weights: FusionWeights, query: str) -> None:
    """Per hit: score, then each signal as contribution = weight × signal, with its source."""
    period = review_period(weights.review_blend)
    blend = f"one slot in {period}" if period else "off"
    hybrid = any(hit.signals.cosine is not None for hit in hits)
    vector = f" + {weights.vector:g}×vector" if hybrid else ""
    click.echo(
        f"recall {query!r}: score = {weights.relevance:g}×relevance + {weights.decay:g}×decay"
        f" + {weights.graph:g}×graph{vector}; review blend {weights.review_blend:g} ({blend})"
    )
    for hit in hits:
        s = hit.signals
        placed = "  ← placed by review blending" if hit.review else ""
        placed += "  [conflicted: git conflict markers]" if hit.conflicted else ""
        click.echo(f"{hit.rank:>3}. {hit.path}  score {hit.score:.3f}{placed}")
        if hit.episode:
            click.echo(f"       episode: {hit.episode}")
        bm25 = (f"bm25 {s.bm25:.3f}" if s.bm25 not in (0.0, UNRANKED_BM25)
                else "no word matched (reached by a link)" if s.bm25 == 0.0
                else "matched common words only: not ranked")
        click.echo(f"       relevance {hit.relevance:6.3f} = {weights.relevance:g} × "
                   f"{s.relevance:.3f}   ({bm25})")
        source = ("neutral: not a memory" if s.decay_score is None
                  else f"decay score {fmt_score(s.decay_score)}")
        click.echo(f"       decay     {hit.decay:6.3f} = {weights.decay:g} × {s.decay:.3f}   "
                   f"({source})")
        episode = hit.graph - weights.graph * s.graph - s.time - s.date
        lifts = "".join(f" + {name} {value:.3f}" for name, value in (
            ("episode", episode), ("time words", s.time), ("date", s.date)) if value > 1e-9)
        why = [reason for reason, value in (
            ("the question asks when; the note says when", s.time),
            ("created on a date the question names", s.date)) if value > 0]
        if not why and episode > 1e-9:  # the turn after a strong hit in its conversation
            why = [f"the turn after {s.linked_to!r}"]
        if not why:
            why = [f"linked with {s.linked_to!r}" if s.linked_to else "no link to a strong hit"]
        click.echo(f"       graph     {hit.graph:6.3f} = {weights.graph:g} × {s.graph:.3f}"
                   f"{lifts}   ({'; '.join(why)})")
        if hybrid:
            similar = (f"cosine {s.cosine:.3f} with the query" if s.cosine is not None
                       else "no vector: run `vaultmem embed --all`")
            click.echo(f"       vector    {hit.vector:6.3f} = {weights.vector:g} × "
                       f"{s.vector:.3f}   ({similar})")
        if s.review_priority > 0:
            click.echo(f"       review priority {s.review_priority:.3f} (danger zone)")


@click.command()
@click.option("--k", "k", type=click.IntRange(min=1),
              help="How many memories (default: [recall] k, 10).")
@json_option
@now_option
@vault_command
def review(vault: Vault, k: int | None, as_json: bool, now: dt.datetime) -> None:
    """List active memories in the danger zone, most urgent first (docs/user-guide.md, Scores).

    A memory is in the danger zone while its decay score is between 0.15 and 0.35; priority
    peaks at 0.25. Reinforce one with `vaultmem touch ID` or `vaultmem observe ID`.
    """
    rows = vault.review(k=k, now=now)
    if as_json:
        print_json({"memories": [row.as_dict() for row in rows]})
        return
    if not rows:
        click.echo("no memories are due for review")
        return
    click.echo(f"{'priority':>8} {'score':>6} {'uses':>4}  {'last used':<19}  path")
    for row in rows:
        click.echo(f"{row.review_priority:>8.3f} {fmt_score(row.score):>6} {row.use_count:>4}  "
                   f"{row.last_used or '—':<19}  {row.path}")
