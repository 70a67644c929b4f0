"""What a served version leaves behind when the next one is published: nothing. After several switches
in the real app on the sample index, only the current version's engine, index reader and Kùzu store are
alive (the older ones closed and collected, not merely closed), only its folder is leased, and the
instruct model is the one the process loaded first, lent to each version rather than loaded again."""

from __future__ import annotations

import gc
from pathlib import Path

from fastapi.testclient import TestClient

from index.kuzu_store import GraphStore
from index.reader import IndexReader
from index.versions import VersionStore
from query import EngineConfig
from query.engine import Engine
from query.live import LiveEngine
from query.llm.bundled import FAST_MODEL
from tests.query.serve.conftest import publish_copy

KG_QUESTION = "What is the area of Belgium?"  # answered from a typed statement: no model call
READ_BY_LLM = "Who was the interior decorator of the film Sunrise in 1927/28?"


def alive_under(root: Path) -> dict[str, list[str]]:
    """The versions of ``root`` that each kind of per-version object is alive for, after a collection."""
    gc.collect()
    found: dict[str, list[str]] = {"engines": [], "readers": [], "graphs": []}
    for obj in gc.get_objects():
        if isinstance(obj, Engine) and obj.reader.path.parent == root:
            found["engines"].append(obj.index_version)
        elif isinstance(obj, IndexReader) and obj.path.parent == root:
            found["readers"].append(obj.version)
        elif isinstance(obj, GraphStore) and root in obj.path.parents:
            found["graphs"].append(obj.path.relative_to(root).parts[0])
    return {kind: sorted(versions) for kind, versions in found.items()}


def current_engine(root: Path) -> Engine:
    engines = [o for o in gc.get_objects() if isinstance(o, Engine) and o.reader.path.parent == root]
    assert len(engines) == 1, f"expected one engine on {root}, found {len(engines)}"
    return engines[0]


def test_retired_versions_are_closed_and_collected(make_app, sample_index, index_root: Path) -> None:
    _, built = sample_index
    root = index_root.resolve()
    with TestClient(make_app(), raise_server_exceptions=False) as client:
        assert alive_under(root) == {"engines": ["v1"], "readers": ["v1"], "graphs": ["v1"]}
        for version in ("v2", "v3", "v4"):
            publish_copy(index_root, built.version_dir, version)
            answers = [client.post("/v1/ask", json={"question": KG_QUESTION}) for _ in range(3)]
            assert [a.status_code for a in answers] == [200] * 3
            assert answers[-1].json()["index_version"] == version
            assert alive_under(root) == {"engines": [version], "readers": [version], "graphs": [version]}
            assert VersionStore(root).held() == [root / version]
        assert client.get("/v1/versions").json()["answered_from"] == ["v1", "v2", "v3", "v4"]
    assert VersionStore(root).held() == []  # the server's stop closed the last one


def test_the_instruct_model_is_loaded_once_and_lent_to_each_version(
    sample_index, index_root: Path, model_cache: Path
) -> None:
    settings, built = sample_index
    root = index_root.resolve()
    config = EngineConfig.load(None, reader="llm", llm={"backend": FAST_MODEL, "cache_dir": str(model_cache)})
    with LiveEngine(root, config, state_dir=settings.state_dir) as live:
        model = current_engine(root).llm
        assert model is not None
        for version in ("v2", "v3"):
            publish_copy(index_root, built.version_dir, version)
            assert live.ask(KG_QUESTION).index_version == version
            assert alive_under(root)["engines"] == [version]
            assert current_engine(root).llm is model
        read = live.ask(READ_BY_LLM)  # the older versions' close left the shared model working
        assert read.index_version == "v3" and read.reading is not None
        assert read.reading.model == FAST_MODEL
    assert VersionStore(root).held() == []
