"""Attachments in the index: links to images, PDFs, media, canvases and bases resolve to files."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from vaultmem import Vault
from vaultmem.services.index.index_sync import sync_paths


def _vault(tmp_path: Path) -> Vault:
    root = tmp_path / "v"
    (root / "STM").mkdir(parents=True)
    (root / "vaultmem.toml").write_text("")
    return Vault.open(root)


def _write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


def _resolved(vault: Vault, source: str) -> dict[str, str | None]:
    return {row.target: row.resolved for row in vault.index.links_from(source)}


BODY = (
    "![[cover.avif]] [[scan.pdf#page=2]] ![[song.flac]] ![[clip.3gp]] ![[film.mkv]]\n"
    "![[film.ogv]] ![[Board.canvas]] ![[Memories.base]] ![pic](img/a%20b.webp) ![[gone.png]]\n"
    "[[Other]] <!-- ![[hidden.png]] -->\n"
)


def test_links_to_attachments_resolve_to_files(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "Note.md", BODY)
    _write(vault.root, "Other.md", "x")
    for rel in ("img/cover.avif", "Docs/scan.pdf", "song.flac", "clip.3gp", "Films/film.mkv",
                "Films/film.ogv", "Board.canvas", "Memories.base", "img/a b.webp"):  # fmt: skip
        _write(vault.root, rel, b"\x89binary")
    _write(vault.root, ".trash/gone.png", b"x")  # dot folders hold nothing the index tracks
    vault.sync()
    assert _resolved(vault, "Note.md") == {
        "cover.avif": "img/cover.avif",
        "scan.pdf": "Docs/scan.pdf",
        "song.flac": "song.flac",
        "clip.3gp": "clip.3gp",
        "film.mkv": "Films/film.mkv",
        "film.ogv": "Films/film.ogv",
        "Board.canvas": "Board.canvas",
        "Memories.base": "Memories.base",
        "img/a b.webp": "img/a b.webp",
        "gone.png": None,
        "Other": "Other.md",
    }
    kinds = {row.target: row.kind for row in vault.index.links_from("Note.md")}
    assert kinds["cover.avif"] == "embed" and kinds["scan.pdf"] == "wikilink"
    assert kinds["img/a b.webp"] == "markdown"
    # attachments are files, not notes: only Other counts as a neighbour
    assert vault.index.note_row("Note.md")["edges"] == 1  # type: ignore[index]
    assert vault.index.note_count() == 2


def test_attachments_that_come_and_go_re_resolve(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "Note.md", "![[gone.png]] [[scan.pdf]]")
    _write(vault.root, "scan.pdf", b"%PDF")
    vault.sync()
    assert _resolved(vault, "Note.md") == {"gone.png": None, "scan.pdf": "scan.pdf"}
    _write(vault.root, "img/gone.png", b"png")
    os.unlink(vault.root / "scan.pdf")
    report = vault.sync()
    assert not report.any_change  # no note changed; only attachments did
    assert _resolved(vault, "Note.md") == {"gone.png": "img/gone.png", "scan.pdf": None}
    os.rename(vault.root / "img", vault.root / "pictures")
    vault.sync()
    assert _resolved(vault, "Note.md")["gone.png"] == "pictures/gone.png"


def test_watcher_paths_track_attachments(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "Note.md", "![[a.png]] ![[b.jpg]]")
    vault.sync()
    _write(vault.root, "a.png", b"png")
    _write(vault.root, "sub/b.jpg", b"jpg")
    sync_paths(vault.root, vault.index, vault.settings, ["a.png", "sub"])
    assert _resolved(vault, "Note.md") == {"a.png": "a.png", "b.jpg": "sub/b.jpg"}
    os.unlink(vault.root / "a.png")
    (vault.root / "sub" / "b.jpg").unlink()
    (vault.root / "sub").rmdir()
    sync_paths(vault.root, vault.index, vault.settings, ["a.png", "sub"])
    assert _resolved(vault, "Note.md") == {"a.png": None, "b.jpg": None}


def test_rebuild_and_incremental_agree_on_attachments(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "A.md", "![[x.png]] ![[y.pdf]]")
    vault.sync()
    _write(vault.root, "x.png", b"1")
    _write(vault.root, "B.md", "![[y.pdf]]")
    _write(vault.root, "d/y.pdf", b"2")
    vault.sync()
    incremental = [(r.source, r.target, r.resolved) for r in vault.index.all_links()]
    vault.sync(rebuild=True)
    assert [(r.source, r.target, r.resolved) for r in vault.index.all_links()] == incremental


def test_kepano_base_embeds_resolve(copy_vault: Callable[[str], Path]) -> None:
    root = copy_vault("kepano-obsidian")
    (root / "vaultmem.toml").write_text("")
    vault = Vault.open(root)
    vault.sync()
    embeds = [row for row in vault.index.all_links() if row.kind == "embed"]
    assert len(embeds) == 61
    assert all(row.resolved and row.resolved.startswith("Templates/Bases/") for row in embeds)
    assert ("References/Out of Control.md", "out-of-control.jpg", None) in {
        (row.source, row.target, row.resolved) for row in vault.index.all_links()
    }


def test_recall_never_returns_an_attachment(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "pic.png", b"png")
    _write(vault.root, "board.canvas", "{}")
    vault.remember("Coffee brewing at 93 degrees ![[pic.png]] [[board.canvas]]")
    vault.remember("Espresso coffee grind size ![[pic.png]]")
    hits = vault.recall("coffee")
    assert hits and all(hit.path.endswith(".md") for hit in hits)
    assert {row.resolved for row in vault.index.all_links()} >= {"pic.png", "board.canvas"}
