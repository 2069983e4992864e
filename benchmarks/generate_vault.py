"""A synthetic vaultmem vault for the benchmark (spec section 11).

:func:`generate_vault` writes ``n_memories`` memory notes — about 1 KB of body, exactly the 14
frontmatter keys of spec section 2 (id, type, status, layer, category, created, last_used,
use_count, strength, importance, confidence, source, pinned, tags) and 3 ``[[links]]`` each (to
other memories, to ordinary notes, and some unresolved) — spread over ``STM/``,
``Boxes/YYYY-MM-DD/<box>/``, ``LTM/`` and ``Archive/``, plus ``n_ordinary`` ordinary notes (default
``n_memories // 10``) in the person's own folders, with headings, lists, markdown links and
sometimes a fenced code block. Words come from a fixed vocabulary drawn with Zipf-like weights by
a ``random.Random(seed)``: the same arguments always give the same bytes. Field values are spread
so that every lifecycle pass has work (old unused STM notes to forget, speculative ones to expire,
strong ones to promote). Also writes ``vaultmem.toml`` and a minimal ``.obsidian/``.

Fast: the text is built with string joins and written as bytes (100,000 notes take seconds, not
minutes); the file system is the main cost.

    python -m benchmarks.generate_vault DIR --n 10000 [--ordinary 1000] [--seed 0] [--hub]

:func:`generate_hub_vault` (``--hub``) writes instead N plugin notes shaped like the public
obsidian-hub's: inline code in list items, nested lists, HTML blocks, the hub's HTML footer.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

GENERATOR_VERSION = 1
"""Bump when the output for the same arguments changes (the runner's cache keys on it)."""

REFERENCE_TIME = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)
"""The generated vault's "now": every date lies before it; benchmarks plan passes at it."""

FRONTMATTER_KEYS = (
    "id", "type", "status", "layer", "category", "created", "last_used", "use_count",
    "strength", "importance", "confidence", "source", "pinned", "tags",
)
MEMORY_LINKS = 3
MEMORY_BODY_BYTES = (850, 1150)
"""Range the body length of a memory note is drawn from (bytes, before the final newline)."""
MEMORY_INLINE_CODE_SHARE = 0.05
"""Share of memories that quote a command in inline code (they take the markdown-it path)."""
FOLDER_SHARES = (("STM", 0.25), ("Boxes", 0.35), ("LTM", 0.25), ("Archive", 0.15))


def _word_list(text: str) -> list[str]:
    """The distinct words of ``text`` in order (a sentence reads better than quoted words)."""
    return list(dict.fromkeys(text.split()))


