"""The router: order the configured modes by their own estimates, run them in turn, keep the first answer.

Ties keep the configured order (``EngineConfig.modes``), so a config decides which mode goes first when
estimates agree. A mode that estimates 0 is still tried, after the others, only when it is the last
resort (the last configured mode always runs, so the router never returns nothing). A mode that raises
is a declined mode with the error as its reason: one broken mode must not take the question down while
another can answer. Every mode's outcome, in order, is ``result.route``; each is also emitted as a
``route`` event (``query.events``) the moment it is decided, for a listener that shows them live.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from query.events import emit
from query.modes.base import Declined, Mode, Understanding
from schemas.query import QueryResult, RouteStep

log = logging.getLogger(__name__)


class NoModeAnswered(RuntimeError):
    """Every mode declined: the engine's configuration has no mode that always answers."""


class Router:
    def __init__(self, modes: Sequence[Mode]):
        if not modes:
            raise ValueError("the router needs at least one mode; EngineConfig.modes is empty")
        names = [m.name for m in modes]
        if len(set(names)) != len(names):
            raise ValueError(f"a mode is configured twice: {names}")
        self.modes = list(modes)

    def order(self, understanding: Understanding) -> list[tuple[Mode, float, str]]:
        """Modes by estimate, best first; ties (and zeros) keep the configured order."""
        estimates = []
        for position, mode in enumerate(self.modes):
            try:
                estimate, why = mode.estimate(understanding)
            except Exception as exc:  # a broken estimate only sends the mode to the back
                log.exception("mode %s failed to estimate", mode.name)
                estimate, why = 0.0, f"estimate failed: {type(exc).__name__}: {exc}"
            estimates.append((-estimate, position, mode, estimate, why))
        estimates.sort(key=lambda e: (e[0], e[1]))
        return [(mode, estimate, why) for _, _, mode, estimate, why in estimates]

    def run(self, understanding: Understanding) -> QueryResult:
        route: list[RouteStep] = []
        ordered = self.order(understanding)
        for i, (mode, estimate, why) in enumerate(ordered):
            last = i == len(ordered) - 1
            if estimate <= 0.0 and not last:
                _decided(route, RouteStep(mode=mode.name, outcome="declined", reason=why, estimate=0.0))
                continue
            started = time.perf_counter()
            try:
                outcome = mode.run(understanding)
            except Exception as exc:
                log.exception("mode %s failed on %r", mode.name, understanding.question)
                outcome = Declined(mode.name, f"failed: {type(exc).__name__}: {exc}")
            ms = round((time.perf_counter() - started) * 1000, 3)
            if isinstance(outcome, Declined):
                _decided(
                    route,
                    RouteStep(
                        mode=mode.name, outcome="declined", reason=outcome.reason, estimate=estimate, ms=ms
                    ),
                )
                continue
            if outcome.plan is not None and outcome.plan.outcome:  # what following the plan found
                why = f"{why}; {'refrained' if outcome.unknown else 'found'}: {outcome.plan.outcome}"
            _decided(
                route, RouteStep(mode=mode.name, outcome="answered", reason=why, estimate=estimate, ms=ms)
            )
            # a mode that estimated 0 said at once it cannot answer: that is a decline, not a skip
            for m, e, w in ordered[i + 1 :]:
                outcome_of_rest = "declined" if e <= 0.0 else "not tried"
                _decided(route, RouteStep(mode=m.name, outcome=outcome_of_rest, reason=w, estimate=e))
            return outcome.model_copy(update={"mode": mode.name, "route": route})
        reasons = "; ".join(f"{s.mode}: {s.reason}" for s in route)
        raise NoModeAnswered(f"no mode answered {understanding.question!r} ({reasons})")


def _decided(route: list[RouteStep], step: RouteStep) -> None:
    """Add a step to the route, and tell a listener at once (before the next mode runs)."""
    route.append(step)
    emit("route", step.model_dump(mode="json"))
