"""A finished run as the user sees it: the answer, and the final evidence with each row's signals, ranks
and the retrievers (or the mode) that brought it in."""

from __future__ import annotations

from query.pipeline.staged import FINAL, StagedRun
from query.read.base import Reading
from query.rerank.stage_one import FEATURES
from schemas.answers import StageTiming
from schemas.query import QueryResult, ScoredEvidence


def staged_result(staged: StagedRun, read: Reading, index_version: str) -> QueryResult:
    choice = read.choice
    timings = dict(staged.timings)
    for stage, ms in read.timings.items():
        timings[stage] = timings.get(stage, 0.0) + ms
    return QueryResult(
        question=staged.question,
        answer=choice.answer,
        answer_entity_id=choice.entity_id,
        unknown=choice.unknown,
        confidence=choice.confidence,
        evidence=final_evidence(staged),
        supporting_evidence_ids=choice.supporting,
        candidates=choice.candidates,
        intent=staged.intent,
        links=staged.links,
        timings=[StageTiming(stage=k, ms=round(v, 3)) for k, v in timings.items()],
        reader=read.reader,
        index_version=index_version,
        reading=read.reading,
        unit=read.reading.unit if read.reading is not None else None,
    )


def final_evidence(staged: StagedRun) -> list[ScoredEvidence]:
    """The final rows, best first, each with its non-zero features, its rank in every ranking and list."""
    evidence = []
    # the features' rows follow pool.ids; pool.ranks may also name rows the store could not return
    # (dropped from ids) — a mode's own rows (a hop, a graph walk) may be among those
    position = {e: i for i, e in enumerate(staged.pool.ids)}
    for evidence_id in staged.rankings[FINAL]:
        row = staged.rows[evidence_id]
        signals = {}
        if evidence_id in position:
            i = position[evidence_id]
            signals = {k: round(float(v), 4) for k, v in zip(FEATURES, staged.features[i], strict=True)}
            signals = {k: v for k, v in signals.items() if v}
        ranks = {
            name: ranking.index(evidence_id) + 1
            for name, ranking in staged.rankings.items()
            if name != FINAL and evidence_id in ranking
        }
        pooled = staged.pool.ranks.get(evidence_id, {})
        ranks.update(pooled)
        evidence.append(
            row.scored(
                staged.final_scores.get(evidence_id, 0.0),
                signals=signals,
                ranks=ranks,
                retrieved_by=sorted(pooled) or [staged.added_by.get(evidence_id, "mode")],
            )
        )
    return evidence
