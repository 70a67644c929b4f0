"""The LLM reader's runtime cost against raw llama.cpp on the same prompts.

    .venv/bin/python benchmarks/llm_throughput.py --index DIR --questions PATH [--benchmark ottqa]
        [--limit 20] [--model qwen2.5-coder-1.5b-instruct] [--engine-config FILE] [--out benchmarks/results]

The engine retrieves each question once and the reader's prompt is built from its top evidence. The
same prompts are then answered twice, each by a freshly loaded model, in the same run:

- raw: ``llama_cpp.Llama.create_chat_completion`` with the reader's JSON-schema grammar, greedy — the
  runtime alone;
- hqa: ``Llm.chat_reply`` with the reader's schema — the interface every use of the model goes through
  (validation, the call ledger, token log-probabilities).

Both keep llama.cpp's prompt cache (the fixed system prompt is evaluated once). Reported: tokens/s of
prompt and completion, seconds per prompt, and hqa's throughput as a share of raw's (the bar: ≥ 0.9).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks_common import machine  # noqa: E402

from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.loaders import load_benchmark  # noqa: E402
from query.llm.bundled import DEFAULT_MODEL, model_path  # noqa: E402
from query.llm.chat import Llm  # noqa: E402
from query.llm.settings import LlmSettings  # noqa: E402
from query.read.llm_reader import ReaderReply, messages  # noqa: E402
from schemas.settings import HqaSettings  # noqa: E402


def run_raw(path: Path, settings: LlmSettings, prompts: list[list[dict]], max_tokens: int) -> dict:
    import llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar

    llama = llama_cpp.Llama(
        model_path=str(path),
        n_ctx=settings.n_ctx,
        n_batch=settings.n_batch,
        n_threads=settings.n_threads,
        n_threads_batch=settings.n_threads,
        seed=0,
        verbose=False,
    )
    grammar = LlamaGrammar.from_json_schema(json.dumps(ReaderReply.model_json_schema()), verbose=False)
    prompt_tokens = completion_tokens = 0
    started = time.perf_counter()
    texts = []
    for prompt in prompts:
        out = llama.create_chat_completion(
            messages=prompt, max_tokens=max_tokens, temperature=0.0, top_k=1, seed=0, grammar=grammar
        )
        prompt_tokens += out["usage"]["prompt_tokens"]
        completion_tokens += out["usage"]["completion_tokens"]
        texts.append(out["choices"][0]["message"]["content"])
    seconds = time.perf_counter() - started
    llama.close()
    return _figures("raw llama.cpp", prompt_tokens, completion_tokens, seconds, len(prompts), texts)


def run_hqa(settings: LlmSettings, prompts: list[list[dict]], max_tokens: int) -> dict:
    llm = Llm.open(settings)
    started = time.perf_counter()
    replies = [llm.chat_reply(p, ReaderReply, max_tokens=max_tokens, purpose="bench") for p in prompts]
    seconds = time.perf_counter() - started
    llm.close()
    prompt_tokens = sum(c.prompt_tokens for r in replies for c in r.calls)
    completion_tokens = sum(c.completion_tokens for r in replies for c in r.calls)
    texts = [r.completion.text for r in replies]
    return _figures("hqa Llm.chat", prompt_tokens, completion_tokens, seconds, len(prompts), texts)


def _figures(name: str, prompt: int, completion: int, seconds: float, n: int, texts: list[str]) -> dict:
    return {
        "runner": name,
        "prompts": n,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "seconds": round(seconds, 2),
        "seconds_per_prompt": round(seconds / n, 2),
        "tokens_per_s": round((prompt + completion) / seconds, 1),
        "texts": texts,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--index", type=Path, required=True)
    p.add_argument("--questions", type=Path, required=True)
    p.add_argument("--benchmark", default="ottqa")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--engine-config", type=Path)
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = p.parse_args()

    hqa = HqaSettings()
    config = EngineConfig.load(args.engine_config, reader="candidates")
    questions = load_benchmark(args.benchmark, args.questions, args.limit)
    with Engine.open(args.index, config, state_dir=hqa.state_dir) as engine:
        prompts = []
        for q in questions:
            staged = engine.pipeline.run(engine.understand(q.question))
            rows = [staged.rows[e] for e in staged.rankings["final"]]
            prompts.append(messages(q.question, rows[: config.llm_reader.evidence], config.llm_reader))
    settings = config.llm.model_copy(update={"backend": args.model}).in_state_dir(hqa.state_dir)
    settings = type(settings).model_validate(settings.model_dump())
    path = model_path(args.model, settings.cache_dir)
    max_tokens = config.llm_reader.max_tokens
    raw = run_raw(path, settings, prompts, max_tokens)
    ours = run_hqa(settings, prompts, max_tokens)
    same = sum(a == b for a, b in zip(raw.pop("texts"), ours.pop("texts"), strict=True))
    ratio = ours["tokens_per_s"] / raw["tokens_per_s"]
    command = " ".join(["python", "benchmarks/llm_throughput.py", *(shlex.quote(a) for a in sys.argv[1:])])
    report = {
        "command": command,
        "machine": machine(),
        "model": args.model,
        "reader_settings": config.llm_reader.model_dump(),
        "runs": [raw, ours],
        "hqa_share_of_raw": round(ratio, 3),
        "identical_replies": f"{same}/{len(prompts)}",
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "llm_throughput.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [
        f"# LLM reader throughput against raw llama.cpp ({args.model})",
        "",
        "```",
        command,
        "```",
        "",
        f"{len(prompts)} reader prompts ({args.benchmark}, the engine's top "
        f"{config.llm_reader.evidence} evidence rows, {config.llm_reader.window_chars}-character windows); "
        f"{report['machine']}.",
        "",
        "| runner | prompt tokens | completion tokens | seconds | s/prompt | tokens/s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for run in (raw, ours):
        lines.append(
            f"| {run['runner']} | {run['prompt_tokens']} | {run['completion_tokens']} | {run['seconds']} | "
            f"{run['seconds_per_prompt']} | {run['tokens_per_s']} |"
        )
    lines += [
        "",
        f"hqa / raw throughput: **{ratio:.2f}** (bar ≥ 0.9); identical replies: {same}/{len(prompts)}.",
    ]
    (args.out / "llm_throughput.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