_FUNCTION_WORDS = _word_list(
    "the of and to in a is that for it as with was on be by at this from or an are not have "
    "but which when all can more one its also after about into than then only so if"
)
_CONTENT_WORDS = _word_list(
    "editor theme dark light keyboard shortcut terminal shell script python rust typescript "
    "compiler test suite benchmark index query database schema migration table column row "
    "cache latency throughput memory disk network server client request response header token "
    "session login password secret deploy release branch merge commit review issue ticket "
    "sprint roadmap meeting agenda minutes decision owner deadline budget invoice contract "
    "customer vendor partner team manager colleague friend family sister brother mother father "
    "daughter son birthday anniversary holiday vacation flight train hotel booking passport "
    "visa airport station museum gallery concert festival restaurant cafe breakfast lunch "
    "dinner recipe coffee tea bread cheese pasta curry soup salad garden tomato basil lemon "
    "garlic onion pepper olive butter flour sugar oven kettle bicycle running swimming hiking "
    "climbing yoga gym stretch sleep morning evening weekend monday friday january june "
    "october winter summer spring autumn rain snow wind forecast weather city village river "
    "mountain lake coast island bridge street neighbour apartment kitchen office desk chair "
    "lamp window plant book novel chapter author poem essay article paper journal notebook "
    "sketch drawing painting photo camera lens film music album song guitar piano violin "
    "podcast episode interview lecture course lesson exercise homework exam grade teacher "
    "student library archive folder file note link graph backlink tag property template "
    "dashboard vault sync plugin markdown heading paragraph outline draft revision summary "
    "idea question answer reason cause effect pattern habit routine goal plan priority "
    "project milestone estimate risk assumption constraint tradeoff principle preference "
    "correction commitment reminder appointment doctor dentist pharmacy insurance bank "
    "account payment refund receipt tax pension salary rent mortgage loan saving spending "
    "grocery market bakery butcher pharmacy parcel delivery courier address phone email "
    "message chat call video screen monitor laptop battery charger cable adapter printer "
    "router wifi bluetooth headphones speaker microphone backup restore upgrade install "
    "configure setting option default profile account permission access role policy audit "
    "log metric alert incident outage rollback hotfix patch version changelog documentation "
    "guide tutorial example snippet function class module package dependency library "
    "framework container image volume cluster node worker queue job scheduler cron timer "
    "event watcher debounce thread process signal lock transaction journal checkpoint "
    "decay score strength importance confidence recall retention forgetting promotion "
    "consolidation embedding vector cosine similarity cluster topic box trace episode "
    "semantic procedural working episodic café naïve Zürich München Kraków façade résumé"
)
VOCABULARY: tuple[str, ...] = tuple(_FUNCTION_WORDS + _CONTENT_WORDS)
"""The fixed word list; earlier words are drawn more often (weight 1 / (rank + 2))."""
_CUM_WEIGHTS = list(itertools.accumulate(1.0 / (rank + 2) for rank in range(len(VOCABULARY))))
_TITLE_WORDS = tuple(_CONTENT_WORDS)
_TAGS = (
    "editor", "ui", "work", "family", "health", "travel", "food", "finance", "reading", "music",
    "python", "rust", "infra", "meeting", "project/alpha", "project/beta", "people", "home",
    "learning", "ideas", "writing", "garden", "sport", "admin",
)
_CATEGORIES = (
    ("fact", 30), ("preference", 15), ("correction", 5), ("entity", 10), ("decision", 8),
    ("relationship", 6), ("principle", 4), ("commitment", 6), ("moment", 10), ("skill", 6),
)
_SOURCES = (("human", 45), ("agent", 35), ("import", 15), ("consolidation", 5))
_USER_FOLDERS = (
    "Projects/Alpha", "Projects/Beta", "Projects/Gamma/Design", "Journal/2026", "Journal/2025",
    "People", "Reading/Books", "Reading/Articles", "Work/Meetings", "Work/Notes", "Recipes",
    "Inbox", "Travel", "Home",
)
_CODE_LANGUAGES = ("python", "bash", "sql", "toml", "")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


@dataclass(slots=True)
class _Memory:
    title: str
    folder: str
    status: str
    layer: str
    created: dt.datetime


def _words(rng: random.Random, k: int) -> list[str]:
    return rng.choices(VOCABULARY, cum_weights=_CUM_WEIGHTS, k=k)


def _sentence(rng: random.Random, extra: str = "") -> str:
    words = _words(rng, rng.randint(7, 17))
    if extra:
        words.insert(rng.randint(1, len(words)), extra)
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice(".....?!")


def _unique_title(rng: random.Random, taken: set[str], low: int, high: int) -> str:
    """A capitalised title of ``low``–``high`` words, unique case-insensitively in ``taken``."""
    for attempt in itertools.count():
        words = rng.sample(_TITLE_WORDS, rng.randint(low, high))
        title = " ".join(words)
        title = title[0].upper() + title[1:]
        if attempt >= 5:
            title = f"{title} {attempt}"
        if title.lower() not in taken:
            taken.add(title.lower())
            return title
    raise AssertionError("unreachable")  # pragma: no cover


def _ulid(rng: random.Random, when: dt.datetime) -> str:
    """A ULID-shaped id: 10 characters of milliseconds, 16 random ones (Crockford base 32)."""
    ms = int(when.timestamp() * 1000)
    stamp = "".join(_CROCKFORD[(ms >> shift) & 31] for shift in range(45, -5, -5))
    return stamp + "".join(rng.choices(_CROCKFORD, k=16))


