#!/bin/bash
# The LLM reader's report run: a fixed 500-question sample of OTT-QA dev (seed 7), read by the candidate
# reader and both bundled LLMs. The tuning fold's per-question results (benchmarks/results/llm_reader/
# tune_a_8x360, same settings) are reused, so the run reads the 400 report-fold questions; it resumes
# from OUT/readers/*.jsonl when interrupted.
#
#   benchmarks/llm_reader_report.sh OTTQA_DIR [OUT]      e.g. benchmarks/llm_reader_report.sh ../shared/data/bench/ottqa
#
# READERS=candidates,qwen2.5-coder-1.5b-instruct runs a subset first (each reader's file resumes later).
set -euo pipefail
cd "$(dirname "$0")/.."
OTTQA=${1:?usage: $0 OTTQA_DIR [OUT]}
OUT=${2:-.state/ottqa/eval/readers-500}
READERS=${READERS:-candidates,qwen2.5-coder-1.5b-instruct,qwen2.5-coder-0.5b-instruct}
export HF_HUB_OFFLINE=1 HQA_STATE_DIR=${HQA_STATE_DIR:-.state/ottqa}
mkdir -p "$OUT/readers"
for f in benchmarks/results/llm_reader/tune_a_8x360/readers/*.jsonl; do
  [ -e "$OUT/readers/$(basename "$f")" ] || cp "$f" "$OUT/readers/"
done
.venv/bin/hqa eval --benchmark ottqa --questions "$OTTQA" --sample 500 --seed 7 --no-ablations \
  --reader candidates --readers "$READERS" \
  --engine-config benchmarks/results/llm_reader/report_engine.toml \
  --traces "$OUT-traces.pkl" --out "$OUT"
