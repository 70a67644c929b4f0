"""Prometheus text for ``/metrics``: requests and their latency, answers by lane and version, the LLM's
tokens, and each lane's queue depth — one registry per app, so two apps (tests) never share counts."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from query.serve.admission import Lane
from query.serve.models import ServedResult

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "hqa_http_requests", "HTTP requests by route and status", ["route", "status"], registry=r
        )
        self.latency = Histogram(
            "hqa_http_request_seconds", "HTTP request latency", ["route"], buckets=LATENCY_BUCKETS, registry=r
        )
        self.answers = Counter(
            "hqa_answers", "answers by lane, mode and fallback", ["lane", "mode", "fallback"], registry=r
        )
        self.versions = Counter("hqa_answers_by_version", "answers by index version", ["version"], registry=r)
        self.tokens = Counter("hqa_llm_tokens", "LLM tokens read and written", ["kind"], registry=r)
        self.rejected = Counter("hqa_queue_rejected", "429s: the lane's queue was full", ["lane"], registry=r)
        self.deadlines = Counter(
            "hqa_deadline_exceeded", "requests past their deadline", ["lane"], registry=r
        )
        self.disconnects = Counter("hqa_client_disconnects", "clients gone before their answer", registry=r)
        self.queue_depth = Gauge("hqa_queue_depth", "requests waiting for a slot", ["lane"], registry=r)
        self.busy = Gauge("hqa_slots_busy", "slots answering now", ["lane"], registry=r)

    def watch(self, lanes: list[Lane]) -> None:
        """Queue depth and busy slots are read from the lanes when scraped, never kept in step by hand."""
        for lane in lanes:
            self.queue_depth.labels(lane.name).set_function(lambda lane=lane: lane.waiting)
            self.busy.labels(lane.name).set_function(lambda lane=lane: lane.running)

    def answered(self, result: ServedResult) -> None:
        served = result.served
        self.answers.labels(served.lane, result.mode, str(served.fallback).lower()).inc()
        self.versions.labels(result.index_version).inc()
        if result.reading is not None:
            self.tokens.labels("prompt").inc(result.reading.prompt_tokens)
            self.tokens.labels("completion").inc(result.reading.completion_tokens)

    def text(self) -> bytes:
        return generate_latest(self.registry)