def _stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def _ago(rng: random.Random, low_days: float, high_days: float) -> dt.datetime:
    seconds = rng.uniform(low_days, high_days) * 86400.0
    return (REFERENCE_TIME - dt.timedelta(seconds=seconds)).replace(microsecond=0)


def _plan_memories(rng: random.Random, n: int, taken: set[str]) -> list[_Memory]:
    """Titles, folders and states of every memory (before any body is written)."""
    folders = [name for name, _ in FOLDER_SHARES]
    shares = [share for _, share in FOLDER_SHARES]
    memories: list[_Memory] = []
    for _ in range(n):
        title = _unique_title(rng, taken, 3, 6)
        top = rng.choices(folders, weights=shares)[0]
        if top == "STM":
            memories.append(_Memory(title, "STM", "active", "working", _ago(rng, 0, 45)))
        elif top == "Boxes":
            memories.append(_Memory(title, "", "active", "episodic", _ago(rng, 1, 120)))
        elif top == "LTM":
            memories.append(_Memory(title, "LTM", "promoted", "semantic", _ago(rng, 5, 400)))
        else:
            layer = rng.choice(("working", "episodic"))
            memories.append(_Memory(title, "Archive", "archived", layer, _ago(rng, 30, 500)))
    # Box members: grouped in created order, 5–40 per box, one folder per box and day.
    boxed = sorted((m for m in memories if m.layer == "episodic" and m.status == "active"),
                   key=lambda m: m.created)
    start = 0
    while start < len(boxed):
        size = rng.randint(5, 40)
        group = boxed[start : start + size]
        day = group[0].created.strftime("%Y-%m-%d")
        topic = "-".join(rng.sample(_TITLE_WORDS, 2)).lower()
        folder = f"Boxes/{day}/box-{day}-{topic}-{start // 5}"
        for member in group:
            member.folder = folder
        start += size
    return memories


def _link(rng: random.Random, target: str, heading_ok: bool) -> str:
    roll = rng.random()
    if roll < 0.1:
        return f"[[{target}|{' '.join(_words(rng, 2))}]]"
    if roll < 0.2 and heading_ok:
        return f"[[{target}#{rng.choice(_TITLE_WORDS).capitalize()}]]"
    return f"[[{target}]]"


def _link_targets(
    rng: random.Random, own: str, memory_titles: Sequence[str], ordinary_titles: Sequence[str],
    k: int,
) -> list[str]:
    """``k`` link markups: ~60 % other memories, ~25 % ordinary notes, ~15 % unresolved."""
    links: list[str] = []
    while len(links) < k:
        roll = rng.random()
        if roll < 0.15:
            title = " ".join(rng.sample(_TITLE_WORDS, rng.randint(2, 3))).capitalize()
            links.append(_link(rng, f"{title} (unwritten)", False))
        elif roll < 0.40 and ordinary_titles:
            links.append(_link(rng, rng.choice(ordinary_titles), True))
        else:
            target = rng.choice(memory_titles)
            if target != own or len(memory_titles) == 1:
                links.append(_link(rng, target, False))
    return links


