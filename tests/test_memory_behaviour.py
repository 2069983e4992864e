"""Memory that behaves like memory: corrections, repeated use, episodes, clean recall, types.

Each test is one behaviour a person expects after a week of remembering, recalling and
correcting (docs/user-guide.md, "Memory that behaves like memory"); real vaults, real files,
the CLI through click's runner.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(ROOT))

from benchmarks.promotion_sim import simulate  # noqa: E402

T0 = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


def cli(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(root)])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    v, _ = Vault.init(tmp_path / "v")
    return v


def _iso(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S")


# ------------------------------------------------------------------------------ 1. corrections
def test_remember_supersedes_marks_both_notes_and_edits_the_old_one_surgically(
    vault: Vault,
) -> None:
    old = vault.remember(
        "Staging DB is Postgres 16, port 5433", title="Staging DB port", tags=["staging"], now=T0
    )
    subprocess.run(["git", "init", "-q"], cwd=vault.root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=vault.root, check=True)
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"],
        cwd=vault.root,
        check=True,
    )
    code, out, err = cli(
        vault.root,
        "remember",
        "Correction: the staging port is 5432",
        "--title",
        "Staging DB port fixed",
        "--supersedes",
        "Staging DB port",
        "--now",
        _iso(T0 + 4 * DAY),
    )
    assert code == 0, err
    assert "supersedes [[Staging DB port]]" in out
    new = vault.memory("Staging DB port fixed")
    assert new.fields.supersedes == "[[Staging DB port]]" and new.fields.category == "correction"
    assert 'supersedes: "[[Staging DB port]]"' in (vault.root / new.path).read_text()
    diff = subprocess.run(
        ["git", "diff", "-U0", "--", old.path],
        cwd=vault.root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    changed = sorted(
        ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
    )
    assert changed == sorted(
        [
            "-status: active",
            "+status: superseded",
            '+superseded_by: "[[Staging DB port fixed]]"',
            f"+superseded_at: {_iso(T0 + 4 * DAY)}",
        ]
    )
    # a superseded memory cannot be superseded again, and nothing is written then
    before = sorted(p.name for p in (vault.root / "STM").iterdir())
    code, _, err = cli(vault.root, "remember", "again", "--supersedes", "Staging DB port")
    assert code == 1 and "is superseded by [[Staging DB port fixed]]" in err
    assert sorted(p.name for p in (vault.root / "STM").iterdir()) == before


def test_a_superseded_memory_leaves_recall_and_ranks_below_its_successor(vault: Vault) -> None:
    old = vault.remember(
        "Staging DB is Postgres 16, port 5433 on the staging host", title="Staging DB port", now=T0
    )
    for day in range(1, 4):  # the wrong fact was used a lot: it would outrank the correction
        vault.touch(old.path, now=T0 + day * DAY)
    vault.remember(
        "Correction: staging DB port is 5432",
        title="Staging port correction",
        supersedes=old.fields.id,
        now=T0 + 4 * DAY,
    )
    later = T0 + 365 * DAY
    hits = vault.recall("staging db port", now=later)
    assert [h.title for h in hits] == ["Staging port correction"]
    shown = vault.recall("staging db port", now=later, include_superseded=True)
    assert [h.title for h in shown] == ["Staging port correction", "Staging DB port"]
    assert shown[0].score > shown[1].score
    asked = vault.recall("staging db port", now=later, status="superseded")
    assert [h.title for h in asked] == ["Staging DB port"]


def test_a_superseded_memory_is_never_promoted_and_is_archived_after_the_grace_period(
    vault: Vault,
) -> None:
    old = vault.remember("The office wifi is CorpNet", title="Office wifi", now=T0)
    for day in range(1, 6):
        vault.touch(old.path, now=T0 + day * DAY)
    vault.remember("The office wifi is now CorpNet-5G", supersedes="Office wifi", now=T0 + 6 * DAY)
    run = vault.lifecycle(now=T0 + 7 * DAY)
    assert not any(
        m.path.endswith("Office wifi.md")
        for r in run.results
        for m in r.applied
        if r.name == "promote"
    )
    assert vault.memory("Office wifi").fields.status == "superseded"
    run = vault.lifecycle(now=T0 + 6 * DAY + 15 * DAY)
    expired = [m for r in run.results if r.name == "expire" for m in r.applied]
    assert [m.destination for m in expired] == ["Archive/Office wifi.md"]
    assert expired[0].reason.startswith("superseded 15.0 d ago > 14 d grace")
    assert vault.memory("Office wifi").fields.status == "archived"


# ------------------------------------------------------------------------------ 2. promotion
def test_promotion_needs_use_on_several_days() -> None:
    shares = simulate(seed=5, per_kind=12, rules=(3,))[3]
    assert shares["never"] == shares["once"] == shares["one sitting"] == 0.0
    assert shares["two days"] == shares["repeated"] == 1.0


def test_one_touch_of_an_old_memory_does_not_promote_it(vault: Vault) -> None:
    memory = vault.remember("Prefers tabs over spaces", now=T0)
    vault.touch(memory.path, now=T0 + 3 * DAY)
    assert vault.promote(now=T0 + 3 * DAY + dt.timedelta(hours=1)).applied == []
    vault.touch(memory.path, now=T0 + 4 * DAY)
    moved = vault.promote(now=T0 + 4 * DAY + dt.timedelta(hours=1)).applied
    assert [m.destination for m in moved] == ["LTM/Prefers tabs over spaces.md"]
    assert "used on 3 days ≥ 3" in moved[0].reason


# ------------------------------------------------------------------------------ 4. episodes
def test_import_links_the_turns_of_a_conversation_and_recall_lifts_the_reply(
    vault: Vault,
    tmp_path: Path,
) -> None:
    lines = [  # out of order on purpose: the timestamps give the conversation's order
        {
            "content": "Maya: We called him Biscuit!",
            "session": "s1",
            "timestamp": "2026-10-01T18:02:00",
            "speaker": "Maya",
        },
        {
            "content": "Tom: What did you name the new puppy?",
            "session": "s1",
            "timestamp": "2026-10-01T18:01:00",
            "speaker": "Tom",
        },
        {
            "content": "Tom: Nice. Ours chews every shoe in the house.",
            "session": "s1",
            "timestamp": "2026-10-01T18:03:00",
            "speaker": "Tom",
        },
        {
            "content": "Priya: the new puppy class starts on Monday",
            "session": "s2",
            "timestamp": "2026-10-02T09:00:00",
        },
    ]
    source = tmp_path / "talk.jsonl"
    source.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    code, out, err = cli(vault.root, "import", str(source), "--now", "2026-10-03T00:00:00")
    assert code == 0, err
    titles = [row.title for row in vault.memories()]

    def starting(prefix: str) -> str:
        (title,) = [t for t in titles if t.startswith(prefix)]
        return title

    question = vault.memory(starting("Tom What did you name"))
    reply = vault.memory(starting("Maya We called him"))
    after = vault.memory(starting("Tom Nice"))
    assert question.fields.episode == reply.fields.episode == "s1"
    assert question.fields.previous is None
    assert reply.fields.previous == f"[[{question.title}]]"
    assert after.fields.previous == f"[[{reply.title}]]"
    assert vault.memory(starting("Priya the new puppy")).fields.previous is None
    now = dt.datetime(2026, 10, 3, tzinfo=dt.UTC)
    hits = [h.title for h in vault.recall("her puppy's name", now=now)]
    assert reply.title in hits[:3]
    assert hits.index(reply.title) == hits.index(question.title) + 1
    without = [h.title for h in vault.recall("her puppy's name", now=now, weights={"episode": 0})]
    assert without.index(reply.title) > hits.index(reply.title)  # only the link's graph lift


# ------------------------------------------------------------------------------ 5. clean recall
def test_templates_dashboard_and_boxes_take_no_slot_from_a_memory(vault: Vault) -> None:
    (vault.root / "Templates" / "Coffee Template.md").write_text(
        "---\ntype: memory\n---\n# Coffee\nCoffee order: {{order}}, coffee shop {{shop}}\n"
    )
    (vault.root / "Boxes" / "box-coffee.md").write_text(
        "---\ntype: box\ntopics: [coffee]\n---\nMemory box about coffee, coffee and coffee.\n"
    )
    (vault.root / "Coffee notes.md").write_text("My coffee grinder notes: coffee coffee.\n")
    memory = vault.remember(
        "Coffee order: flat white with oat milk", title="Coffee order", now=T0 - 20 * DAY
    )  # faded: decay signal well below 0.5
    dashboard = vault.root / "Memory dashboard.md"
    dashboard.write_text(dashboard.read_text() + "\ncoffee coffee coffee\n")
    hits = [h.path for h in vault.recall("coffee", now=T0)]
    assert memory.path in hits
    assert not {"Templates/Coffee Template.md", "Boxes/box-coffee.md", "Memory dashboard.md"} & set(
        hits
    )
    everything = [h.path for h in vault.recall("coffee", now=T0, include_notes=True)]
    assert {"Templates/Coffee Template.md", "Boxes/box-coffee.md"} <= set(everything)
    assert {h.path for h in vault.recall("coffee", now=T0, kind="template")} == {
        "Templates/Coffee Template.md",
        "Memory dashboard.md",
    }
    assert [h.path for h in vault.recall("coffee", now=T0, kind="note")] == ["Coffee notes.md"]
    # asking for a template by name brings templates back
    assert "Templates/Coffee Template.md" in [
        h.path for h in vault.recall("coffee template", now=T0)
    ]


def test_a_plain_note_cannot_beat_a_relevant_memory_on_decay(vault: Vault) -> None:
    (vault.root / "Kyoto.md").write_text("Kyoto trip ideas: temples.\n")
    memory = vault.remember(
        "Kyoto trip ideas: temples.", title="Kyoto trip memory", now=T0 - 10 * DAY
    )  # same words, a faded memory
    hits = vault.recall("kyoto trip ideas temples", now=T0)
    ranks = {h.path: h for h in hits}
    assert ranks[memory.path].signals.decay < 0.5
    assert ranks[memory.path].rank < ranks["Kyoto.md"].rank
    assert ranks["Kyoto.md"].score < ranks[memory.path].score


# ------------------------------------------------------------------------------ 6. Obsidian's types
def test_init_adds_vaultmem_types_and_warns_where_the_vault_declares_others(
    copy_vault: Callable[[str], Path],
) -> None:
    root = copy_vault("kepano-obsidian")
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    types = json.loads((root / ".obsidian" / "types.json").read_text())["types"]
    assert types["status"] == "multitext" and types["created"] == "date"  # theirs kept
    assert types["use_count"] == "number" and types["superseded_by"] == "text"  # ours added
    assert "declares status as multitext, vaultmem writes text" in result.stderr
    assert "declares created as date, vaultmem writes datetime" in result.stderr
    # notes use `type` as a list (templates aside): not declared, and said so
    assert "type" not in types
    assert "8 notes use type as list (e.g. Notes/Minimal Theme.md), vaultmem writes text" in (
        result.stderr
    )


def test_a_one_item_list_is_its_item_and_wrong_types_warn_once_per_note_and_key(
    vault: Vault,
) -> None:
    (vault.root / "STM" / "Old idea.md").write_text(
        "---\nid: A1\ntype: memory\nstatus: [archived]\ncreated: 2026-11-01T09:00:00\n---\nx\n"
    )
    (vault.root / "STM" / "Strong one.md").write_text(
        "---\nid: A2\ntype: memory\nstrength: lots\ncreated: 2026-11-01T09:00:00\n---\ny\n"
    )
    code, out, err = cli(vault.root, "list", "--status", "active", "--json")
    assert code == 0 and [r["title"] for r in json.loads(out)["memories"]] == ["Strong one"]
    assert err.count("STM/Strong one.md: strength: 'lots' is not a number") == 1
    for command in (["status"], ["lifecycle", "--dry-run"], ["recall", "strong"]):
        code, _, err = cli(vault.root, *command)
        assert code == 0
        assert err.count("warning: STM/Strong one.md: strength: 'lots'") == 1, command
    assert vault.memory("Old idea").fields.status == "archived"


# ------------------------------------------------------------------------------ 7. smaller ones
def test_show_of_a_plain_note_says_it_is_not_a_memory(vault: Vault) -> None:
    (vault.root / "Kyoto.md").write_text(
        "---\ntags: [travel]\nvisited: 2024-04-02\n---\nMy own notes on Kyoto.\n"
    )
    code, out, _ = cli(vault.root, "show", "Kyoto")
    assert code == 0 and "not a memory" in out and "id " not in out
    code, out, _ = cli(vault.root, "show", "Kyoto", "--json")
    assert json.loads(out) == {  # its own properties, no memory defaults it does not have
        "path": "Kyoto.md",
        "title": "Kyoto",
        "conflicted": False,
        "text": "My own notes on Kyoto.",
        "memory": False,
        "properties": {"tags": ["travel"], "visited": "2024-04-02"},
        "edges": 0,
    }
    made = vault.remember("a memory", now=T0)
    code, out, _ = cli(vault.root, "show", made.path, "--json")
    assert json.loads(out)["memory"] is True


def test_last_used_never_moves_backwards(vault: Vault) -> None:
    memory = vault.remember("Standup is at 09:30", now=T0)
    vault.touch(memory.path, now=T0 + 2 * DAY)
    touched = vault.touch(memory.path, now=T0 - 5 * DAY)  # a clock behind
    assert touched.fields.last_used == T0 + 2 * DAY
    assert touched.fields.use_count == 3


def test_lookups_suggest_close_titles(vault: Vault) -> None:
    vault.remember("Daily standup is at 09:30", title="Standup time", now=T0)
    code, _, err = cli(vault.root, "show", "standup")
    assert code == 1 and "did you mean 'Standup time'?" in err
    code, _, err = cli(vault.root, "show", "Standpu time")
    assert code == 1 and "did you mean 'Standup time'?" in err


def test_help_and_settings_point_at_docs_not_at_documents_that_do_not_ship() -> None:
    shipped = [
        ROOT / "docs" / "cli.md",
        ROOT / "vault-template" / "vaultmem.toml",
        ROOT / "vault-template" / "Memory dashboard.md",
        ROOT / "vault-template" / "Memories.base",
        ROOT / "vault-template" / "Templates" / "Memory.md",
    ]
    for path in shipped:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bspec\b|\bseeds? \d|§", text), path.name
    assert "docs/user-guide.md" in (ROOT / "vault-template" / "vaultmem.toml").read_text()


def test_numbers_print_with_the_precision_that_makes_the_comparison_true() -> None:
    from vaultmem.core.lifecycle.lifecycle_plan import _num

    assert _num(0.149996, 0.15, 4) == "0.149996"
    assert _num(0.1499, 0.15, 2) == "0.1499"
    assert _num(0.5, 0.15, 2) == "0.50"
    assert f"{_num(0.1499, 0.15, 4)} < 0.15" == "0.1499 < 0.15"


def test_a_superseded_memory_is_not_promoted_on_request_either(vault: Vault) -> None:
    vault.remember("Old fact", title="Old fact", now=T0)
    vault.remember("New fact", supersedes="Old fact", now=T0 + DAY)
    code, _, err = cli(vault.root, "promote", "Old fact")
    assert code == 1 and "is superseded by [[New fact]]" in err
    assert (vault.root / "STM" / "Old fact.md").exists()


def test_a_correction_of_a_note_that_breaks_meanwhile_is_taken_back(
    vault: Vault,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = vault.remember("Old fact", title="Old fact", now=T0)
    # another writer leaves conflict markers in the old note after the check: the edit refuses
    import vaultmem.services.memories.corrections as corrections
    from vaultmem.errors import UnsafeNoteError

    checked = corrections.superseded_target

    def then_broken(v: Vault, ref: str) -> str:
        path = checked(v, ref)
        target = v.root / path
        target.write_text(target.read_text() + "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> x\n")
        return path

    monkeypatch.setattr(corrections, "superseded_target", then_broken)
    with pytest.raises(UnsafeNoteError, match="conflict markers"):
        vault.remember("New fact", title="New fact", supersedes="Old fact", now=T0 + DAY)
    assert not (vault.root / "STM" / "New fact.md").exists()
    assert "status: active" in (vault.root / old.path).read_text()


def _hold_vault_lock(sidecar: str, ready: object, done: object) -> None:
    from vaultmem.store.vault_lock import vault_lock

    with vault_lock(Path(sidecar)):
        ready.set()  # type: ignore[attr-defined]
        done.wait(30)  # type: ignore[attr-defined]


def test_a_correction_waits_for_the_lock_as_long_as_the_vault_says(vault: Vault) -> None:
    """A correction waits for a running pass like every save: ``lock_wait_seconds``, not a
    fixed ten seconds; refused, it writes nothing."""
    import multiprocessing
    import time

    from vaultmem.errors import LockedError

    old = vault.remember("Old fact about the lock", title="Old lock fact", now=T0)
    before = sorted(p.relative_to(vault.root).as_posix() for p in vault.root.rglob("*.md"))
    text = (vault.root / old.path).read_text()
    spawn = multiprocessing.get_context("spawn")
    ready, done = spawn.Event(), spawn.Event()
    holder = spawn.Process(target=_hold_vault_lock, args=(str(vault.sidecar), ready, done))
    holder.start()
    try:
        assert ready.wait(30)
        vault.lock_wait_seconds = 0.2
        started = time.monotonic()
        with pytest.raises(LockedError):
            vault.remember("New fact", title="New fact", supersedes="Old lock fact", now=T0 + DAY)
        waited = time.monotonic() - started
    finally:
        done.set()
        holder.join(30)
    assert waited < 5.0  # 0.2 s asked; the old fixed wait was 10 s
    after = sorted(p.relative_to(vault.root).as_posix() for p in vault.root.rglob("*.md"))
    assert after == before
    assert (vault.root / old.path).read_text() == text


def test_a_boxed_hit_shows_its_box_as_its_episode(vault: Vault) -> None:
    """A box never takes a hit's slot, but a sealed memory names the box it was sealed in."""
    for n, text in enumerate(("Deploy freeze starts Friday", "Deploy freeze ends Monday noon")):
        vault.remember(
            text, title=f"Freeze {n}", tags=["deploy"], now=T0 + n * dt.timedelta(minutes=5)
        )
    vault.remember("Lunch on Thursdays is ramen", title="Lunch", now=T0 + 3 * DAY)
    vault.lifecycle(now=T0 + DAY)
    boxes = [p for p in vault.root.joinpath("Boxes").rglob("box-*.md")]
    assert len(boxes) == 1
    box = boxes[0].relative_to(vault.root).as_posix()
    hits = vault.recall("deploy freeze", now=T0 + DAY)
    assert [h.episode for h in hits if h.title.startswith("Freeze")] == [box, box]
    assert box not in [h.path for h in hits]
    lunch = vault.recall("ramen", now=T0 + 3 * DAY)
    assert lunch[0].title == "Lunch" and lunch[0].episode is None  # in no box
    code, out, _ = cli(vault.root, "recall", "deploy freeze", "--json", "--now", _iso(T0 + DAY))
    assert code == 0 and {h["episode"] for h in json.loads(out)["hits"]} == {box}
    code, out, _ = cli(vault.root, "recall", "deploy freeze", "--now", _iso(T0 + DAY))
    assert code == 0 and f"episode: {box}" in out
