"""The retrieve → re-rank → read pipeline below the modes: ``RetrieveReadPipeline`` and its stages, the
``StagedRun`` every stage passes on, and the ``Pipeline`` protocol every mode uses."""

from query.pipeline.reranking import Reranking
from query.pipeline.retrieval import Retrieval
from query.pipeline.service import Pipeline, RetrieveReadPipeline
from query.pipeline.staged import StagedRun

__all__ = ["Pipeline", "Reranking", "Retrieval", "RetrieveReadPipeline", "StagedRun"]