def _memory_text(
    rng: random.Random, memory: _Memory, memory_titles: Sequence[str],
    ordinary_titles: Sequence[str],
) -> str:
    created = memory.created
    last_used = created + (REFERENCE_TIME - created) * rng.random() ** 2
    use_count = min(1 + int(rng.expovariate(0.35)), 60)
    category = rng.choices([c for c, _ in _CATEGORIES], weights=[w for _, w in _CATEGORIES])[0]
    layer = memory.layer
    if memory.status == "promoted" and category in ("principle", "skill", "decision"):
        layer = "procedural"
    confidence = rng.uniform(0.2, 0.4) if rng.random() < 0.08 else rng.uniform(0.6, 1.0)
    tags = rng.sample(_TAGS, rng.choice((0, 1, 1, 2, 2, 3)))
    frontmatter = (
        "---\n"
        f"id: {_ulid(rng, created)}\n"
        "type: memory\n"
        f"status: {memory.status}\n"
        f"layer: {layer}\n"
        f"category: {category}\n"
        f"created: {_stamp(created)}\n"
        f"last_used: {_stamp(last_used.replace(microsecond=0))}\n"
        f"use_count: {use_count}\n"
        f"strength: {round(rng.uniform(0.5, 2.0), 2)}\n"
        f"importance: {round(rng.uniform(0.05, 1.0), 2)}\n"
        f"confidence: {round(confidence, 2)}\n"
        f"source: {rng.choices([s for s, _ in _SOURCES], weights=[w for _, w in _SOURCES])[0]}\n"
        f"pinned: {'true' if rng.random() < 0.03 else 'false'}\n"
        f"tags: [{', '.join(tags)}]\n"
        "---\n"
    )
    target = rng.randint(*MEMORY_BODY_BYTES)
    links = _link_targets(rng, memory.title, memory_titles, ordinary_titles, MEMORY_LINKS)
    code = f"`{rng.choice(_TITLE_WORDS)} --{rng.choice(_TITLE_WORDS)}`"
    extras = [*links, code] if rng.random() < MEMORY_INLINE_CODE_SHARE else list(links)
    sentences: list[str] = []
    size = 0
    while size < target or extras:
        extra = extras.pop(0) if extras and (size > target / 2 or rng.random() < 0.4) else ""
        sentence = _sentence(rng, extra)
        sentences.append(sentence)
        size += len(sentence) + 1
    paragraphs: list[str] = []
    while sentences:
        take = rng.randint(2, 5)
        paragraphs.append(" ".join(sentences[:take]))
        sentences = sentences[take:]
    return frontmatter + "\n\n".join(paragraphs) + "\n"


def _ordinary_text(
    rng: random.Random, title: str, memory_titles: Sequence[str],
    ordinary: Sequence[tuple[str, str]],
) -> str:
    parts: list[str] = []
    if rng.random() < 0.4:
        tags = ", ".join(rng.sample(_TAGS, rng.randint(1, 3)))
        created = _ago(rng, 0, 700).strftime("%Y-%m-%d")
        parts.append(f"---\ntags: [{tags}]\ncreated: {created}\naliases: []\n---\n")
    parts.append(f"# {title}\n\n{_sentence(rng)} {_sentence(rng)}\n")
    for _ in range(rng.randint(1, 4)):
        heading = " ".join(_words(rng, rng.randint(1, 4))).capitalize()
        parts.append(f"\n## {heading}\n\n")
        links: list[str] = []
        for _ in range(rng.randint(0, 2)):
            if ordinary and rng.random() < 0.6:
                folder, other = rng.choice(ordinary)
                href = f"{folder}/{other}".replace(" ", "%20")
                links.append(f"[{other.lower()}]({href}.md)")
            elif memory_titles:
                links.append(f"[[{rng.choice(memory_titles)}]]")
        parts.append(" ".join(_sentence(rng, links.pop() if links else "")
                              for _ in range(rng.randint(2, 6))) + "\n")
        if rng.random() < 0.5:
            parts.append("\n" + "".join(f"- {_sentence(rng, link)}\n"
                                         for link in [*links, *[""] * rng.randint(1, 4)]))
        if rng.random() < 0.12:
            language = rng.choice(_CODE_LANGUAGES)
            lines = "\n".join(
                " ".join(_words(rng, rng.randint(2, 7))) for _ in range(rng.randint(2, 8))
            )
            parts.append(f"\n```{language}\n{lines}\n[[not a link inside code]]\n```\n")
    return "".join(parts)


_VAULTMEM_TOML = """\
# Synthetic benchmark vault written by benchmarks/generate_vault.py (seed {seed}).
# Defaults everywhere; the folders are written out to match the generated layout.
[folders]
stm = "STM"
boxes = "Boxes"
ltm = "LTM"
archive = "Archive"
"""


