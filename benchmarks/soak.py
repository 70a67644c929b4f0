"""Soak: questions answered on several threads while the rebuild DAG publishes versions back to back.

    .venv/bin/python benchmarks/soak.py [--rebuilds 5] [--threads 2] [--keep 1] [--work DIR]
                                        [--out benchmarks/results/soak]

On the bundled samples, in a state folder of its own: one rebuild through Airflow (``airflow dags test
hqa_index_rebuild``) makes the first version; then ``--threads`` threads answer the sample questions
round and round through one ``LiveEngine`` (candidate reader) while the DAG rebuilds everything
(``force``) ``--rebuilds`` times in a row, each run pruning to ``--keep`` versions (1: the harshest, every
publish tries to delete the version the threads were just answering from).

Checked and reported: questions answered and errors (any exception out of ``ask``: 0 is the bar), that
every answer names one published version, that the same question got the same answer from every version
(the data does not change between rebuilds, so neither should an answer), which versions each publish had
to keep because a reader held them, and that after the threads stop the next prune leaves ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks_common import airflow_env, machine, run_command  # noqa: E402

BIN = Path(sys.executable).parent
QUESTIONS = REPO / "data" / "samples" / "questions.jsonl"


class Answering:
    """Threads asking the sample questions in turn until stopped; every outcome kept."""

    def __init__(self, engine, questions: list[str], threads: int):
        self.engine, self.questions = engine, questions
        self.stop = threading.Event()
        self.answers: list[tuple[str, str, str]] = []  # (question, version, answer)
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(threads)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def join(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join()

    def _loop(self, offset: int) -> None:
        i = offset * len(self.questions) // max(1, len(self._threads))
        while not self.stop.is_set():
            question = self.questions[i % len(self.questions)]
            i += 1
            try:
                result = self.engine.ask(question)
            except Exception:
                with self._lock:
                    self.errors.append(f"{question!r}: {traceback.format_exc(limit=4)}")
                continue
            answer = "unknown" if result.unknown else result.answer
            with self._lock:
                self.answers.append((question, result.index_version, answer))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rebuilds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep", type=int, default=1, help="versions each publish keeps")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "soak")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="hqa-soak-"))
    env = airflow_env(work, args.keep)
    os.environ.update({k: env[k] for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HQA_EMBEDDING_CACHE")})

    from index.versions import VersionStore
    from query.config import EngineConfig
    from query.live import LiveEngine
    from schemas.settings import HqaSettings

    settings = HqaSettings(state_dir=work / "state")
    store = VersionStore(settings.index_dir)
    run_command([str(BIN / "airflow"), "db", "migrate"], env, REPO)
    dag = [str(BIN / "airflow"), "dags", "test", "hqa_index_rebuild"]
    first_seconds = run_command(dag, env, REPO)
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]

    engine = LiveEngine(
        settings.index_dir, EngineConfig.load(None, reader="candidates"), state_dir=settings.state_dir
    )
    answering = Answering(engine, questions, args.threads)
    answering.start()
    rebuilds = []
    started = time.perf_counter()
    for n in range(args.rebuilds):
        seconds = run_command([*dag, "-c", json.dumps({"force": True})], env, REPO)
        rebuilds.append(
            {
                "rebuild": n + 1,
                "seconds": round(seconds, 1),
                "current": store.current().name,
                "on_disk": [p.name for p in store.versions()],
                "held_by_readers": [p.name for p in store.held()],
                "answered_so_far": len(answering.answers),
            }
        )
        print(json.dumps(rebuilds[-1]), flush=True)
    time.sleep(5)  # the threads move to the last version before they stop
    answering.join()
    soak_seconds = time.perf_counter() - started
    switches = list(engine.switches)
    engine.close()
    held_after_close = [p.name for p in store.held()]
    pruned_after = [p.name for p in store.prune(args.keep)]
    left = [p.name for p in store.versions()]

    published = set(switches) | {v for r in rebuilds for v in r["on_disk"]} | set(pruned_after)
    by_question: dict[str, set[str]] = defaultdict(set)
    per_version = Counter()
    for question, version, answer in answering.answers:
        by_question[question].add(answer)
        per_version[version] += 1
    untagged = sum(1 for _, version, _ in answering.answers if version not in published)
    result = {
        "command": shlex.join(["benchmarks/soak.py", *sys.argv[1:]]),
        "machine": machine(),
        "threads": args.threads,
        "keep_versions": args.keep,
        "first_build_seconds": round(first_seconds, 1),
        "soak_seconds": round(soak_seconds, 1),
        "rebuilds": rebuilds,
        "questions_answered": len(answering.answers),
        "errors": len(answering.errors),
        "error_samples": answering.errors[:5],
        "versions_answered_from": switches,
        "answers_per_version": dict(per_version),
        "answers_without_a_published_version": untagged,
        "questions_whose_answer_changed_between_versions": sorted(
            q for q, a in by_question.items() if len(a) > 1
        ),
        "held_after_close": held_after_close,
        "pruned_after_close": pruned_after,
        "left_after_prune": left,
    }
    write(result, args.out)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    ok = not answering.errors and not untagged and len(left) == args.keep and len(rebuilds) == args.rebuilds
    sys.exit(0 if ok else 1)


def write(result: dict, out: Path) -> None:
    changed = result["questions_whose_answer_changed_between_versions"]
    lines = [
        "# Soak: answering on threads while the rebuild DAG publishes back to back",
        "",
        f"Command: `.venv/bin/python {result['command']}`  ",
        f"Machine: {result['machine']}",
        "",
        "| threads | rebuilds | keep_versions | questions answered | errors | answers without a published "
        "version | versions answered from | questions whose answer changed | soak s |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        f"| {result['threads']} | {len(result['rebuilds'])} | {result['keep_versions']} | "
        f"{result['questions_answered']:,} | {result['errors']} | "
        f"{result['answers_without_a_published_version']} | "
        f"{len(result['versions_answered_from'])} | {len(changed)} | {result['soak_seconds']} |",
        "",
        "Each rebuild (`airflow dags test hqa_index_rebuild -c '{\"force\": true}'`), as the threads saw it. "
        "With keep_versions 1, a version still on disk beside `current` after a publish is one a reader held "
        "when the DAG pruned (leases, `index.versions`); the next prune takes it. 'Held by a reader then' is "
        "read after the DAG run ends, when the threads have moved to the new version.",
        "",
        "| rebuild | seconds | current after | on disk after its prune | held by a reader then "
        "| answered so far |",
        "|--:|--:|---|---|---|--:|",
        *[
            f"| {r['rebuild']} | {r['seconds']} | {r['current']} | {', '.join(r['on_disk'])} | "
            f"{', '.join(r['held_by_readers']) or '-'} | {r['answered_so_far']:,} |"
            for r in result["rebuilds"]
        ],
        "",
        "After the threads stopped and the engine closed: held "
        f"{result['held_after_close'] or 'none'}; the next "
        f"prune removed {', '.join(result['pruned_after_close']) or 'nothing'} and left "
        f"{', '.join(result['left_after_prune'])}.",
        "",
        "Answers per version: "
        + ", ".join(f"{v} {n:,}" for v, n in sorted(result["answers_per_version"].items()))
        + ".",
    ]
    if changed:
        lines += ["", "Questions whose answer differed between versions built from the same data:", ""]
        lines += [f"- {q}" for q in changed]
    if result["error_samples"]:
        lines += ["", "First errors:", "", *[f"```\n{e}\n```" for e in result["error_samples"]]]
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "soak.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
