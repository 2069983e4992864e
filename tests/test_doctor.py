"""``vaultmem doctor`` is signal: a fresh vault passes --strict, templates are not checked, and
unresolved links (to notes and to missing attachments) are summarised one line per note."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main


def _run(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(argv))
    return result.exit_code, result.output


def test_fresh_init_passes_doctor_strict(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    assert _run("init", str(root))[0] == 0
    code, output = _run("doctor", "--vault", str(root), "--strict")
    assert code == 0, output
    assert output.splitlines() == [
        "index: not built yet; 2 notes indexed now (repaired)",
        "2 notes checked: 0 problems, 0 warnings",
    ]
    # the dashboard's own ![[Memories.base]] is a link to the file, and it resolves
    code, output = _run("links", "--vault", str(root), "Memory dashboard", "--json")
    assert code == 0, output
    assert "Memories.base" in output


def test_kepano_after_init(copy_vault: Callable[[str], Path]) -> None:
    root = copy_vault("kepano-obsidian")
    assert _run("init", str(root))[0] == 0
    code, output = _run("doctor", "--vault", str(root), "--all")
    assert code == 0, output
    lines = [line for line in output.splitlines() if line.startswith("warning")]
    assert len(lines) == len(set(lines))  # nothing printed twice
    # templates (kepano's and vaultmem's own) hold placeholders: not checked
    assert not any("[wrong-type]" in line or "[template]" in line for line in lines)
    assert not any("Templates/Memory.md" in line for line in output.splitlines())
    # one line per note with unresolved links, naming them
    per_note = Counter(line.split("] ", 1)[1].split(": ", 1)[0] for line in lines)
    assert max(per_note.values()) == 1
    assert (
        "warning [unresolved-link] References/Obsidian.md: 2 links resolve to nothing: [[Apps]] ×2"
    ) in lines
    jpg = [line for line in lines if "References/Out of Control.md" in line]
    assert jpg and "[[out-of-control.jpg]]" in jpg[0]  # a missing attachment is reported
    evergreen = next(line for line in lines if "manipulate.md" in line)
    assert "10 links resolve to nothing" in evergreen and "and 4 more" in evergreen
    assert output.rstrip().endswith(f"{len(lines)} warnings")

    code, verbose = _run("doctor", "--vault", str(root), "--verbose")
    links = [line for line in verbose.splitlines() if "[unresolved-link]" in line]
    assert (
        "warning [unresolved-link] References/Obsidian.md: [[Apps]] ×2 resolves to nothing" in links
    )
    assert (
        len(links)
        == len(set(links))
        == len(json.loads(_run("doctor", "--vault", str(root), "--json")[1])["unresolved_links"])
    )
    assert len(links) > len(lines)

    code, raw = _run("doctor", "--vault", str(root), "--json")
    report = json.loads(raw)
    every = {(u["path"], u["target"]): u["count"] for u in report["unresolved_links"]}
    assert every[("References/Obsidian.md", "Apps")] == 2
    assert every[("References/Out of Control.md", "out-of-control.jpg")] == 1
    assert len(report["warnings"]) == len(lines)


def test_missing_attachment_is_reported_and_strict_fails(tmp_path: Path) -> None:
    root = tmp_path / "v"
    assert _run("init", str(root))[0] == 0
    (root / "Note.md").write_text("![[diagram.svg]] ![[clip.ogv]] [doc](files/a.pdf)\n")
    (root / "clip.ogv").write_bytes(b"ogg")
    code, output = _run("doctor", "--vault", str(root), "--strict")
    assert code == 1
    assert (
        "warning [unresolved-link] Note.md: 2 links resolve to nothing: "
        "![[diagram.svg]], [](files/a.pdf)"
    ) in output.splitlines()
    (root / "diagram.svg").write_text("<svg/>")
    (root / "files").mkdir()
    (root / "files" / "a.pdf").write_bytes(b"%PDF")
    code, output = _run("doctor", "--vault", str(root), "--strict")
    assert code == 0, output


def test_doctor_warns_of_notes_and_folders_whose_names_are_not_utf8(tmp_path: Path) -> None:
    root = tmp_path / "v"
    Vault.init(root)
    base = os.fsencode(root)
    with open(base + b"/STM/caf\xe9.md", "wb") as handle:
        handle.write(b"---\ntype: memory\n---\nbody\n")
    os.mkdir(base + b"/Notes \xff")
    with open(base + b"/ignored \xe9.txt", "wb") as handle:  # not a note: not vaultmem's
        handle.write(b"x")
    result = CliRunner().invoke(main, ["doctor", "--vault", str(root), "--json"])
    report = json.loads(result.stdout)
    named = [(w["kind"], w["path"]) for w in report["warnings"] if w["kind"] == "name-not-utf8"]
    assert named == [("name-not-utf8", "Notes \\xff"), ("name-not-utf8", "STM/caf\\xe9.md")]
    text = CliRunner().invoke(main, ["doctor", "--vault", str(root)])
    assert "STM/caf\\xe9.md" in text.output and "not UTF-8" in text.output
    assert "Traceback" not in text.output


def test_doctor_summarises_by_kind_and_lists_every_finding_with_all(
    copy_vault: Callable[[str], Path],
) -> None:
    root = copy_vault("kepano-obsidian")
    assert _run("init", str(root))[0] == 0
    (root / "Broken.md").write_text("---\ntitle: [unclosed\n---\nbody\n")
    code, full = _run("doctor", "--vault", str(root), "--all")
    assert code == 1
    code, short = _run("doctor", "--vault", str(root))
    assert code == 1
    every = [line for line in full.splitlines() if line.startswith("warning [unresolved-link]")]
    shown = [line for line in short.splitlines() if line.startswith("warning [unresolved-link]")]
    assert len(every) == 18 and shown == every[:10]  # templates' links to notes-to-be left out
    assert "  … 8 more [unresolved-link] (--all lists every one)" in short.splitlines()
    assert "problem [unparsable] Broken.md: " in short
    assert short.splitlines()[-2:] == [
        "by kind: unparsable 1 problem, unresolved-link 18 warnings",
        "106 notes checked: 1 problem, 18 warnings",
    ]
    assert not any("Templates/" in line for line in full.splitlines())
