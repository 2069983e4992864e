"""Every shell and Python example in README.md and docs/*.md runs as written.

The convention (docs/user-guide.md, "Examples in these docs"): each ```bash, ```sh and
```python block of a document runs, in the order written, in a new temporary HOME that is also
the working folder, where ``~/Notes`` is a vault (``vaultmem init ~/Notes``) in a git repository
with one commit; every block starts in HOME and must exit 0. A block that cannot run there is
marked on the line right before its fence with ``<!-- example: skip: REASON -->`` — it is
listed here as skipped with its reason, never dropped silently. Other blocks (json, toml,
text, markdown) are not commands.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUNNABLE = {"bash": "bash", "sh": "bash", "python": "python"}
SKIP = re.compile(r"^<!-- example: skip: (?P<reason>\S.*?) -->$")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")


@dataclass(frozen=True)
class Example:
    document: Path
    line: int
    language: str
    code: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(REPO)}:{self.line}"


def examples(document: Path) -> list[Example]:
    """The fenced blocks of ``document`` in a language that runs, with their skip markers."""
    lines = document.read_text(encoding="utf-8").splitlines()
    found: list[Example] = []
    at = 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if not opening:
            at += 1
            continue
        end = next(i for i in range(at + 1, len(lines)) if lines[i].startswith("```"))
        language = opening["lang"]
        marker = SKIP.match(lines[at - 1]) if at else None
        if language in RUNNABLE:
            code = "\n".join(lines[at + 1 : end]) + "\n"
            found.append(Example(document, at + 1, language, code, marker and marker["reason"]))
        at = end + 1
    return found


def test_every_skip_marker_stands_before_a_runnable_block_and_gives_a_reason() -> None:
    for document in DOCUMENTS:
        lines = document.read_text(encoding="utf-8").splitlines()
        fenced = False
        for number, line in enumerate(lines):
            fenced ^= line.startswith("```")
            if line.startswith("<!-- example:") and not fenced:  # not the guide's own example
                where = f"{document.name}:{number + 1}"
                assert SKIP.match(line), f"{where}: write <!-- example: skip: REASON -->"
                fence = FENCE.match(lines[number + 1]) if number + 1 < len(lines) else None
                assert fence and fence["lang"] in RUNNABLE, f"{where}: not before a shell block"


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A new HOME holding ~/Notes, a vault in a git repository; the environment to run in."""
    home = tmp_path / "examples-home"
    home.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("VAULTMEM_", "GIT_")) and key != "PYTHONPATH"
    }
    env |= {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        "GIT_AUTHOR_NAME": "Doc Example",
        "GIT_AUTHOR_EMAIL": "doc@example.invalid",
        "GIT_COMMITTER_NAME": "Doc Example",
        "GIT_COMMITTER_EMAIL": "doc@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    setup = (
        "set -e; vaultmem init ~/Notes >/dev/null; cd ~/Notes; git init -q; git add -A; "
        "git commit -qm vault"
    )
    subprocess.run(["bash", "-c", setup], cwd=home, env=env, check=True, timeout=120)
    return env


def _run(example: Example, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if example.language == "python":
        command = [sys.executable, "-c", example.code]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", example.code]
    return subprocess.run(
        command,
        cwd=env["HOME"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "document",
    [d for d in DOCUMENTS if any(not e.skip for e in examples(d))],
    ids=lambda p: p.name,
)
def test_the_examples_of_a_document_run_as_written(
    document: Path, home: dict[str, str]
) -> None:
    ran = 0
    for example in examples(document):
        if example.skip:
            continue
        result = _run(example, home)
        assert result.returncode == 0, (
            f"{example.where} exited {result.returncode}\n{example.code}\n"
            f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
        )
        assert "Traceback" not in result.stderr, f"{example.where}\n{result.stderr}"
        ran += 1
    if document.name in ("README.md", "user-guide.md"):
        assert ran >= 2, f"{document.name}: only {ran} examples ran"


def _skipped() -> list[Example]:
    return [e for d in DOCUMENTS for e in examples(d) if e.skip]


@pytest.mark.parametrize("example", _skipped(), ids=lambda e: e.where)
def test_a_marked_example_is_listed_as_skipped(example: Example) -> None:
    pytest.skip(f"{example.where}: {example.skip}")
