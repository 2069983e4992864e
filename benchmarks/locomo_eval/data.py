"""LoCoMo conversations read at run time and imported into vaults (the protocol of the data's
README): one memory per dialog turn, ``"<speaker>: <text>"`` (plus `` [shares a photo:
<caption>]``), the turn's session as ``session``, the speaker kept, ``created`` = the session's
date + 30 s per turn; recall at the last session's date + 1 day.

The data (CC BY-NC 4.0) is never copied into the repository: it is read from
``../shared/data/locomo-dev/`` (or ``$VAULTMEM_LOCOMO``) and the vaults live in a temporary folder.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultmem import Vault

DATA_FILE = "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
TURN_SECONDS = 30


def data_folder() -> Path:
    """Where the dev split is read from: ``$VAULTMEM_LOCOMO`` or ``../shared/data/locomo-dev``
    beside the repository (it may not exist)."""
    env = os.environ.get("VAULTMEM_LOCOMO")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev"


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: str
    created: dt.datetime


@dataclass(frozen=True, slots=True)
class Question:
    conversation: str
    question: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    now: dt.datetime


def session_date(text: str) -> dt.datetime:
    """``"1:56 pm on 8 May, 2023"`` → that moment (UTC); ``ValueError`` when unreadable."""
    moment = dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return moment.replace(tzinfo=dt.UTC)


def _evidence(items: Sequence[str]) -> tuple[str, ...]:
    """Evidence ids as the data gives them, split where one string holds two
    (``"D8:6; D9:17"``) and ``"D:11:26"`` read as ``D11:26``."""
    out: list[str] = []
    for item in items:
        for part in re.split(r"[;,]", str(item)):
            part = re.sub(r"^D:(\d)", r"D\1", part.strip())
            if part:
                out.append(part)
    return tuple(out)


def load(folder: Path | None = None) -> list[Conversation]:
    """The conversations of the dev split; ``FileNotFoundError`` when the file is absent."""
    path = (folder or data_folder()) / DATA_FILE
    raw = json.loads(path.read_text(encoding="utf-8"))
    out: list[Conversation] = []
    for sample in raw:
        conv = sample["conversation"]
        turns: list[Turn] = []
        last = None
        n = 1
        while f"session_{n}" in conv:
            date = session_date(conv[f"session_{n}_date_time"])
            last = date if last is None or date > last else last
            for i, turn in enumerate(conv[f"session_{n}"]):
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                turns.append(Turn(turn["dia_id"], turn["speaker"], text, f"session_{n}",
                                  date + dt.timedelta(seconds=TURN_SECONDS * i)))
            n += 1
        assert last is not None
        questions = tuple(
            Question(sample["sample_id"], q["question"], _evidence(q.get("evidence", [])),
                     int(q["category"]))
            for q in sample["qa"]
        )
        out.append(Conversation(sample["sample_id"], tuple(turns), questions,
                                last + dt.timedelta(days=1)))
    return out


def import_lines(turns: Sequence[Turn]) -> list[str]:
    """The JSONL lines ``vaultmem import`` reads for ``turns``."""
    return [
        json.dumps({
            "content": t.text, "speaker": t.speaker, "session": t.session,
            "created": t.created.strftime("%Y-%m-%dT%H:%M:%S"),
        })
        for t in turns
    ]


def build_vault(
    root: Path, conversation: Conversation, *, embeddings: bool, vectors: Path | None = None
) -> tuple[Vault, dict[str, str]]:
    """A new vault at ``root`` holding the conversation's turns (the provider switched to the
    packaged local model when ``embeddings``: import embeds them, reusing the vectors of the
    file ``vectors`` when given); the open vault and dia_id → memory path.

    A turn that repeats a turn already imported maps to the memory it repeats. Raises
    ``RuntimeError`` when import refuses a line.
    """
    vault, _ = Vault.init(root)
    vault.close()
    settings = root / "vaultmem.toml"
    text = settings.read_text(encoding="utf-8")
    provider = "local" if embeddings else "none"
    text = re.sub(r'(?m)^provider = "[a-z]+"', f'provider = "{provider}"', text, count=1)
    settings.write_text(text, encoding="utf-8")
    if embeddings and vectors is not None and vectors.is_file():
        (root / ".vaultmem").mkdir(exist_ok=True)
        shutil.copyfile(vectors, root / ".vaultmem" / "vectors.db")
    vault = Vault.open(root)
    turns = conversation.turns
    report = vault.import_jsonl(import_lines(turns), now=conversation.now)
    repeats = dict(report.duplicates)
    if report.errors or len(report.imported) + len(repeats) != len(turns):
        raise RuntimeError(f"{conversation.sample_id}: import failed: {report.errors[:3]}")
    written = iter(report.imported)
    path_of = {t.dia_id: repeats.get(n) or next(written) for n, t in enumerate(turns, 1)}
    vault.sync()
    return vault, path_of
