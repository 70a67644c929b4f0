"""The LLM lane with the real bundled Qwen2.5-Coder-0.5B reading (on 2 cores a reading takes seconds,
which holds the one slot while the other requests arrive): a client that goes away while waiting frees
its place, a full queue is a 429 with Retry-After, and ``fallback`` gets the candidate reader's answer,
marked as such."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from query import EngineConfig
from query.llm.bundled import FAST_MODEL
from tests.query.serve.conftest import running

READ_BY_LLM = "Who was the interior decorator of the film Sunrise in 1927/28?"


@pytest.fixture
def llm_server(make_app, model_cache):
    config = EngineConfig.load(None, reader="llm", llm={"backend": FAST_MODEL, "cache_dir": str(model_cache)})
    app = make_app(config, llm_slots=1, llm_queue=1, deadline_s=600, max_deadline_s=600)
    served = running(app)
    yield next(served), app
    served.close()


def wait_for(condition, timeout: float = 120.0) -> None:
    stop = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < stop, "condition not reached"
        time.sleep(0.02)


def in_background(url: str, body: dict, out: list) -> threading.Thread:
    def ask() -> None:
        out.append(httpx.post(f"{url}/v1/ask", json=body, timeout=600))

    thread = threading.Thread(target=ask)
    thread.start()
    return thread


def test_the_llm_queue_is_bounded_and_falls_back_on_request(llm_server) -> None:
    url, app = llm_server
    lane = app.state.answering.llm
    first, queued = [], []
    reading = in_background(url, {"question": READ_BY_LLM}, first)
    wait_for(lambda: lane.running == 1)

    # a client that gives up while waiting: its place is freed
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{url}/v1/ask", json={"question": READ_BY_LLM}, timeout=httpx.Timeout(600, read=0.5))
    wait_for(lambda: lane.waiting == 0, timeout=5)
    assert lane.running == 1, "the first reading should still hold the slot"

    waiting = in_background(url, {"question": READ_BY_LLM}, queued)
    wait_for(lambda: lane.waiting == 1, timeout=10)
    refused = httpx.post(f"{url}/v1/ask", json={"question": READ_BY_LLM}, timeout=60)
    fallback = httpx.post(f"{url}/v1/ask", json={"question": READ_BY_LLM, "fallback": True}, timeout=600)
    assert lane.running == 1, "the LLM finished before the full-queue checks: they proved nothing"

    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "queue_full"
    assert int(refused.headers["Retry-After"]) >= 1
    assert fallback.status_code == 200, fallback.text
    fell_back = fallback.json()
    assert fell_back["served"]["lane"] == "fast" and fell_back["served"]["fallback"] is True
    assert "LLM queue was full" in fell_back["served"]["fallback_reason"]
    assert fell_back["reader"] == "candidates" and fell_back["reading"] is None

    reading.join(600)
    waiting.join(600)
    for response in (*first, *queued):
        assert response.status_code == 200, response.text
        result = response.json()
        assert result["served"] == {**result["served"], "lane": "llm", "fallback": False}
        assert result["reading"]["model"] == FAST_MODEL and result["index_version"] == "v1"
    assert queued[0].json()["served"]["queued_ms"] > 0
    metrics = httpx.get(f"{url}/metrics", timeout=30).text
    assert "hqa_client_disconnects_total 1.0" in metrics
    assert 'hqa_queue_rejected_total{lane="llm"} 1.0' in metrics
    assert 'hqa_answers_total{fallback="true",lane="fast",mode="retrieve-read"} 1.0' in metrics
    tokens = [line for line in metrics.splitlines() if line.startswith('hqa_llm_tokens_total{kind="prompt"}')]
    assert tokens and float(tokens[0].split()[-1]) > 0


def test_the_stream_tells_the_route_and_the_models_tokens_as_they_happen(llm_server) -> None:
    url, _ = llm_server
    heard: list[tuple[str, dict, float]] = []
    with httpx.stream("GET", f"{url}/v1/ask/stream", params={"question": READ_BY_LLM}, timeout=600) as r:
        assert r.status_code == 200
        name = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                heard.append((name, json.loads(line.removeprefix("data: ")), time.monotonic()))
    names = [n for n, _, _ in heard]
    assert names[0] == "admitted" and names[-1] == "result" and "error" not in names
    result = heard[-1][1]
    assert [d for n, d, _ in heard if n == "route"] == result["route"]
    reads = [i for i, n in enumerate(names) if n == "llm"]
    assert reads and heard[reads[-1]][1]["backend"] == FAST_MODEL
    tokens = [(d["text"], at) for n, d, at in heard[reads[-1] :] if n == "token"]
    assert len(tokens) > 3
    told = "".join(t for t, _ in tokens)
    assert result["reading"]["raw_answer"] is None or result["reading"]["raw_answer"] in told
    # streamed: the first token reached the client while the model was still generating the rest
    assert tokens[0][1] < tokens[-1][1] < heard[-1][2]
    assert tokens[-1][1] - tokens[0][1] > 0.1, "every token arrived at once: not streamed"
