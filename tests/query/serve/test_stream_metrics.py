"""The event stream (admitted → route → result, the same answer as /v1/ask) and the Prometheus text
(requests, answers by version, queue depth), parsed with prometheus_client's own parser."""

from __future__ import annotations

import json

from prometheus_client.parser import text_string_to_metric_families

QUESTION = "What is the area of Belgium?"


def events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_the_stream_sends_admission_route_and_the_result(client) -> None:
    with client.stream("GET", "/v1/ask/stream", params={"question": QUESTION}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        body = "".join(response.iter_text())
    got = events(body)
    names = [name for name, _ in got]
    assert names[0] == "admitted" and names[-1] == "result" and "error" not in names
    assert got[0][1] == {"lane": "fast", "fallback": False, "reason": None}
    result = got[-1][1]
    assert [data for name, data in got if name == "route"] == result["route"]
    direct = client.post("/v1/ask", json={"question": QUESTION}).json()
    assert (result["answer"], result["mode"], result["index_version"]) == (
        direct["answer"],
        direct["mode"],
        direct["index_version"],
    )


def test_a_refused_stream_is_a_plain_json_error(client) -> None:
    response = client.get("/v1/ask/stream", params={"question": " "})
    assert response.status_code == 422 and response.json()["error"]["code"] == "question_refused"


def test_metrics_count_requests_answers_and_show_the_queues(client) -> None:
    for _ in range(2):
        assert client.post("/v1/ask", json={"question": QUESTION}).status_code == 200
    assert client.post("/v1/ask", json={"question": " "}).status_code == 422
    response = client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    got = samples(response.text)
    assert got[("hqa_http_requests_total", (("route", "/v1/ask"), ("status", "200")))] == 2
    assert got[("hqa_http_requests_total", (("route", "/v1/ask"), ("status", "422")))] == 1
    assert got[("hqa_http_request_seconds_count", (("route", "/v1/ask"),))] == 3
    assert got[("hqa_answers_by_version_total", (("version", "v1"),))] == 2
    answers = (("fallback", "false"), ("lane", "fast"), ("mode", "kg-lookup"))
    assert got[("hqa_answers_total", answers)] == 2
    assert got[("hqa_queue_depth", (("lane", "llm"),))] == 0
    assert got[("hqa_slots_busy", (("lane", "fast"),))] == 0
    client.get("/v1/no-such-route")
    unknown = samples(client.get("/metrics").text)
    assert unknown[("hqa_http_requests_total", (("route", "other"), ("status", "404")))] == 1
