"""The API on the real sample index with the candidate reader: answers (checked against the raw dump),
versions, health, the OpenAPI document, errors as JSON with stable codes, size limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from query.cli.main import build_parser
from tests.query.serve.conftest import publish_copy

OPENAPI = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"
BELGIUM, AREA = "Q31", "P2046"


def area_in_dump(raw_dump: dict[str, dict]) -> set[float]:
    """Belgium's area amounts straight from the sample's Wikidata JSON."""
    claims = raw_dump[BELGIUM]["claims"][AREA]
    return {float(c["mainsnak"]["datavalue"]["value"]["amount"]) for c in claims if c["rank"] != "deprecated"}


def test_ask_answers_from_the_index_with_provenance_and_version(client, raw_dump) -> None:
    response = client.post("/v1/ask", json={"question": "What is the area of Belgium?"})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["index_version"] == "v1" and result["mode"] == "kg-lookup"
    answer = float(result["answer"].replace(",", ""))
    assert any(abs(answer - area) <= 1e-6 * area for area in area_in_dump(raw_dump)), result["answer"]
    assert result["served"] == {
        "lane": "fast",
        "fallback": False,
        "fallback_reason": None,
        "queued_ms": result["served"]["queued_ms"],
        "answer_ms": result["served"]["answer_ms"],
    }
    support = set(result["supporting_evidence_ids"])
    rows = [e for e in result["evidence"] if e["evidence_id"] in support]
    assert rows and rows[0]["provenance"]["statement_id"] == result["facts"][0]["statement_id"]
    assert [step["mode"] for step in result["route"] if step["outcome"] == "answered"] == ["kg-lookup"]


def test_versions_follow_a_new_publish_without_a_restart(client, sample_index, index_root) -> None:
    _, built = sample_index
    question = {"question": "What is the area of Belgium?"}
    assert client.post("/v1/ask", json=question).json()["index_version"] == "v1"
    publish_copy(index_root, built.version_dir, "v2")
    assert client.post("/v1/ask", json=question).json()["index_version"] == "v2"
    versions = client.get("/v1/versions").json()
    assert versions["answering"] == "v2" and versions["current"] == "v2"
    assert versions["answered_from"] == ["v1", "v2"] and set(versions["available"]) >= {"v2"}
    assert versions["open"] == ["v2"], "the v1 engine is closed once its last question is answered"


def test_health_and_readiness(client) -> None:
    assert client.get("/healthz").json() == {"status": "ok", "version": None, "reader": None}
    ready = client.get("/readyz")
    assert (
        ready.status_code == 200
        and ready.json()["version"] == "v1"
        and ready.json()["reader"] == "candidates"
    )


def test_the_served_openapi_document_is_the_committed_one(client) -> None:
    served = client.get("/openapi.json").json()
    assert served == json.loads(OPENAPI.read_text(encoding="utf-8")), (
        "docs/openapi.json is stale: regenerate it with `hqa serve --openapi docs/openapi.json`"
    )
    assert "/v1/ask" in served["paths"] and "ServedResult" in served["components"]["schemas"]


@pytest.mark.parametrize(
    ("request_kwargs", "status", "code"),
    [
        ({"method": "GET", "url": "/v1/nothing"}, 404, "not_found"),
        ({"method": "GET", "url": "/v1/ask"}, 405, "method_not_allowed"),
        ({"method": "POST", "url": "/v1/ask", "json": {"q": "x"}}, 422, "invalid_request"),
        ({"method": "POST", "url": "/v1/ask", "content": b"{not json"}, 422, "invalid_request"),
        ({"method": "POST", "url": "/v1/ask", "json": {"question": "   "}}, 422, "question_refused"),
        ({"method": "POST", "url": "/v1/ask", "json": {"question": "why " * 300}}, 413, "question_too_long"),
        ({"method": "POST", "url": "/v1/ask", "json": {"question": "x" * 70_000}}, 413, "body_too_large"),
        ({"method": "POST", "url": "/v1/batch", "json": {"questions": ["a?"] * 17}}, 413, "batch_too_large"),
    ],
)
def test_errors_are_json_with_a_stable_code(client, request_kwargs, status, code) -> None:
    response = client.request(**request_kwargs)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert "Traceback" not in response.text


def test_a_body_without_a_length_is_read_only_up_to_the_limit(client) -> None:
    chunks = (b"x" * 8_192 for _ in range(20))  # streamed: no Content-Length, 160 kB
    response = client.post("/v1/ask", content=chunks, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["code"] == "body_too_large"


def test_a_broken_published_version_is_a_500_without_a_trace(client, index_root: Path) -> None:
    broken = index_root / "broken"
    broken.mkdir()
    (index_root / "current").unlink()
    (index_root / "current").symlink_to(broken.name)
    response = client.post("/v1/ask", json={"question": "What is the area of Belgium?"})
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert "Traceback" not in response.text and "broken" not in response.text


def test_batch_answers_in_order_each_with_its_own_error(client, raw_dump) -> None:
    questions = ["What is the area of Belgium?", " ", "What is the area of Belgium?"]
    response = client.post("/v1/batch", json={"questions": questions})
    assert response.status_code == 200, response.text
    items = response.json()["results"]
    assert [i["index"] for i in items] == [0, 1, 2]
    assert items[1]["result"] is None and items[1]["error"]["code"] == "question_refused"
    assert items[0]["result"]["answer"] == items[2]["result"]["answer"]
    assert items[0]["result"]["index_version"] == "v1"


def test_the_server_binds_loopback_by_default() -> None:
    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1"
    assert not hasattr(args, "token"), "the token is never a flag"
