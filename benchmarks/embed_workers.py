"""Embedding throughput of the index build's settings, held against the raw sentence-transformers call.

    .venv/bin/python benchmarks/embed_workers.py --evidence DIR [--n 2500]
        [--out benchmarks/results/embed_workers.md]

``DIR`` is an index version's ``evidence/`` folder (e.g. the sample index the demo builds). A fixed random
sample of its texts is embedded by: the raw ``SentenceTransformer.encode`` with torch's two threads and
batches of 64 (the build's previous setting), and ``index.embedder.Embedder`` with the build's settings
(``workers`` copies with one torch thread each, batches of ``batch_size``) and two variants. Every
variant's vectors are compared with the raw call's: the minimum cosine, and how many of each of the
first 200 texts' 10 nearest neighbours among the sample stay the same (what retrieval sees). The build's
default runs in bfloat16 on a CPU that multiplies it natively; a float32 row of the same settings is
beside it, and a dynamic int8 copy of the model. With ``onnxruntime`` and ``onnx`` importable (not
project dependencies), the same model exported to ONNX is timed too.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from benchmarks_common import machine  # noqa: E402

from index.embedder import BULK_MIN_TEXTS, Embedder, EmbedderSettings  # noqa: E402


def _texts(evidence: Path, n: int, seed: int) -> list[str]:
    texts: list[str] = []
    for path in sorted(evidence.glob("*.parquet")):
        texts += pq.read_table(path, columns=["text"]).column("text").to_pylist()
    rng = np.random.default_rng(seed)
    return [texts[i] for i in rng.choice(len(texts), min(n, len(texts)), replace=False)]


def _int8(model):
    """A copy of ``model`` with its linear layers quantized to int8 at run time (the rejected option)."""
    import copy

    import torch

    quantized = copy.deepcopy(model)
    quantized[0].model = torch.ao.quantization.quantize_dynamic(
        quantized[0].model, {torch.nn.Linear}, dtype=torch.qint8
    )
    quantized.encode(["warm up"])
    return quantized


def _onnx(model, texts: list[str], out: Path) -> tuple[float, np.ndarray] | None:
    try:
        import onnxruntime as ort
        import torch
    except ImportError:
        return None
    bert, tokenizer = model[0].auto_model.eval(), model.tokenizer

    class Wrapped(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    example = tokenizer(["warm up"], return_tensors="pt")
    torch.onnx.export(
        Wrapped(bert), tuple(example[k] for k in names), str(out), input_names=names,
        output_names=["hidden"], dynamic_axes={k: {0: "b", 1: "s"} for k in [*names, "hidden"]},
        opset_version=17, dynamo=False,
    )  # fmt: skip
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(str(out), options, providers=["CPUExecutionProvider"])
    order = np.argsort([-len(t) for t in texts], kind="stable")
    vectors = np.empty((len(texts), 384), np.float32)
    started = time.perf_counter()
    for start in range(0, len(texts), 64):
        idx = order[start : start + 64]
        batch = tokenizer(
            [texts[i] for i in idx], padding=True, truncation=True, max_length=256, return_tensors="np"
        )
        hidden = session.run(None, {k: batch[k].astype(np.int64) for k in names})[0]
        mask = batch["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
        vectors[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return time.perf_counter() - started, vectors


def _neighbours_kept(reference: np.ndarray, vectors: np.ndarray, queries: int = 200, k: int = 10) -> float:
    """Share of each of the first ``queries`` texts' ``k`` nearest others that ``vectors`` keeps."""
    kept = 0
    for i in range(min(queries, len(reference))):
        want = set(np.argsort(-(reference @ reference[i]))[1 : k + 1])
        got = set(np.argsort(-(vectors @ vectors[i]))[1 : k + 1])
        kept += len(want & got)
    return kept / (k * min(queries, len(reference)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evidence", type=Path, required=True)
    parser.add_argument("--n", type=int, default=2500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/embed_workers.md")
    args = parser.parse_args(argv)
    texts = _texts(args.evidence, args.n, args.seed)
    base = Embedder()
    model = base.model
    model.encode(texts[:16], batch_size=16)  # warm up
    started = time.perf_counter()
    raw = model.encode(
        texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    raw_s = time.perf_counter() - started
    rows = [("raw `SentenceTransformer.encode`, torch 2 threads, batch 64", raw_s, raw)]
    default = EmbedderSettings(workers=2, batch_size=8)
    for settings in (
        default,
        default.model_copy(update={"bulk_precision": "float32"}),
        EmbedderSettings(workers=2, batch_size=32),
        EmbedderSettings(workers=1, batch_size=64),
    ):
        embedder = Embedder(settings)
        embedder.encode(texts[:BULK_MIN_TEXTS], on_progress=lambda _n: None)  # load and warm its copies
        started = time.perf_counter()
        vectors = embedder.encode(texts, on_progress=lambda _n: None)
        seconds = time.perf_counter() - started
        label = (
            f"`Embedder` workers={settings.workers}, batch {settings.batch_size}, "
            f"{embedder.bulk_precision}" + (" (the build's default)" if settings == default else "")
        )
        rows.append((label, seconds, vectors))
    int8, started = _int8(model), time.perf_counter()
    vectors = int8.encode(
        texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    rows.append(("dynamic int8 (torch), 2 threads, batch 64", time.perf_counter() - started, vectors))
    onnx = _onnx(model, texts, Path("/tmp/hqa-minilm.onnx"))
    if onnx is not None:
        rows.append(("ONNX Runtime, 2 threads, batch 64", onnx[0], onnx[1]))
    command = " ".join(
        ["python benchmarks/embed_workers.py", *(shlex.quote(a) for a in (argv or sys.argv[1:]))]
    )
    lines = [
        "# Embedding throughput: the build's settings against the raw call",
        "",
        f"Command: `{command}`",
        "",
        f"{len(texts)} random evidence texts (seed {args.seed}) from `{args.evidence}`; "
        f"model {base.model_name}; machine: " + ", ".join(f"{k} {v}" for k, v in machine().items()),
        "",
        "| variant | seconds | texts/s | speed vs raw | min cosine to raw | top-10 neighbours kept |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, seconds, vectors in rows:
        cosine = float((vectors * raw).sum(1).min())
        lines.append(
            f"| {label} | {seconds:.1f} | {len(texts) / seconds:.1f} | {raw_s / seconds:.2f} | "
            f"{cosine:.7f} | {100 * _neighbours_kept(raw, vectors):.1f} % |"
        )
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
