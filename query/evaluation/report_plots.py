"""The benchmark report's plots: answer presence by depth (``ap_at_k.png``) and latency per stage.

Drawn on Matplotlib's Agg canvas, without pyplot's global state, so plotting is safe in any thread and
needs no display. Subsets, source filters and reader variants stay out of the plots (see ``plotted``).
"""

from __future__ import annotations

from pathlib import Path

from query.evaluation.metrics import AP_KS, TOTAL_STAGE, ConfigSummary


def _figure(width: float, height: float):
    """A Matplotlib figure on the Agg canvas: no display, no pyplot global state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def plotted(summaries: list[ConfigSummary]) -> list[ConfigSummary]:
    """The configurations a plot shows: each stage over every question. Subsets (``first300/…``),
    source filters (``only-text/…``) and reader variants (``…+learned-reader``) stay in the tables; a
    plot with all of them cannot be read."""
    return [s for s in summaries if "/" not in s.config and "+" not in s.config]


def _style(i: int) -> dict[str, str]:
    """Colour and line style of the i-th series: ten colours, then the same colours dashed."""
    return {"color": f"C{i % 10}", "linestyle": "-" if i < 10 else "--"}


def plot_ap(summaries: list[ConfigSummary], path: Path) -> None:
    fig = _figure(9.0, 4.8)
    ax = fig.add_subplot()
    for i, s in enumerate(plotted(summaries)):
        curve = s.ap_curve or s.ap
        ks = sorted(curve)
        ax.plot(
            ks,
            [100 * curve[k] for k in ks],
            marker="o",
            markersize=3,
            linewidth=2.4 if i == 0 else 1.5,
            label=s.config + (" (baseline)" if i == 0 else ""),
            **_style(i),
        )
    ax.set_xscale("log")
    ax.set_xticks(AP_KS, [str(k) for k in AP_KS])
    ax.minorticks_off()
    ax.set_xlabel("k (evidence texts)")
    ax.set_ylabel("answer presence AP@k (%)")
    ax.set_ylim(0, 100)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title("Answer presence in the first k evidence texts")
    fig.savefig(path, format="png")


def plot_latency(summaries: list[ConfigSummary], path: Path) -> None:
    # i keeps each configuration's colour from the answer-presence plot
    timed = [(i, s) for i, s in enumerate(plotted(summaries)) if s.latency_ms]
    stages = _stage_order([s for _, s in timed])
    fig = _figure(max(6.0, 1.3 * len(stages) + 2.5), 4.5)
    ax = fig.add_subplot()
    width = 0.8 / len(timed)
    values = []
    for slot, (i, s) in enumerate(timed):
        xs = [j - 0.4 + width * (slot + 0.5) for j in range(len(stages))]
        p50 = [s.latency_ms.get(stage, {}).get("p50", 0.0) for stage in stages]
        p95 = [s.latency_ms.get(stage, {}).get("p95", 0.0) for stage in stages]
        values += p50 + p95
        color = _style(i)["color"]
        hatch = "//" if i >= 10 else None
        ax.bar(xs, p95, width, color=color, alpha=0.35, hatch=hatch)
        ax.bar(xs, p50, width, color=color, label=s.config, hatch=hatch)
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 100:
        ax.set_yscale("log")  # a total of seconds next to a stage of a millisecond: both stay readable
    ax.set_xticks(range(len(stages)), stages, rotation=30, ha="right")
    ax.set_ylabel("milliseconds")
    ax.set_title("Latency per stage: p50 (solid), p95 (light)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.savefig(path, format="png")


def _stage_order(summaries: list[ConfigSummary]) -> list[str]:
    """Stages in order of first appearance, the total last."""
    stages: dict[str, None] = {}
    for s in summaries:
        for stage in s.latency_ms:
            if stage != TOTAL_STAGE:
                stages.setdefault(stage)
    return [*stages, *([TOTAL_STAGE] if any(TOTAL_STAGE in s.latency_ms for s in summaries) else [])]
