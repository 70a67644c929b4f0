"""The token rule: required off loopback, read from a file or the environment (never a flag), checked on
every API route, not on health checks or the page."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr, ValidationError

from query.serve.settings import TOKEN_ENV, ServeSettings, read_token

TOKEN = "s3cret-token-for-tests"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.7", "example.org", "::"])
def test_a_public_address_needs_a_token(host: str) -> None:
    with pytest.raises(ValidationError, match="needs a bearer token"):
        ServeSettings(host=host)
    assert ServeSettings(host=host, token=SecretStr(TOKEN)).host == host


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_needs_none(host: str) -> None:
    assert ServeSettings(host=host).token is None


def test_the_token_comes_from_a_file_then_the_environment(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(f"  {TOKEN}  \nsecond line ignored\n", encoding="utf-8")
    assert read_token(token_file, {TOKEN_ENV: "other"}).get_secret_value() == TOKEN
    assert read_token(None, {TOKEN_ENV: f" {TOKEN}\n"}).get_secret_value() == TOKEN
    assert read_token(None, {}) is None
    token_file.write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        read_token(token_file, {})
    with pytest.raises(ValueError, match="empty"):
        read_token(None, {TOKEN_ENV: "  "})


def test_every_api_route_needs_the_token_but_health_and_the_page_do_not(make_app) -> None:
    app = make_app(host="0.0.0.0", token=SecretStr(TOKEN))
    question = {"question": "What is the area of Belgium?"}
    with TestClient(app, raise_server_exceptions=False) as client:
        for method, url in [("POST", "/v1/ask"), ("GET", "/v1/versions"), ("GET", "/metrics")]:
            for headers in [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}]:
                response = client.request(method, url, json=question, headers=headers)
                assert response.status_code == 401, (url, headers)
                assert response.json()["error"]["code"] == "unauthorized"
                assert response.headers["WWW-Authenticate"] == "Bearer"
        good = {"Authorization": f"Bearer {TOKEN}"}
        assert client.post("/v1/ask", json=question, headers=good).json()["index_version"] == "v1"
        assert client.get("/metrics", headers=good).status_code == 200
        assert client.get("/healthz").status_code == 200 and client.get("/readyz").status_code == 200
        assert client.get("/").status_code == 200


def test_no_cors_unless_configured(make_app) -> None:
    origin = {"Origin": "http://elsewhere.example", "Access-Control-Request-Method": "POST"}
    with TestClient(make_app()) as client:
        assert "access-control-allow-origin" not in client.options("/v1/ask", headers=origin).headers
    with TestClient(make_app(cors_origins=["http://elsewhere.example"])) as client:
        allowed = client.options("/v1/ask", headers=origin).headers
        assert allowed["access-control-allow-origin"] == "http://elsewhere.example"
