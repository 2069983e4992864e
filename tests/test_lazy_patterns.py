"""Expressions compiled on first use (core/lazy_patterns): they answer as compiled ones do, take
their own name's place once used, and every declaration in the parser names its own global."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import pytest

from vaultmem.core.lazy_patterns import LazyPattern, lazy_pattern


def _module() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "fake"}
    namespace["WORD"] = lazy_pattern(namespace, "WORD", r"[a-z]+", re.IGNORECASE)
    return namespace


def test_first_use_compiles_and_takes_the_stand_ins_place() -> None:
    namespace = _module()
    stand_in = namespace["WORD"]
    assert isinstance(stand_in, LazyPattern)
    assert [m.group() for m in stand_in.finditer("Tea, 80 C")] == ["Tea", "C"]
    assert namespace["WORD"] is re.compile(r"[a-z]+", re.IGNORECASE)
    assert stand_in.fullmatch("oolong") is not None  # a copy kept elsewhere still answers
    assert namespace["WORD"] is re.compile(r"[a-z]+", re.IGNORECASE)


def test_a_misspelt_declaration_fails_at_first_use() -> None:
    namespace: dict[str, Any] = {"__name__": "fake"}
    namespace["WORDS"] = lazy_pattern(namespace, "WORD", r"[a-z]+")
    with pytest.raises(RuntimeError, match="'WORD' is bound to another name"):
        namespace["WORDS"].match("tea")


def test_an_invalid_expression_fails_at_first_use() -> None:
    namespace: dict[str, Any] = {"__name__": "fake"}
    namespace["BAD"] = lazy_pattern(namespace, "BAD", r"(unclosed")
    with pytest.raises(re.error):
        namespace["BAD"].search("x")


PARSER = (
    "links.links", "links.indented_code", "links.code_spans", "notes.frontmatter_fast_path",
    "notes.note_reading",
)
CHECK = """
import json, re
from importlib import import_module
from vaultmem.core.lazy_patterns import LazyPattern
found = {}
for name in %r:
    module = import_module("vaultmem.core." + name)
    for key, value in vars(module).items():
        if isinstance(value, LazyPattern):
            re.compile(value.source)  # valid (compiling does not bind it)
            found[name + "." + key] = value.name == key and value.namespace is vars(module)
print(json.dumps(found))
"""


def test_every_declaration_in_the_parser_names_its_own_global() -> None:
    """Checked in a fresh interpreter: in this one, other tests may have compiled them all."""
    proc = subprocess.run(
        [sys.executable, "-c", CHECK % (PARSER,)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert len(found) >= 20 and "links.indented_code._LIST_ITEM_RE" in found
    assert [name for name, ok in found.items() if not ok] == []
