"""What people and machines type: ~ and $VARIABLES in paths, titles looked up as they were saved,
JSON errors, a closed pipe, a mistyped command, a folder that is not a vault."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main, wants_json

NOW = "2026-11-20T09:00:00"


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def home() -> Path:
    path = Path(os.environ["HOME"])  # tests/conftest.py points HOME into tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_tilde_and_variables_are_expanded_in_every_path(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run("init", "~/Notes")
    assert code == 0, err
    assert (home / "Notes" / "vaultmem.toml").is_file() and not Path("~").exists()
    assert f"vault ready at {home / 'Notes'}" in out

    code, out, err = run("remember", "Tea is best at 80 C", "--vault", "$HOME/Notes")
    assert code == 0 and "remembered STM/Tea is best at 80 C.md" in out, err

    (home / "more.jsonl").write_text('{"content": "Coffee after lunch only"}\n', "utf-8")
    code, out, err = run("import", "~/more.jsonl", "--vault", "${HOME}/Notes")
    assert code == 0 and "imported 1 memory" in out, err

    code, out, err = run("list", "--json", env={"VAULTMEM_VAULT": "~/Notes"})
    assert code == 0, err
    assert sorted(row["title"] for row in json.loads(out)["memories"]) == [
        "Coffee after lunch only",
        "Tea is best at 80 C",
    ]

    with Vault.open("~/Notes") as vault:  # the README's own example
        assert vault.root == (home / "Notes").resolve()
    monkeypatch.setenv("VAULTMEM_VAULT", "$HOME/Notes")
    with Vault.open() as vault:
        assert vault.root == (home / "Notes").resolve()


def test_a_lookup_cleans_a_title_as_remember_saves_it(home: Path) -> None:
    vault = str(home / "v")
    assert run("init", vault)[0] == 0
    code, out, err = run(
        "remember", "The wifi password is on the fridge", "--title", "Wifi password?",
        "--vault", vault,
    )
    assert code == 0 and "STM/Wifi password.md" in out, err
    code, out, err = run("show", "Wifi password?", "--vault", vault)
    assert code == 0 and out.startswith("Wifi password\n  path        STM/Wifi password.md"), err
    code, out, err = run("show", "STM/Wifi password?.md", "--vault", vault)
    assert code == 0 and "STM/Wifi password.md" in out, err

    with Vault.open(vault) as v:
        saved = v.remember("Standup is at 09:30")
        assert saved.path == "STM/Standup is at 09 30.md"
        assert v.memory("Standup is at 09:30").path == saved.path


def test_default_titles_end_at_a_phrase_boundary(home: Path) -> None:
    with Vault.init(home / "v")[0] as vault:
        memory = vault.remember(
            "Allergic to peanuts: avoid satay and pesto made with pine nuts or peanut oil"
        )
        assert memory.path == "STM/Allergic to peanuts.md"
        memory = vault.remember("Ana prefers short meetings in the morning with a clear agenda")
        assert memory.path == "STM/Ana prefers short meetings in the morning.md"


def test_every_error_is_a_json_object_with_json(home: Path) -> None:
    vault = str(home / "v")
    assert run("init", vault)[0] == 0
    cases = [
        (("show", "No such memory", "--json", "--vault", vault), 1, "no memory with id or title"),
        (("list", "--json", "--sort", "nonsense", "--vault", vault), 2, "'nonsense' is not one"),
        (("list", "--json", "--vault", str(home)), 1, "run `vaultmem init"),
        (("lst", "--json"), 2, "Did you mean 'list'"),
        (("remember", "--json", "--vault", vault), 1, "nothing to remember"),
    ]
    for args, exit_code, words in cases:
        code, out, err = run(*args)
        assert code == exit_code, (args, out, err)
        data = json.loads(out)
        assert set(data) == {"error", "exit_code"} and data["exit_code"] == exit_code, args
        assert words in data["error"], (args, data)
        assert "Error:" not in err


def test_without_json_errors_stay_one_line_on_stderr(home: Path) -> None:
    code, out, err = run("show", "x", "--vault", str(home))
    assert code == 1 and out == ""
    assert err == (
        f"Error: {home} is not a vault (no vaultmem.toml or .obsidian/); "
        f"run `vaultmem init {home}` first\n"
    )
    assert not (home / ".vaultmem").exists()  # nothing written into a folder that is not a vault


def test_json_is_asked_for_only_before_a_double_dash() -> None:
    assert wants_json(["list", "--json"])
    assert not wants_json(["remember", "--", "--json"])


def test_a_mistyped_command_gets_a_suggestion() -> None:
    code, out, err = run("remeber", "x")
    assert code == 2
    assert "No such command 'remeber'. Did you mean 'remember'?" in err
    code, out, err = run("zzzz")
    assert code == 2 and "No such command 'zzzz'." in err and "Did you mean" not in err


def test_a_closed_pipe_ends_quietly(home: Path) -> None:
    vault = home / "v"
    Vault.init(vault)[0].close()
    lines = "".join(json.dumps({"content": f"Memory number {n} of many"}) + "\n" for n in range(40))
    (home / "m.jsonl").write_text(lines, "utf-8")
    assert run("import", str(home / "m.jsonl"), "--vault", str(vault))[0] == 0
    for extra in ([], ["--json"]):
        reader = subprocess.Popen(  # `vaultmem list | head -0`: the reader has gone already
            [sys.executable, "-m", "vaultmem", "list", "--vault", str(vault), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert reader.stdout is not None and reader.stderr is not None
        reader.stdout.close()
        assert reader.wait(timeout=60) == 1
        assert reader.stderr.read() == b""


def _capped_vault(home: Path, cap: int) -> Path:
    vault = home / "v"
    Vault.init(vault)[0].close()
    settings = vault / "vaultmem.toml"
    text = settings.read_text("utf-8")
    settings.write_text(text.replace("max_active = 1000", f"max_active = {cap}"), "utf-8")
    return vault


def test_import_warns_over_max_active_and_status_shows_the_next_pass(home: Path) -> None:
    vault = _capped_vault(home, 5)
    lines = "".join(
        json.dumps({"content": f"Imported fact number {n}", "created": "2026-10-01T09:00:00",
                    "last_used": f"2026-10-{n + 1:02d}T09:00:00"}) + "\n"
        for n in range(12)
    )
    (home / "m.jsonl").write_text(lines, "utf-8")
    code, out, err = run("import", str(home / "m.jsonl"), "--now", NOW, "--vault", str(vault))
    assert code == 0 and "imported 12 memories" in out, err
    assert "warning: the vault now holds 12 active memories, over max_active 5" in err
    code, out, err = run(
        "import", str(home / "m.jsonl"), "--json", "--now", NOW, "--vault", str(vault)
    )
    assert code == 0 and json.loads(out)["over_max_active"] is None  # nothing new imported

    code, out, err = run("status", "--json", "--now", NOW, "--vault", str(vault))
    assert code == 0, err
    preview = json.loads(out)["next_pass"]
    code, out, err = run("status", "--now", NOW, "--vault", str(vault))
    assert "the next `vaultmem lifecycle` would" in out and "    prune:    archive 7\n" in out
    code, out, err = run("lifecycle", "--json", "--now", NOW, "--vault", str(vault))
    assert code == 0, err
    applied = {
        result["pass"]: sorted(m["action"] for m in result["applied"])
        for result in json.loads(out)["passes"]
    }
    assert preview["prune"] == {"archive": 7}  # 12 active, cap 5
    assert {
        name: sorted(a for a, n in actions.items() for _ in range(n))
        for name, actions in preview.items()
    } == applied


def test_links_lists_each_neighbour_once(home: Path) -> None:
    vault = home / "v"
    Vault.init(vault)[0].close()
    (vault / "A.md").write_text(
        '---\nrelated: ["[[B]]"]\n---\nSee [[B]], again [[B|bee]] and [[C]] [[C]].\n', "utf-8"
    )
    (vault / "B.md").write_text("Back to [[A]] and [[A#Top]].\n", "utf-8")
    code, out, err = run("links", "A", "--vault", str(vault))
    assert code == 0, err
    assert out == (
        "A.md\n  outgoing:\n    → B.md  ([[B]]: frontmatter, wikilink ×2)\n"
        "  backlinks:\n    ← B.md  (wikilink ×2)\n"
        "  unresolved:\n    ? [[C]]  (wikilink ×2)\n"
    )
    code, out, err = run("links", "A", "--json", "--vault", str(vault))
    data = json.loads(out)
    assert [(o["resolved"], o["kinds"]) for o in data["outgoing"]] == [
        ("B.md", {"frontmatter": 1, "wikilink": 2})
    ]
    assert [b["source"] for b in data["backlinks"]] == ["B.md"]
    assert [u["target"] for u in data["unresolved"]] == ["C"]


def test_init_declares_no_type_the_notes_use_otherwise(home: Path) -> None:
    vault = home / "Existing"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "Trip.md").write_text("---\ntype: [travel]\npinned: yes please\n---\nKyoto\n", "utf-8")
    (vault / "Plain.md").write_text("---\ntype: journal\n---\nA day.\n", "utf-8")
    (vault / "Templates").mkdir()
    (vault / "Templates" / "T.md").write_text("---\nuse_count: {{n}}\n---\n", "utf-8")
    code, out, err = run("init", str(vault))
    assert code == 0, err
    assert "  + .obsidian/types.json\n" in out
    types = json.loads((vault / ".obsidian" / "types.json").read_text("utf-8"))["types"]
    assert "type" not in types and "pinned" not in types
    assert types["use_count"] == "number"  # a template's placeholder is not a use
    assert "warning: 1 note uses type as list (e.g. Trip.md), vaultmem writes text" in err
    assert "warning: 1 note uses pinned as text (e.g. Trip.md), vaultmem writes checkbox" in err
    assert (vault / "Trip.md").read_text("utf-8").startswith("---\ntype: [travel]\n")


def _faded_vault(home: Path, count: int) -> Path:
    vault = home / "v"
    Vault.init(vault)[0].close()
    lines = "".join(
        json.dumps({"content": f"Faded fact number {n}", "created": "2026-01-05T09:00:00",
                    "last_used": "2026-01-05T09:00:00", "layer": "working"}) + "\n"
        for n in range(count)
    )
    (home / "m.jsonl").write_text(lines, "utf-8")
    assert run("import", str(home / "m.jsonl"), "--now", NOW, "--vault", str(vault))[0] == 0
    return vault


def test_passes_report_progress_to_a_listener(home: Path) -> None:
    from vaultmem.services.lifecycle.progress import progress_to

    vault = _faded_vault(home, 12)
    (vault / "Written meanwhile.md").write_text("A note of my own.\n", "utf-8")
    reports: list[tuple[str, int, int]] = []
    with Vault.open(vault) as v, progress_to(lambda *step: reports.append(step)):
        run = v.lifecycle(now=dt.datetime(2026, 11, 20, tzinfo=dt.UTC))
    # sealed into one box first, then the 12 members and their emptied box are archived
    forgotten = next(r for r in run.results if r.name == "forget")
    assert len(forgotten.applied) == 13
    indexing = [(done, total) for label, done, total in reports if label == "indexing"]
    assert indexing and indexing[-1][0] == indexing[-1][1]  # at least the note written since
    assert [step for step in reports if step[0] == "seal"] == [("seal", 0, 1), ("seal", 1, 1)]
    steps = [done for label, done, total in reports if label == "forget" and total == 13]
    assert steps == list(range(14))  # before each note, and once at the end


def test_progress_bars_on_a_terminal_and_none_when_piped(home: Path) -> None:
    vault = _faded_vault(home, 12)
    command = [sys.executable, "-m", "vaultmem", "gc", "--now", NOW, "--vault", str(vault)]
    piped = subprocess.run(command + ["--dry-run"], capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and piped.stderr == ""
    out, drawn = _on_a_terminal(command)
    assert out.count("archived STM/Faded fact number") == 12
    assert b"forget" in drawn and b"100%" in drawn
    out, drawn = _on_a_terminal(command[:3] + ["undo", "--vault", str(vault)])
    assert out.count("restored STM/Faded fact number") == 12
    assert b"undoing" in drawn and b"100%" in drawn  # undo reports as the passes do


def _on_a_terminal(command: list[str]) -> tuple[str, bytes]:
    """Run ``command`` with stderr on a pseudo-terminal: (its stdout, what it drew there)."""
    import pty

    controller, terminal = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=terminal) as shown:
        os.close(terminal)
        assert shown.stdout is not None
        out = shown.stdout.read().decode()
        assert shown.wait(timeout=60) == 0
    drawn = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal's other end is closed: all read
            break
        if not chunk:
            break
        drawn += chunk
    os.close(controller)
    return out, drawn


def test_an_mcp_config_may_name_the_vault_with_a_tilde(home: Path) -> None:
    Vault.init(home / "Notes")[0].close()
    served = subprocess.run(  # JSON configs pass "~" on unexpanded; stdin at its end: it stops
        [sys.executable, "-m", "vaultmem", "mcp", "--vault", "~/Notes"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 0 and "Error" not in served.stderr, served.stderr


def _git_vault_with_an_old_fact(home: Path) -> Path:
    """A new vault ``home/v``, a git repository, with one memory that fades by ``NOW``."""
    vault = home / "v"
    Vault.init(vault)[0].close()
    subprocess.run(["git", "init", "-q"], cwd=vault, check=True)
    run("remember", "An old fact to forget", "--now", "2026-01-01T00:00:00", "--vault", str(vault))
    return vault


def test_an_undo_whose_commit_fails_prints_one_json_object(home: Path) -> None:
    vault = _git_vault_with_an_old_fact(home)
    for key, value in (("user.name", "t"), ("user.email", "t@example.org")):
        subprocess.run(["git", "config", key, value], cwd=vault, check=True)
    code, out, err = run("lifecycle", "--now", NOW, "--vault", str(vault))
    assert code == 0, err
    hook = vault / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by the hook' >&2\nexit 1\n")
    hook.chmod(0o755)
    code, out, err = run("undo", "--commit", "--json", "--vault", str(vault))
    assert code == 1
    report = json.loads(out)  # one object: the undo's report, with the error added
    assert report["exit_code"] == 1 and report["error"] == report["commit_error"]
    assert "git commit failed: refused by the hook" in report["error"]
    assert report["restored"] and "Error:" not in err
    assert (vault / "STM" / "An old fact to forget.md").exists()  # the undo itself stands


def test_a_json_report_that_then_fails_is_one_object_with_the_error(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _git_vault_with_an_old_fact(home)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):  # git refuses an empty name
        monkeypatch.setenv(name, "")
    code, out, err = run("lifecycle", "--commit", "--json", "--now", NOW, "--vault", str(vault))
    assert code == 1
    report = json.loads(out)  # one object: the pass's report, with the error added
    assert report["exit_code"] == 1 and report["error"] == report["commit_error"]
    assert report["error"].startswith("git commit failed") and "Error:" not in err
    assert any(p["applied"] for p in report["passes"])