def generate_vault(
    root: Path, n_memories: int, n_ordinary: int | None = None, seed: int = 0
) -> None:
    """Write the synthetic vault into ``root`` (created if missing; existing files are replaced).

    ``n_ordinary`` defaults to ``n_memories // 10``. Deterministic for the same arguments (and
    :data:`GENERATOR_VERSION`). Dates lie before :data:`REFERENCE_TIME`.
    """
    if n_memories < 1:
        raise ValueError("n_memories must be at least 1")
    if n_ordinary is None:
        n_ordinary = n_memories // 10
    rng = random.Random(seed)
    taken: set[str] = set()
    memories = _plan_memories(rng, n_memories, taken)
    ordinary = [
        (rng.choice(_USER_FOLDERS), _unique_title(rng, taken, 1, 4)) for _ in range(n_ordinary)
    ]
    memory_titles = [m.title for m in memories]
    ordinary_titles = [title for _, title in ordinary]

    made: set[str] = set()

    def write(rel: str, text: str) -> None:
        folder = rel.rpartition("/")[0]
        if folder not in made:
            os.makedirs(root / folder, exist_ok=True)
            made.add(folder)
        with open(os.path.join(root, rel), "wb") as handle:
            handle.write(text.encode("utf-8"))

    root.mkdir(parents=True, exist_ok=True)
    write(".obsidian/app.json", '{\n  "alwaysUpdateLinks": true\n}\n')
    write("vaultmem.toml", _VAULTMEM_TOML.format(seed=seed))
    write(".gitignore", ".vaultmem/\n")
    for folder in ("STM", "Boxes", "LTM", "Archive"):
        os.makedirs(root / folder, exist_ok=True)
    for memory in memories:
        text = _memory_text(rng, memory, memory_titles, ordinary_titles)
        write(f"{memory.folder}/{memory.title}.md", text)
    for folder, title in ordinary:
        write(f"{folder}/{title}.md", _ordinary_text(rng, title, memory_titles, ordinary))


_HUB_FOOTER = (
    '<span class="git-footer">[Edit In GitHub](https://github.dev/obsidian-community/'
    'obsidian-hub/blob/main/01%20-%20Community/01%20-%20Plugins/{id}.md "git-hub-edit-note") | '
    "[Copy this note](https://raw.githubusercontent.com/obsidian-community/obsidian-hub/main/"
    '01%20-%20Community/01%20-%20Plugins/{id}.md "git-hub-copy-note") | [Download this vault]'
    "(https://github.com/obsidian-community/obsidian-hub/releases/download/v0.1.0/"
    'obsidian-hub-v0.1.0.zip "git-hub-download-vault") </span>'
)


def _hub_item(rng: random.Random, titles: Sequence[str], depth: int) -> str:
    """One list item of a plugin's feature list: text, inline code, a link, maybe nested items."""
    indent = "    " * depth
    roll = rng.random()
    extra = (
        f"`{rng.choice(_TITLE_WORDS)}`"
        if roll < 0.4
        else f"[[{rng.choice(titles)}]]"
        if roll < 0.7
        else ""
    )
    text = f"{indent}{rng.choice('-*-')} {_sentence(rng, extra)}\n"
    if depth < 2 and rng.random() < 0.25:
        text += "".join(_hub_item(rng, titles, depth + 1) for _ in range(rng.randint(1, 3)))
    return text


