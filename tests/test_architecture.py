"""The layers import only downward (docs/architecture.md); inside services/ and core/, each
capability package imports only what its docstring's "May import:" names; no module imports
itself back through others (no import circles); the library never imports click."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

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


# ----------------------------------------------------------------- capability packages, circles
CAPABILITY_LAYERS = ("core", "services")
"""Layers whose modules live in capability packages (docs/architecture.md)."""


def _packages() -> dict[str, Path]:
    """Every capability package (``vaultmem.services.index`` …) and its ``__init__.py``."""
    found = {}
    for layer in CAPABILITY_LAYERS:
        for init in sorted((PACKAGE / layer).glob("*/__init__.py")):
            found[f"vaultmem.{layer}.{init.parent.name}"] = init
    return found


def _may_import(init: Path) -> tuple[str, ...]:
    """The dotted names after "May import:" in a package's docstring (up to the next blank
    line); parenthesised reasons are left out."""
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    match = re.search(r"^May import:(.*?)(?:\n\s*\n|\Z)", doc, re.S | re.M)
    if match is None:
        return ()
    named = re.sub(r"\([^)]*\)", "", match[1])
    return tuple(re.findall(r"vaultmem(?:\.\w+)+", named))


def _resolved(imported: str, known: set[str]) -> str | None:
    """The vaultmem module ``imported`` names (``pkg.mod.Name`` → ``pkg.mod``), if any."""
    while imported and imported not in known:
        imported = imported.rpartition(".")[0]
    return imported or None


def _module_graph() -> dict[str, set[str]]:
    """Module → the vaultmem modules it imports, at any depth (a package's ``__init__`` is the
    package's own name)."""
    modules = {name.removesuffix(".__init__"): path for name, path in _modules()}
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {_resolved(m, known) for m in _imports(path)}
        graph[name] = {t for t in targets if t and t not in (name, "vaultmem")}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_services_and_core_live_in_capability_packages() -> None:
    packages = _packages()
    assert {"vaultmem.services.index", "vaultmem.services.memories", "vaultmem.services.lifecycle",
            "vaultmem.services.recall", "vaultmem.services.semantic", "vaultmem.services.sync",
            "vaultmem.core.notes", "vaultmem.core.links", "vaultmem.core.scoring",
            "vaultmem.core.lifecycle", "vaultmem.core.recall"} <= set(packages)
    for layer in CAPABILITY_LAYERS:  # a few modules beside the packages, not a flat folder
        loose = sorted(p.stem for p in (PACKAGE / layer).glob("*.py") if p.stem != "__init__")
        assert len(loose) <= 5, f"{layer}/ holds {len(loose)} modules outside packages: {loose}"


def test_every_capability_package_says_what_it_may_import() -> None:
    for name, init in _packages().items():
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(doc.split()) >= 20, f"{name} has no docstring saying what it owns"
        assert _may_import(init), f"{name}'s docstring has no 'May import:' line"


def test_packages_import_only_what_their_docstring_allows() -> None:
    packages = _packages()
    graph = _module_graph()
    violations = []
    for package, init in packages.items():
        allowed = (package, *_may_import(init), *ALWAYS_ALLOWED)
        for module, targets in graph.items():
            if module != package and not module.startswith(package + "."):
                continue
            for target in sorted(targets):
                within = [a for a in allowed if target == a or target.startswith(a + ".")]
                if not within:
                    violations.append(f"{module} imports {target}")
    assert violations == []


def test_no_import_circles() -> None:
    # every import counts, lazy and TYPE_CHECKING ones too: a type both sides need goes down
    # to a module both may import
    assert _circles(_module_graph()) == []


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set(), "c": {"b"}}, []),
        ({"x": {"y"}, "y": {"x"}, "p": {"q"}, "q": {"p"}}, [["p", "q"], ["x", "y"]]),
    ],
)
def test_the_circle_check_finds_circles(
    graph: dict[str, set[str]], expected: list[list[str]]
) -> None:
    assert sorted(_circles(graph)) == expected


def test_the_may_import_line_is_read_without_its_reasons(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text(
        '"""Owns things.\n\nMay import: vaultmem.core, vaultmem.services.index (its walk,\n'
        'not vaultmem.services.recall), vaultmem.store.\n\nMore text vaultmem.cli.\n"""\n'
    )
    assert _may_import(init) == ("vaultmem.core", "vaultmem.services.index", "vaultmem.store")
