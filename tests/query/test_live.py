"""LiveEngine on real index versions: it moves to each newly published version between questions, every
answer names the version it came from, and the version it left is released for the next prune."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from index.versions import READER_STATE, VersionStore
from query import EngineConfig
from query.live import LiveEngine

FAST = EngineConfig(reader="candidates")
QUESTION = "What is the area of Belgium?"


def _publish_copy(store: VersionStore, built: Path, version: str) -> Path:
    """A new version holding the sample index's files, as a rebuild of the same data would."""
    building = store.start(version)
    # without the pins batch tests left on the shared sample version: a copy is not planned on
    shutil.copytree(built, building, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*READER_STATE))
    return store.publish(building, store.manifest(built).model_copy(update={"version": version}))


def test_answers_follow_current_and_the_old_version_is_released(sample_index, tmp_path: Path) -> None:
    settings, result = sample_index
    store = VersionStore(tmp_path)
    first = _publish_copy(store, result.version_dir, "v1")
    with LiveEngine(tmp_path, FAST, state_dir=settings.state_dir) as live:
        before = live.ask(QUESTION)
        assert before.index_version == "v1" and not before.unknown
        _publish_copy(store, result.version_dir, "v2")
        assert store.prune(keep=1) == []  # v1's engine still holds it
        answers = []
        threads = [threading.Thread(target=lambda: answers.append(live.ask(QUESTION))) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        after = live.ask(QUESTION)
        assert after.index_version == "v2" and live.switches == ["v1", "v2"]
        assert {a.index_version for a in answers} <= {"v1", "v2"} and len(answers) == 2
        assert {a.answer for a in [before, after, *answers]} == {before.answer}
        assert store.held() == [tmp_path / "v2"]  # the v1 engine was closed when its last question ended
        assert store.prune(keep=1) == [first]
    assert store.held() == []
