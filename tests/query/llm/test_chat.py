"""``Llm.chat``: schema-held output, one repair, a ledger of calls — on the real bundled model, on a real
local HTTP server speaking the OpenAI chat API, and (for the repair paths) on a scripted backend."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from query.events import listened
from query.llm.backends import LlmError, LlmUnavailable, OpenAICompatibleBackend, open_backend
from query.llm.chat import Llm, LlmOutputError
from query.llm.settings import LlmSettings
from query.llm.tokens import TokenTeller
from tests.query.llm_server import (
    FAULT_TIMEOUT_S,
    LLM_FAULTS,
    WHAT_TO_DO,
    ChatServer,
    chat_server,
    faulty_llm_server,
)
from tests.query.scripted_llm import Scripted


class Capital(BaseModel):
    city: str = Field(max_length=40)
    country: str = Field(max_length=40)


ASK = [
    {"role": "system", "content": "You answer with JSON."},
    {
        "role": "user",
        "content": "Evidence: Brussels is the capital of Belgium.\nWhat is the capital of Belgium?",
    },
]

# -- the real bundled model ---------------------------------------------------------------------------


def test_real_model_output_is_held_to_the_schema(small_llm: Llm) -> None:
    before = len(small_llm.calls)
    reply = small_llm.chat_reply(ASK, Capital, max_tokens=40)
    assert isinstance(reply.value, Capital)
    assert "brussels" in reply.value.city.lower()
    call = small_llm.calls[before]
    assert call.ok and call.prompt_tokens > 20 and 0 < call.completion_tokens <= 40 and call.ms > 0
    # the backend reports each generated token's log-probability, spelling the reply
    assert reply.completion.logprobs is not None
    assert reply.completion.logprobs[-1][1] == len(reply.completion.text.rstrip())
    assert all(lp <= 0 for _, _, lp in reply.completion.logprobs)


def test_real_model_is_greedy_and_deterministic(small_llm: Llm) -> None:
    first = small_llm.chat(ASK, Capital, max_tokens=40)
    second = small_llm.chat(ASK, Capital, max_tokens=40)
    assert first == second


def test_real_model_plain_text_and_a_token_cap(small_llm: Llm) -> None:
    text = small_llm.chat([{"role": "user", "content": "Count from 1 to 50, comma separated."}], max_tokens=5)
    assert isinstance(text, str) and text
    assert small_llm.calls[-1].completion_tokens == 5


def test_real_model_serves_threads_one_at_a_time(small_llm: Llm) -> None:
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda: results.append(small_llm.chat(ASK, Capital))) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2 and results[0] == results[1]


def test_real_model_tokens_reach_a_listener_as_they_are_generated(small_llm: Llm) -> None:
    """The server's event stream listens: the told pieces spell the reply exactly, each arrives before the
    call returns, and a thread hears only its own listener."""
    heard: list[tuple[str, dict, float]] = []
    with listened(lambda name, data: heard.append((name, data, time.perf_counter()))):
        reply = small_llm.chat_reply(ASK, Capital, max_tokens=40, purpose="capital")
    returned = time.perf_counter()
    assert heard[0][:2] == ("llm", {"purpose": "capital", "backend": small_llm.name, "repair": False})
    tokens = [data["text"] for name, data, _ in heard if name == "token"]
    assert "".join(tokens) == reply.completion.text
    assert len(tokens) > 3, "told as one piece: not streamed"
    assert all(at <= returned for *_, at in heard)
    # nobody listening: nothing is told, and other threads never heard this thread's listener
    other: list[str] = []
    thread = threading.Thread(target=lambda: other.append(small_llm.chat(ASK, Capital, max_tokens=40)))
    with listened(lambda name, data: heard.append((name, data, 0.0))):
        before = len(heard)
        thread.start()
        thread.join()
    assert len(heard) == before and other


def test_a_character_split_over_tokens_is_told_whole(small_llm: Llm) -> None:
    """Byte-level tokens can end inside a UTF-8 character: the teller holds the bytes until it is whole."""
    text = "Zürich, Ḱōbe 東京 🙂"
    llama = small_llm.backend._llama  # type: ignore[attr-defined]
    tokens = llama.tokenize(text.encode(), add_bos=False, special=False)
    pieces = [llama.detokenize([t]) for t in tokens]
    assert any(_not_utf8(p) for p in pieces), "no token splits a character: the case is not exercised"
    told: list[str] = []
    teller = TokenTeller(llama.detokenize)
    with listened(lambda name, data: told.append(data["text"])):
        for token in tokens:
            teller(token)
        teller.finish(text)
    assert "".join(told) == text and "\ufffd" not in "".join(told)


def _not_utf8(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_a_prompt_over_the_context_window_is_a_clear_error(small_llm: Llm) -> None:
    long = [{"role": "user", "content": "word " * 6000}]
    with pytest.raises(LlmError, match="n_ctx"):
        small_llm.chat(long)
    assert not small_llm.calls[-1].ok


def test_a_missing_gguf_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(LlmUnavailable, match="does not exist"):
        open_backend(LlmSettings(backend="gguf", model_path=tmp_path / "none.gguf"))


# -- repair, on a scripted backend ----------------------------------------------------------------------


def test_invalid_output_gets_one_repair_that_quotes_the_error() -> None:
    backend = Scripted(['{"city": "Brussels"}', '{"city": "Brussels", "country": "Belgium"}'])
    llm = Llm(backend)
    assert llm.chat(ASK, Capital) == Capital(city="Brussels", country="Belgium")
    repair = backend.sent[1]
    assert repair[-2] == {"role": "assistant", "content": '{"city": "Brussels"}'}
    assert "country" in repair[-1]["content"] and "Field required" in repair[-1]["content"]
    assert [(c.ok, c.repair) for c in llm.calls] == [(False, False), (True, True)]


def test_output_broken_twice_raises_and_is_recorded() -> None:
    llm = Llm(Scripted(["not json", '{"city": 3}']))
    with pytest.raises(LlmOutputError, match="broke the Capital schema twice"):
        llm.chat(ASK, Capital)
    assert [c.ok for c in llm.calls] == [False, False]
    assert "not JSON" in (llm.calls[0].error or "")


def test_a_backend_error_is_recorded_and_raised() -> None:
    llm = Llm(Scripted([LlmError("server down")]))
    with pytest.raises(LlmError, match="server down"):
        llm.chat(ASK, Capital)
    assert llm.calls[0].error == "server down" and not llm.calls[0].ok


# -- an OpenAI-compatible server ----------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with chat_server() as s:
        yield s


def _server_llm(server: ChatServer, **extra: Any) -> Llm:
    settings = LlmSettings(backend="openai-compatible", base_url=server.url, model="qwen", **extra)
    return Llm(OpenAICompatibleBackend(settings), settings)


def test_server_gets_the_schema_as_response_format(server: ChatServer, monkeypatch) -> None:
    monkeypatch.setenv("HQA_TEST_KEY", "sk-test")
    server.responses.append((200, server.chat_reply('{"city": "Brussels", "country": "Belgium"}')))
    llm = _server_llm(server, api_key_env="HQA_TEST_KEY")
    assert llm.chat(ASK, Capital) == Capital(city="Brussels", country="Belgium")
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "qwen" and body["temperature"] == 0 and body["messages"] == ASK
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == Capital.model_json_schema()
    assert (llm.calls[0].prompt_tokens, llm.calls[0].completion_tokens) == (42, 7)


def test_server_that_ignores_the_schema_gets_one_repair(server: ChatServer) -> None:
    server.responses += [
        (200, server.chat_reply("Brussels")),
        (200, server.chat_reply('{"city": "Brussels", "country": "Belgium"}')),
    ]
    llm = _server_llm(server)
    assert llm.chat(ASK, Capital).city == "Brussels"
    assert len(server.requests) == 2 and server.requests[1]["body"]["messages"][-1]["role"] == "user"


def test_server_logprobs_are_mapped_to_the_text(server: ChatServer) -> None:
    server.responses.append((200, server.chat_reply("Brussels", [("Brus", -0.1), ("sels", -0.2)])))
    reply = _server_llm(server, server_logprobs=True).chat_reply(ASK)
    assert reply.completion.logprobs == [(0, 4, -0.1), (4, 8, -0.2)]
    assert server.requests[0]["body"]["logprobs"] is True


@pytest.mark.parametrize(
    ("status", "body", "match"),
    [
        (500, "internal error", r"HTTP 500 \(see the server's log.*\): 'internal error'"),
        (200, {"choices": []}, "returned no choice"),
        (200, "<html>", "returned no choice"),
    ],
)
def test_server_errors_name_what_happened(server: ChatServer, status: int, body: Any, match: str) -> None:
    server.responses.append((status, body))
    llm = _server_llm(server)
    with pytest.raises(LlmError, match=match):
        llm.chat(ASK)
    assert not llm.calls[0].ok


def test_a_slow_server_times_out(server: ChatServer) -> None:
    server.delay = 1.0
    server.responses.append((200, server.chat_reply("late")))
    with pytest.raises(LlmError, match=r"timed out after 0\.2 s"):
        _server_llm(server, timeout_s=0.2).chat(ASK)


@pytest.mark.parametrize("fault", LLM_FAULTS)
def test_a_faulty_server_is_an_llm_error_naming_its_url_and_what_to_do(fault: str) -> None:
    """Issue 17: whatever breaks on the server side, the caller gets one ``LlmError`` whose first 300
    characters (what a reading keeps) name the server and the next step. A reply that breaks the schema
    twice used to name only the backend kind ("openai-compatible broke the … schema twice"), not which
    server, nor that it ignores ``response_format``."""
    with faulty_llm_server(fault) as url:
        settings = LlmSettings(backend="openai-compatible", base_url=url, timeout_s=FAULT_TIMEOUT_S)
        llm = Llm(OpenAICompatibleBackend(settings), settings)
        started = time.perf_counter()
        with pytest.raises(LlmError) as raised:
            llm.chat(ASK, Capital)
    assert time.perf_counter() - started < FAULT_TIMEOUT_S * 2 + 2  # a hung server costs its timeout only
    kept = str(raised.value)[:300]
    assert url in kept and WHAT_TO_DO[fault] in kept, kept
    assert llm.calls and not any(c.ok for c in llm.calls)
    assert isinstance(raised.value, LlmOutputError) == (fault == "broken-json")
    assert list(raised.value.calls) == list(llm.calls)  # the error carries what the failed chat cost
    if fault == "timeout":  # a failed request is timed too (it was recorded as 0 ms)
        assert llm.calls[0].ms >= FAULT_TIMEOUT_S * 1000 * 0.9


def test_a_missing_key_variable_is_unavailable(monkeypatch) -> None:
    monkeypatch.delenv("HQA_TEST_KEY", raising=False)
    settings = LlmSettings(
        backend="openai-compatible", base_url="http://127.0.0.1:9/v1", api_key_env="HQA_TEST_KEY"
    )
    with pytest.raises(LlmUnavailable, match="HQA_TEST_KEY, which is unset"):
        OpenAICompatibleBackend(settings)


# -- settings ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"backend": "gpt-9"}, "unknown llm backend 'gpt-9'"),
        ({"backend": "openai-compatible"}, "needs base_url"),
        ({"backend": "gguf"}, "needs model_path"),
        ({"backend": "openai-compatible", "base_url": "ftp://x"}, "must start with http"),
        ({"api_key_env": "sk-abc123456789"}, "NAME of an environment variable"),
        ({"colour": "blue"}, "Extra inputs are not permitted"),
    ],
)
def test_settings_are_validated(values: dict, match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        LlmSettings(**values)


def test_default_backend_is_the_bundled_1_5b_model() -> None:
    assert LlmSettings().backend == "qwen2.5-coder-1.5b-instruct"
    relative = LlmSettings().in_state_dir(Path("/state"))
    assert relative.cache_dir == Path("/state/models")