def _hub_text(rng: random.Random, title: str, plugin_id: str, titles: Sequence[str]) -> str:
    """A plugin note shaped like obsidian-hub's: frontmatter, ``%%`` comments, a list holding the
    plugin ID in inline code, nested feature lists with code and links, HTML blocks
    (``<details>``, ``<img>``), sometimes a fence in a list item, a callout or an HTML comment,
    and the hub's ``<span>`` footer of markdown links."""
    author = rng.choice(titles)
    parts = [
        "---\naliases: \ntags: \n  - seedling\npublish: true\n---\n\n",
        "%% Add a description below this line. It doesn't need to be a long description. %%\n\n",
        f"# {title}\n\n{_sentence(rng)} {_sentence(rng)}\n\n## Links\n\n",
        f"- Plugin ID: `{plugin_id}`\n- Author: [[{author}]]\n",
        f"- [GitHub repository](https://github.com/{plugin_id}/{plugin_id})\n",
        f"- [Open in Obsidian](obsidian://show-plugin?id={plugin_id})\n\n## Features\n\n",
    ]
    parts.extend(_hub_item(rng, titles, 0) for _ in range(rng.randint(2, 7)))
    roll = rng.random()
    if roll < 0.3:
        parts.append(
            f"\n<details>\n<summary>{_sentence(rng)}</summary>\n\n"
            f"{_sentence(rng, f'`{plugin_id}`')}\n\n</details>\n"
        )
    elif roll < 0.5:
        parts.append(
            f'\n<img src="https://example.org/{plugin_id}.png" width="400">\n{_sentence(rng)}\n'
        )
    elif roll < 0.6:
        parts.append(
            f"\n1. {_sentence(rng)}\n    ```js\n    app.plugins.{plugin_id}\n"
            f"    [[not a link in code]]\n    ```\n2. {_sentence(rng)}\n"
        )
    elif roll < 0.7:
        parts.append(
            f"\n> [!tip] {_sentence(rng)}\n> Run `{plugin_id}` from the palette, "
            f"see [[{rng.choice(titles)}]].\n"
        )
    elif roll < 0.75:
        parts.append(f"\n<!-- [[{rng.choice(titles)}]] hidden -->\n")
    parts.append("\n## Related Topics\n\n%% Add links to related topics below this line. %%\n\n")
    parts.append(f"- [[{rng.choice(titles)}]]\n\n")
    parts.append("%% Hub footer: Please don't edit anything below this line %%\n\n")
    parts.append(f"# This note in GitHub\n\n{_HUB_FOOTER.format(id=plugin_id)}\n")
    return "".join(parts)


def generate_hub_vault(root: Path, n_notes: int, seed: int = 0) -> None:
    """Write a vault of ``n_notes`` plugin notes shaped like obsidian-hub's (see
    :func:`_hub_text`) under ``01 - Community/01 - Plugins/`` and a hundred author notes
    beside them; deterministic for the same arguments."""
    if n_notes < 1:
        raise ValueError("n_notes must be at least 1")
    rng = random.Random(seed)
    taken: set[str] = set()
    titles = [_unique_title(rng, taken, 1, 3) for _ in range(n_notes)]
    authors = [_unique_title(rng, taken, 2, 2) for _ in range(100)]
    plugins = root / "01 - Community" / "01 - Plugins"
    people = root / "01 - Community" / "People"
    plugins.mkdir(parents=True, exist_ok=True)
    people.mkdir(parents=True, exist_ok=True)
    (root / ".obsidian").mkdir(exist_ok=True)
    (root / ".obsidian" / "app.json").write_bytes(b'{\n  "alwaysUpdateLinks": true\n}\n')
    linkable = [*titles, *authors]
    for title in titles:
        plugin_id = title.lower().replace(" ", "-")
        text = _hub_text(rng, title, plugin_id, linkable)
        (plugins / f"{title}.md").write_bytes(text.encode("utf-8"))
    for author in authors:
        (people / f"{author}.md").write_bytes(f"# {author}\n\n{_sentence(rng)}\n".encode())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.generate_vault", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("dir", type=Path, help="folder to write the vault into")
    parser.add_argument("--n", type=int, default=10_000, help="memory notes (default 10000)")
    parser.add_argument("--ordinary", type=int, default=None,
                        help="ordinary notes (default n/10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hub", action="store_true",
                        help="write N plugin notes shaped like obsidian-hub's instead")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.hub:
        generate_hub_vault(args.dir, args.n, args.seed)
        print(f"wrote {args.n} hub-shaped plugin notes to {args.dir} "
              f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        return 0
    generate_vault(args.dir, args.n, args.ordinary, args.seed)
    ordinary = args.n // 10 if args.ordinary is None else args.ordinary
    print(f"wrote {args.n} memories and {ordinary} ordinary notes to {args.dir} "
          f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
