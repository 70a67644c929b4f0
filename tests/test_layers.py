"""The house rules of imports: data flows one way, and query/'s rooms follow the engine's flow.

Read from the source with ``ast`` (every import, also those inside functions), so a lazy import that
breaks the order is caught as well as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PACKAGES = ("schemas", "ingest", "index", "query")
"""Lower first: a package may import only the packages before it (and itself)."""

ROOMS = (
    ("lexicon", "text", "linear", "llm", "registry", "timing", "events"),
    ("understand",),
    ("retrieve",),
    ("rerank",),
    ("read",),
    ("tabulate", "sql"),
    ("pipeline",),
    ("modes",),
    ("config", "engine", "live"),
    ("batch", "evaluation", "serve"),
    ("cli",),
)
"""query/'s rooms in the order of the engine's flow; a room may import its own level and those before."""


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
            out += [f"{node.module}.{alias.name}" for alias in node.names]
    return out


def _level(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "query" or len(parts) < 2:
        return None
    for level, rooms in enumerate(ROOMS):
        if parts[1] in rooms:
            return level
    return None


def _sources(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_no_package_imports_a_higher_one(package):
    allowed = set(PACKAGES[: PACKAGES.index(package) + 1])
    bad = [
        f"{path.relative_to(REPO)} imports {name}"
        for path in _sources(package)
        for name in _imports(path)
        if name.split(".")[0] in PACKAGES and name.split(".")[0] not in allowed
    ]
    assert not bad, "\n".join(bad)


def test_query_rooms_import_only_their_level_and_below():
    bad = []
    for path in _sources("query"):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        own = _level(module)
        if own is None:
            continue
        for name in _imports(path):
            level = _level(name)
            if level is not None and level > own:
                bad.append(f"{path.relative_to(REPO)} (level {own}) imports {name} (level {level})")
    assert not bad, "\n".join(bad)


def test_every_query_module_sits_in_a_room():
    rooms = {room for level in ROOMS for room in level}
    top = {
        p.stem if p.is_file() else p.name for p in (REPO / "query").iterdir() if not p.name.startswith("_")
    }
    top = {name for name in top if name not in ("py.typed",)}
    assert top <= rooms, f"not in a room: {sorted(top - rooms)}"


def test_the_checker_sees_a_violation():
    """The rule is not vacuous: a module of an early room importing a later one is a higher level."""
    assert _level("query.understand.intent") < _level("query.engine") < _level("query.cli.main")
    assert (
        _level("query.modes.kg_lookup") > _level("query.pipeline.service") > _level("query.read.candidates")
    )
