"""The layers of spec section 10 import only downward; the library never imports click."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "vaultmem"
LAYER_OF = {"core": 1, "store": 2, "services": 3, "cli": 4, "mcp": 4}
"""cli and mcp are both interfaces: they may import services, never each other's layer below."""
ALWAYS_ALLOWED = {"vaultmem.errors", "vaultmem"}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "vaultmem":
        return LAYER_OF.get(parts[1])
    return None


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports, at any depth (inside functions and TYPE_CHECKING too).

    ``from package import name`` also yields ``package.name`` (a submodule or an attribute).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        out.append((".".join(rel.parts), path))
    return out


def _services_that_import_vault() -> list[str]:
    """Modules under services/ (other than vault.py) that import ``Vault`` or its module."""
    offending = {"vaultmem.services.vault", "vaultmem.services.vault.Vault", "vaultmem.Vault"}
    found = []
    for name, path in _modules():
        if name.startswith("vaultmem.services.") and name != "vaultmem.services.vault":
            hits = offending & set(_imports(path))
            if hits:
                found.append(f"{name} imports {sorted(hits)[0]}")
    return found


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


def test_services_never_import_the_vault_class() -> None:
    # services take a VaultContext (root, settings, index…); only interfaces see Vault
    assert _services_that_import_vault() == []


def test_the_vault_check_catches_a_type_checking_import(tmp_path: Path) -> None:
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from vaultmem.services.vault import Vault\n"
    )
    assert "vaultmem.services.vault" in _imports(sneaky)
    also = tmp_path / "also.py"
    also.write_text("def f():\n    from vaultmem import Vault\n")
    assert "vaultmem.Vault" in _imports(also)


def test_the_mcp_server_never_imports_the_cli() -> None:
    # `vaultmem mcp` (cli) starts the server; the server itself stands on services alone
    for name, path in _modules():
        if name.startswith("vaultmem.mcp"):
            assert not any(m.startswith("vaultmem.cli") for m in _imports(path)), name


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
    assert _imports(bad) == ["vaultmem.store.index_db", "vaultmem.store.index_db.IndexDB",
                             "vaultmem.cli"]
    assert _layer("vaultmem.store.index_db") == 2 > 1
