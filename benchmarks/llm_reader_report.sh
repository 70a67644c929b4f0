#!/bin/bash
# The LLM reader's report run: a fixed 500-question sample of OTT-QA dev (seed 7), read by the candidate
# reader and the bundled 1.5B model. The tuning fold's 100 per-question results (the rows the reader's
# settings were chosen on, docs/experiments/2026-11-24-llm-reader-tuning) are taken from the committed
# run's files, so the run reads the 400 report-fold questions; it resumes from OUT/readers/*.jsonl when
# interrupted. benchmarks/check_expected.py --entry llm-reader-report-fold --report OUT/report.json
# compares a re-run with benchmarks/expected.yaml.
#
#   benchmarks/llm_reader_report.sh OTTQA_DIR [OUT]      e.g. benchmarks/llm_reader_report.sh ../shared/data/bench/ottqa
#
# READERS=candidates runs a subset first (each reader's file resumes later); READERS=…,qwen2.5-coder-0.5b-instruct
# adds the fast model (never run on the report fold: it reads all 500).
set -euo pipefail
cd "$(dirname "$0")/.."
OTTQA=${1:?usage: $0 OTTQA_DIR [OUT]}
OUT=${2:-.state/ottqa/eval/readers-500}
READERS=${READERS:-candidates,qwen2.5-coder-1.5b-instruct}
COMMITTED=benchmarks/results/llm_reader/report_fold
export HF_HUB_OFFLINE=1 HQA_STATE_DIR=${HQA_STATE_DIR:-.state/ottqa}
mkdir -p "$OUT/readers"
for f in "$COMMITTED"/readers/*.jsonl; do
  # the tuning fold's rows only (sample.json names each question's fold); the report fold is read anew
  [ -e "$OUT/readers/$(basename "$f")" ] || .venv/bin/python - "$COMMITTED/sample.json" "$f" \
    > "$OUT/readers/$(basename "$f")" <<'PY'
import json, sys
folds = {q["id"]: q["fold"] for q in json.load(open(sys.argv[1]))["questions"]}
for line in open(sys.argv[2]):
    if folds[json.loads(line)["question_id"]] == "tune":
        sys.stdout.write(line)
PY
done
.venv/bin/hqa eval --benchmark ottqa --questions "$OTTQA" --sample 500 --seed 7 --no-ablations \
  --reader candidates --readers "$READERS" \
  --engine-config benchmarks/results/llm_reader/report_engine.toml \
  --traces "$OUT-traces.pkl" --out "$OUT"
