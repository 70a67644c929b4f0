"""Modes that execute a ``QuestionPlan`` over the typed statements and the graph (issue 35)."""

from query.modes.plans.graph_reads import PlanReads
from query.modes.plans.mode import PlanMode, PlanModeSettings

__all__ = ["PlanMode", "PlanModeSettings", "PlanReads"]
