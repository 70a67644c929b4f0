"""The graph-critic mode (after HybGRAG): a router over retrieval modules with a critic. ``mode`` runs the
rounds; ``plans`` is the router, ``modules`` the modules, ``critic`` the critic and ``llm_validator`` its
model-backed validator; ``settings`` the bounds."""

from query.modes.graph_critic.critic import Verdict
from query.modes.graph_critic.mode import GraphCriticMode, cited_first
from query.modes.graph_critic.plans import Plan
from query.modes.graph_critic.settings import FEEDBACK, NAME, GraphCriticSettings, Module

__all__ = [
    "FEEDBACK",
    "NAME",
    "GraphCriticMode",
    "GraphCriticSettings",
    "Module",
    "Plan",
    "Verdict",
    "cited_first",
]
