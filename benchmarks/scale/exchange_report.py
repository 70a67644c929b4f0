"""``exchange.md`` from ``exchange.json`` (``exchange_run.py``): per size, each step's seconds and memory
with and without the exchange and its traffic before and after checkpoints; then one step against the
length of the change log."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

VARIANTS = ("local", "before", "after")


def _n(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def _mb(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:,.2f}"


def _line(step: dict[str, Any], field: str) -> Any:
    return (step.get("line") or {}).get(field)


def _requests(step: dict[str, Any]) -> str:
    s3 = step.get("s3", {})
    return f"{_n(s3.get('list_log'))} / {_n(s3.get('get_log'))}"


def _checkpoint(step: dict[str, Any]) -> str:
    return (
        "written" if _line(step, "checkpoint_written") else "read" if _line(step, "checkpoint_read") else ""
    )


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|---|" + "--:|" * (len(header) - 1)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _traffic(key: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One step's exchange row, before \\| after."""

    def both(field: Callable[[dict[str, Any]], str]) -> str:
        return " \\| ".join(field(s) for s in (before, after))

    downloaded = before.get("s3", {}).get("get_log")
    return [
        key,
        after.get("worker", ""),
        both(lambda s: _n(s.get("records_at_start"))),
        both(lambda s: _mb(_line(s, "pulled_bytes"))),
        both(lambda s: _mb(_line(s, "pushed_bytes"))),
        both(lambda s: _n(_line(s, "listed"))),
        f"- / {_n(downloaded)} \\| {_n(_line(after, 'read'))} / {_n(_line(after, 'fetched'))}",
        both(_requests),
        _checkpoint(after),
    ]


def _size(size: dict[str, Any]) -> list[str]:
    variants = size["variants"]
    steps = {v: {s["key"]: s for s in variants[v]["steps"]} for v in VARIANTS if v in variants}
    keys = list(next(iter(steps.values()), {}))
    walls = ", ".join(f"{v} {variants[v]['wall_seconds']:,.0f} s" for v in steps)
    out = [
        f"### {size['entities']:,} entities, {size['pages']:,} pages",
        "",
        f"Whole rebuild (wall): {walls}; 1-minute load as the size began: {size['load_before']:.1f}.",
    ]
    for v in ("before", "after"):
        store = variants.get(v, {}).get("store", {})
        parts = [f"{top} {n['objects']:,} objects, {_mb(n['bytes'])} MB" for top, n in sorted(store.items())]
        if parts:
            out.append(f"Store at the end, {v}: " + "; ".join(parts) + ".")
    out += ["", "Step seconds (the step call alone, without interpreter start and imports) and peak RSS:", ""]
    rows = []
    for key in keys:
        row = [key, *(_n(steps[v].get(key, {}).get("work_seconds"), 2) for v in steps)]
        rows.append(row + [_n(steps[v].get(key, {}).get("peak_rss_mb"), 0) for v in steps])
    totals = [round(sum(s.get("work_seconds") or 0 for s in steps[v].values()), 2) for v in steps]
    rows.append(["**all**", *(_n(t, 2) for t in totals), *([""] * len(steps))])
    out += _table(["step", *(f"{v} s" for v in steps), *(f"{v} MB" for v in steps)], rows)
    if "before" not in steps or "after" not in steps:
        return [*out, ""]
    out += [
        "",
        "Exchange per step, *before* \\| *after*: MB pulled and pushed, records in the log as the step "
        "began, records listed (before: every read of the state lists the whole log), records read and "
        "downloaded (before: every listed record is parsed; downloads are GETs under log/ in moto's access "
        "log), LIST and GET requests under log/, the checkpoint read or written:",
        "",
    ]
    header = ["step", "worker", "records", "pulled MB", "pushed MB", "listed", "read / downloaded"]
    rows = [_traffic(key, steps["before"].get(key, {}), steps["after"].get(key, {})) for key in keys]
    return out + _table([*header, "LIST / GET log", "checkpoint"], rows) + [""]


def _history(entries: list[dict[str, Any]]) -> list[str]:
    out = [
        "## One step against the length of the change log",
        "",
        "A bare exchange step (`exchange_step.py`: pulls one small folder, writes one file) after N records "
        "of earlier steps, with the default checkpoint settings; *cold*: a new scratch, *warm*: the same "
        "scratch again. Before checkpoints a step lists and parses every record (downloading those its "
        "scratch lacks); after, it reads the newest checkpoint and the records after it.",
        "",
    ]
    header = ["N", "code", "scratch", "step s", "process s", "peak MB", "listed", "read", "downloaded"]
    header += ["LIST / GET log", "log + checkpoint MB", "checkpoint"]
    rows = []
    for entry in entries:
        for code, steps in entry["variants"].items():
            for s in steps:
                rows.append(
                    [
                        _n(entry["records"]),
                        code,
                        f"{s['worker']}, {s['scratch']}",
                        _n(s.get("work_seconds"), 3),
                        _n(s.get("seconds"), 2),
                        _n(s.get("peak_rss_mb"), 0),
                        _n(_line(s, "listed")),
                        _n(_line(s, "read")),
                        _n(_line(s, "fetched") if code == "after" else s.get("s3", {}).get("get_log")),
                        _requests(s),
                        _mb(_line(s, "fetched_bytes")),
                        _checkpoint(s),
                    ]
                )
    return out + _table(header, rows)


def render_markdown(result: dict[str, Any]) -> str:
    settings = result["after_settings"]["rebuild"]
    out = [
        "# The state exchange at scale: with and without it, before and after checkpoints",
        "",
        f"Command: `{result['command']}`  ",
        f"Code: before `{result['code']['before']}`, after `{result['code']['after']}`  ",
        f"Machine: {result['machine']}  ",
        f"Embedder: `{result['embedding_model']}`; *before* is the code before checkpoints, *after* this "
        f"checkout's with checkpoints every {settings['every']} records and a settle time of "
        f"{settings['settle_seconds']} s in the rebuilds (steps run one at a time on one host), the defaults "
        "in the log-length part.",
        "",
    ]
    for size in result["sizes"]:
        out += _size(size)
    if result.get("history"):
        out += _history(result["history"])
    return "\n".join(out)
