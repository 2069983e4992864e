"""The layers of spec section 10 import only downward; the library never imports click."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "vaultmem"
LAYER_OF = {"core": 1, "store": 2, "services": 3, "cli": 4}
ALWAYS_ALLOWED = {"vaultmem.errors", "vaultmem"}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "vaultmem":
        return LAYER_OF.get(parts[1])
    return None


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        out.append((".".join(rel.parts), path))
    return out


def test_every_layer_has_modules() -> None:
    layers = {_layer(name) for name, _ in _modules()}
    assert {1, 2, 3, 4} <= layers


def test_no_module_imports_a_higher_layer() -> None:
    violations = []
    for name, path in _modules():
        own = _layer(name)
        if own is None:
            continue
        for imported in _imports(path):
            other = _layer(imported)
            if other is not None and other > own:
                violations.append(f"{name} imports {imported}")
    assert violations == []


def test_core_does_no_io_and_library_never_imports_click() -> None:
    for name, path in _modules():
        imported = _imports(path)
        if _layer(name) != 4:
            assert not any(m == "click" or m.startswith("click.") for m in imported), name
        if _layer(name) == 1:
            forbidden = {"sqlite3", "watchdog", "filelock", "vaultmem.store", "vaultmem.services"}
            assert not forbidden & {m.split(".")[0] for m in imported} | (
                forbidden & set(imported)
            ), f"{name} imports {forbidden & set(imported)}"


def test_the_check_catches_a_violation(tmp_path: Path) -> None:
    # the walker must see an upward import when there is one
    bad = tmp_path / "bad.py"
    bad.write_text("from vaultmem.store.index_db import IndexDB\nimport vaultmem.cli\n")
    assert _imports(bad) == ["vaultmem.store.index_db", "vaultmem.cli"]
    assert _layer("vaultmem.store.index_db") == 2 > 1
