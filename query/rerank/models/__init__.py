"""The learned weights the engine uses by default, fitted by ``hqa eval`` on OTT-QA dev and copied here.

``stage1_ranker.json`` is the pairwise stage-one ranker (``ranker.json`` of the evaluation run in
``benchmarks/results/ottqa``); its ``trained_on`` says what it was fitted on. The figures the report
gives for it are cross-fitted on folds, so out of sample. Features OTT-QA cannot teach (KG statements,
infoboxes) keep their hand-set weights.
"""

from pathlib import Path

BUNDLED_RANKER = Path(__file__).parent / "stage1_ranker.json"
