"""CLI behaviour through click's CliRunner: exit codes, messages, and what lands in the notes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem.cli import main

NOW = "2026-11-20T09:00:00"


def run(*args: str, vault: Path | None = None, input: str | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    argv = list(args)
    if vault is not None:
        argv += ["--vault", str(vault)]
    result = runner.invoke(main, argv, input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    code, out, err = run("init", str(tmp_path / "v"))
    assert code == 0, err
    return tmp_path / "v"


def remember(vault: Path, text: str, *extra: str) -> dict[str, object]:
    code, out, err = run("remember", text, "--json", "--now", NOW, *extra, vault=vault)
    assert code == 0, err
    return json.loads(out)


def test_init_creates_the_template_layout(vault: Path) -> None:
    for folder in ("STM", "Boxes", "LTM", "Archive"):
        assert (vault / folder).is_dir()
    assert (vault / "vaultmem.toml").is_file()
    assert ".vaultmem/" in (vault / ".gitignore").read_text()
    assert (vault / ".obsidian" / "types.json").is_file()


def test_remember_writes_a_memory_note_and_prints_id_and_path(vault: Path) -> None:
    data = remember(
        vault,
        "Prefers dark themes in every editor",
        "--tags",
        "editor,ui",
        "--category",
        "preference",
        "--imp",
        "4",
    )
    path = vault / str(data["path"])
    assert data["path"] == "STM/Prefers dark themes in every editor.md"
    text = path.read_text()
    assert text.startswith("---\nid: ")
    assert f"id: {data['id']}\n" in text.replace('"', "")
    assert "type: memory\n" in text
    assert "created: 2026-11-20T09:00:00\n" in text
    assert "importance: 0.75\n" in text
    assert "tags: [editor, ui]\n" in text
    assert text.endswith("---\nPrefers dark themes in every editor\n")


def test_remember_reads_stdin_and_numbers_clashing_titles(vault: Path) -> None:
    code, out, err = run(
        "remember", "--title", "Standup", "--json", input="At 09:30\n", vault=vault
    )
    assert code == 0, err
    assert json.loads(out)["path"] == "STM/Standup.md"
    second = remember(vault, "Standup moved to 10:00", "--title", "standup")
    assert second["path"] == "STM/standup 2.md"


def test_remember_rejects_bad_values_with_one_line_and_exit_1(vault: Path) -> None:
    code, out, err = run("remember", "x", "--importance", "3", vault=vault)
    assert code == 1
    assert "importance must be in 0..1" in err
    assert err.count("\n") == 1
    assert not any((vault / "STM").glob("*.md"))


def test_usage_errors_exit_2(vault: Path) -> None:
    code, _, err = run("remember", "x", "--imp", "9", vault=vault)
    assert code == 2
    code, _, err = run("list", "--sort", "nonsense", vault=vault)
    assert code == 2


def test_touch_changes_exactly_two_lines_in_git(vault: Path) -> None:
    data = remember(vault, "Uses Fira Code")
    subprocess.run(["git", "init", "-q"], cwd=vault, check=True)
    subprocess.run(["git", "add", "-A"], cwd=vault, check=True)
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"],
        cwd=vault,
        check=True,
    )
    # a use later the same day: exactly two lines
    code, out, err = run("touch", str(data["id"]), "--now", "2026-11-20T21:00:00", vault=vault)
    assert code == 0, err
    diff = subprocess.run(
        ["git", "diff", "-U0", "--", str(data["path"])],
        cwd=vault,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    changed = [
        ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
    ]
    assert sorted(changed) == sorted(
        [
            "-last_used: 2026-11-20T09:00:00",
            "+last_used: 2026-11-20T21:00:00",
            "-use_count: 1",
            "+use_count: 2",
        ]
    )
    # a use on a later day also counts the day (the promotion rule needs repeated use)
    code, out, err = run("touch", str(data["id"]), "--now", "2026-11-21T10:00:00", vault=vault)
    assert code == 0, err
    diff = subprocess.run(
        ["git", "diff", "-U0", "--", str(data["path"])],
        cwd=vault, capture_output=True, text=True, check=True,
    ).stdout
    changed = [
        ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
    ]
    assert sorted(changed) == sorted(
        ["-last_used: 2026-11-20T09:00:00", "+last_used: 2026-11-21T10:00:00",
         "-use_count: 1", "+use_count: 3", "+use_days: 2"]
    )


def test_show_json_holds_fields_and_score(vault: Path) -> None:
    data = remember(vault, "Daily standup at 09:30")
    code, out, err = run(
        "show", str(data["id"]), "--json", "--now", "2026-11-23T09:00:00", vault=vault
    )
    assert code == 0, err
    shown = json.loads(out)
    assert shown["id"] == data["id"]
    assert shown["use_count"] == 1
    # power law, 3-day half-life, exactly one half-life idle: score 0.5
    assert shown["score"] == pytest.approx(0.5, abs=1e-6)
    assert shown["factors"]["half_life_days"] == pytest.approx(3.0)


def test_show_unknown_and_ambiguous_refs(vault: Path) -> None:
    code, _, err = run("show", "nothing-like-this", vault=vault)
    assert code == 1 and "no memory with id or title 'nothing-like-this'" in err
    (vault / "LTM" / "Dup.md").write_text("one")
    (vault / "Dup.md").write_text("two")
    code, _, err = run("show", "dup", vault=vault)
    assert code == 1
    assert "2 notes are named 'dup'" in err and "use the path" in err  # they have no id


def test_observe_cross_domain_boosts_strength(vault: Path) -> None:
    data = remember(vault, "JWT tokens expire after 15 minutes", "--tags", "security,jwt")
    code, out, err = run(
        "observe",
        str(data["id"]),
        "--context-tags",
        "api,backend",
        "--json",
        "--now",
        "2026-11-20T10:00:00",
        vault=vault,
    )
    assert code == 0, err
    seen = json.loads(out)["memories"][0]
    assert seen["strength"] == pytest.approx(1.1)
    assert seen["cross_domain_count"] == 1
    assert seen["review_count"] == 1
    assert seen["use_count"] == 2


def test_pin_and_unpin(vault: Path) -> None:
    data = remember(vault, "Passport number is in the safe")
    assert run("pin", str(data["id"]), vault=vault)[0] == 0
    assert "pinned: true\n" in (vault / str(data["path"])).read_text()
    assert run("unpin", str(data["id"]), vault=vault)[0] == 0
    assert "pinned: false\n" in (vault / str(data["path"])).read_text()


def test_touch_refuses_a_note_with_conflict_markers(vault: Path) -> None:
    data = remember(vault, "Conflicted memory")
    path = vault / str(data["path"])
    text = path.read_text() + "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n"
    path.write_text(text)
    code, _, err = run("touch", str(data["id"]), vault=vault)
    assert code == 1
    assert str(data["path"]) in err and "conflict markers" in err
    assert path.read_text() == text


def test_touch_refuses_unparsable_yaml_and_non_utf8(vault: Path) -> None:
    (vault / "STM" / "Broken.md").write_text("---\ntype: memory\nid: b1\ntags: [unclosed\n---\nx\n")
    code, _, err = run("touch", "b1", vault=vault)
    # the id is not readable from broken YAML: the note can only be named by its title
    code, _, err = run("touch", "Broken", vault=vault)
    assert code == 1 and "Broken.md" in err
    (vault / "STM" / "Latin.md").write_bytes(b"---\ntype: memory\nid: l1\n---\ncaf\xe9\n")
    code, _, err = run("touch", "Latin", vault=vault)
    assert code == 1 and "not UTF-8" in err
    assert (vault / "STM" / "Latin.md").read_bytes() == b"---\ntype: memory\nid: l1\n---\ncaf\xe9\n"


def test_wrong_typed_value_warns_with_note_and_key(vault: Path) -> None:
    data = remember(vault, "Strength typo")
    path = vault / str(data["path"])
    path.write_text(path.read_text().replace("strength: 1.0", "strength: high"))
    code, out, err = run("show", str(data["id"]), "--json", vault=vault)
    assert code == 0
    assert f"{data['path']}: strength: 'high' is not a number; using the default" in err
    assert json.loads(out)["strength"] == 1.0


def test_import_jsonl_reports_bad_lines_and_imports_the_rest(vault: Path, tmp_path: Path) -> None:
    lines = [
        json.dumps(
            {
                "content": "Likes tea",
                "tags": ["food"],
                "use_count": 4,
                "created": "2026-11-01T08:00:00Z",
                "last_used": 1763900000,
                "mood": "calm",
            }
        ),
        "{not json",
        json.dumps({"title": "no content"}),
        json.dumps({"content": "Second one", "importance": 2}),
        json.dumps({"content": "Third one", "strength": 1.5}),
    ]
    file = tmp_path / "m.jsonl"
    file.write_text("\n".join(lines) + "\n")
    code, out, err = run("import", str(file), "--json", vault=vault)
    assert code == 0, err
    report = json.loads(out)
    assert report["imported"] == 2
    assert [e["line"] for e in report["errors"]] == [2, 3, 4]
    assert "line 2: not JSON" in err
    text = (vault / "STM" / "Likes tea.md").read_text()
    assert "use_count: 4\n" in text and "mood: calm\n" in text
    assert "created: 2026-11-01T08:00:00\n" in text
    assert "source: import\n" in text


def test_list_filters_and_sorts(vault: Path) -> None:
    remember(vault, "alpha memory", "--tags", "a")
    remember(vault, "beta memory", "--tags", "b", "--layer", "semantic")
    code, out, _ = run("list", "--json", "--tag", "a", vault=vault)
    assert [r["title"] for r in json.loads(out)["memories"]] == ["alpha memory"]
    code, out, _ = run("list", "--json", "--layer", "semantic", vault=vault)
    assert [r["title"] for r in json.loads(out)["memories"]] == ["beta memory"]
    code, out, _ = run(
        "list", "--json", "--sort", "title", "--now", "2027-01-20T00:00:00", vault=vault
    )
    assert [r["title"] for r in json.loads(out)["memories"]] == ["alpha memory", "beta memory"]
    code, out, _ = run("list", "--json", "--now", "2027-01-20T00:00:00", vault=vault)
    rows = json.loads(out)["memories"]
    assert rows[0]["title"] == "beta memory"  # semantic: no decay, score stays 1.0
    assert rows[0]["score"] == pytest.approx(1.0)
    assert rows[1]["score"] < 0.05


def test_status_counts_and_predictions(vault: Path) -> None:
    remember(vault, "old thing")
    remember(vault, "used a lot", "--pin")
    code, out, err = run("status", "--json", "--now", "2027-01-20T00:00:00", vault=vault)
    assert code == 0, err
    report = json.loads(out)
    assert report["memories"] == 2
    assert report["by_folder"] == {"STM/": 2}
    # the next lifecycle seals the two into a box before forget runs: nothing is forgotten
    assert report["next_pass"]["seal"] == {"create": 1, "seal": 2}
    assert report["would_forget"] == report["would_promote"] == 0
    code, out, err = run("lifecycle", "--json", "--now", "2027-01-20T00:00:00", vault=vault)
    assert [len(p["applied"]) for p in json.loads(out)["passes"]] == [3, 0, 0, 0, 0]


def test_gc_dry_run_archive_keep_and_hard(vault: Path) -> None:
    faded = remember(vault, "faded memory")
    kept = remember(vault, "kept memory")
    later = "2027-01-20T00:00:00"
    code, out, _ = run("gc", "--dry-run", "--json", "--now", later, vault=vault)
    plan = json.loads(out)
    assert {m["path"] for m in plan["planned"]} == {faded["path"], kept["path"]}
    assert (vault / str(faded["path"])).exists()
    code, out, err = run("gc", "--keep", str(kept["id"]), "--now", later, vault=vault)
    assert code == 0, err
    assert f"archived {faded['path']} → Archive/faded memory.md" in out
    assert "score" in out and "< 0.05" in out
    archived = (vault / "Archive" / "faded memory.md").read_text()
    assert "status: archived\n" in archived and "archived_at: 2027-01-20T00:00:00\n" in archived
    assert "use_count: 4\n" in (vault / str(kept["path"])).read_text()
    # access_count 3 makes the kept memory immune from now on
    code, out, _ = run("gc", "--dry-run", "--json", "--now", "2027-06-01T00:00:00", vault=vault)
    assert json.loads(out)["planned"] == []
    doomed = remember(vault, "doomed memory")
    code, _, err = run("gc", "--hard", "--now", "2027-06-01T00:00:00", vault=vault, input="n\n")
    assert code == 1 and "nothing deleted" in err
    assert (vault / str(doomed["path"])).exists()
    code, out, _ = run("gc", "--hard", "--yes", "--now", "2027-06-01T00:00:00", vault=vault)
    assert code == 0 and "deleted STM/doomed memory.md" in out
    assert not (vault / str(doomed["path"])).exists()
    assert (vault / str(kept["path"])).exists()


def test_promote_by_use_and_on_request(vault: Path) -> None:
    busy = remember(vault, "busy memory")
    quiet = remember(vault, "quiet memory", "--category", "skill")
    for hour in range(10, 14):  # four uses in one sitting: not repeated use
        run("touch", str(busy["id"]), "--now", f"2026-11-20T{hour}:00:00", vault=vault)
    code, out, err = run("promote", "--now", "2026-11-21T00:00:00", vault=vault)
    assert code == 0 and "nothing to promote" in out
    for when in ("2026-11-21T09:00:00", "2026-11-22T09:00:00"):  # used on two more days
        run("touch", str(busy["id"]), "--now", when, vault=vault)
    code, out, err = run("promote", "--now", "2026-11-22T10:00:00", vault=vault)
    assert code == 0, err
    assert "promoted STM/busy memory.md → LTM/busy memory.md" in out
    assert "used on 3 days ≥ 3" in out
    assert "use_count 7 ≥ 5" in out
    text = (vault / "LTM" / "busy memory.md").read_text()
    assert "status: promoted\n" in text and "layer: semantic\n" in text
    code, out, _ = run("promote", str(quiet["id"]), "--dry-run", vault=vault)
    assert "would promote STM/quiet memory.md" in out and "on request" in out
    assert (vault / "STM" / "quiet memory.md").exists()
    run("promote", str(quiet["id"]), vault=vault)
    assert "layer: procedural\n" in (vault / "LTM" / "quiet memory.md").read_text()
