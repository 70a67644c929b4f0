"""Boundary 6: an engine config file (TOML or YAML), through ``EngineConfig.load``.

The seeds are the engine configs in ``tests/fuzz/seeds/`` (the reader settings the LLM reader benchmark
ran with), each also written back as TOML and YAML, and the defaults, bare and under ``[engine]``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import yaml

from tests.fuzz.harness import (
    INPUT_SECONDS,
    Boundary,
    BoundaryReport,
    CallTimeout,
    Finding,
    FuzzInput,
    last_line,
    time_limit,
)
from tests.fuzz.mutators import CONFIG_DIALECT, NEST_MARK, mutate_bytes, mutate_value

ENGINE_CONFIGS = sorted((Path(__file__).resolve().parents[1] / "seeds").glob("*.toml"))


def to_toml(table: dict[str, Any], prefix: tuple[str, ...] = ()) -> str:
    """A TOML document for nested dicts of scalars and lists (the standard library only reads TOML)."""
    lines, subtables = [], []
    for key, value in table.items():
        if isinstance(value, dict):
            subtables.append((key, value))
        elif value is not None:  # TOML has no null: the key is left out
            lines.append(f"{json.dumps(key)} = {_toml_value(value)}")
    out = "".join(f"{line}\n" for line in lines)
    for key, value in subtables:
        name = ".".join(json.dumps(part) for part in (*prefix, key))
        out += f"\n[{name}]\n" + to_toml(value, (*prefix, key))
    return out


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return (
            "nan"
            if value != value
            else ("inf" if value > 0 else "-inf")
            if abs(value) == float("inf")
            else repr(value)
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value) if value != NEST_MARK else "[" * 5_000 + "]" * 5_000
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items() if v is not None)
            + "}"
        )
    raise TypeError(f"no TOML for {type(value).__name__}")


def _yaml_nest(text: str) -> str:
    return text.replace(NEST_MARK, "[" * 5_000 + "]" * 5_000)


class ConfigBoundary(Boundary):
    name = "config"
    batch = 100

    def __init__(self, work: Path):
        super().__init__(work)
        from query.config import EngineConfig

        self._config = EngineConfig
        defaults = EngineConfig().model_dump(mode="json")
        self.seeds: list[tuple[str, str]] = [(".toml", path.read_text()) for path in ENGINE_CONFIGS]
        for values in (
            defaults,
            {"engine": defaults},
            *(tomllib_loads(text) for _, text in list(self.seeds)),
        ):
            self.seeds += [(".toml", to_toml(values)), (".yaml", yaml.safe_dump(values, sort_keys=False))]
        self.good = self.seeds[:4]
        self.good_configs = [self._load(self.work / f"good-{i}{s}", t) for i, (s, t) in enumerate(self.good)]

    def _load(self, path: Path, text: str | bytes) -> Any:
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        try:
            return self._config.load(path)
        finally:
            path.unlink()

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        suffix, text = rng.choice(self.seeds)
        names: list[str] = []
        if rng.random() < 0.4:
            value = mutate_value(
                rng, tomllib_loads(text) if suffix == ".toml" else yaml.safe_load(text), names
            )
            if suffix == ".toml" and isinstance(value, dict):
                data = to_toml(value).encode("utf-8", errors="surrogatepass")
            else:
                suffix = rng.choice((".yaml", ".yml"))
                data = _yaml_nest(yaml.safe_dump(value, allow_unicode=rng.random() < 0.5)).encode(
                    "utf-8", errors="surrogatepass"
                )
        else:
            data = mutate_bytes(rng, text.encode(), CONFIG_DIALECT, names)
        return FuzzInput(index, f"config{suffix}", names, data)

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        from pydantic import ValidationError

        for item in items:
            report.calls += 1
            path = self.work / f"fuzz-{item.index}{item.seed_name.removeprefix('config')}"
            try:
                with time_limit(INPUT_SECONDS):
                    self._load(path, item.data)
            except CallTimeout as exc:
                report.add(Finding.of("slow", item, last_line(exc)))
            except (ValueError, ValidationError) as exc:  # ValidationError is a ValueError: the named kind
                if str(path) not in str(exc):
                    report.add(Finding.of("violation", item, f"error without the path: {last_line(exc)}"))
                report.count("rejected")
            except Exception as exc:
                report.add(Finding.of("crash", item, last_line(exc)))
            else:
                report.count("parsed")
        for (suffix, text), want in zip(self.good, self.good_configs, strict=True):
            report.good_records_checked += 1
            try:
                same = self._load(self.work / f"good{suffix}", text) == want
            except Exception as exc:
                same = False
                report.add(Finding.of("violation", None, f"a good config no longer loads: {last_line(exc)}"))
            if not same:
                report.add(Finding.of("violation", None, "a good config loads differently"))


def tomllib_loads(text: str) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(text)
