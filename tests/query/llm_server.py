"""Real local servers for the OpenAI-compatible backend's tests: one that answers chat completions from a
script, one that accepts connections and never answers, and an address where nothing listens.

Real sockets, not a mocked HTTP client: a fault must travel the same httpx path it takes in production.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ChatServer:
    """A real HTTP server on localhost that answers chat completions from a queue of (status, body),
    then with ``default`` once the queue is empty; it records every request it was sent."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.responses: list[tuple[int, Any]] = []
        self.default: tuple[int, Any] | None = None
        self.delay = 0.0
        self.before_reply: Callable[[int], object] | None = None
        """Called with the request's number (1 for the first) before it is answered."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                outer.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"),
                     "body": json.loads(self.rfile.read(length))}
                )  # fmt: skip
                time.sleep(outer.delay)
                if outer.before_reply is not None:
                    outer.before_reply(len(outer.requests))
                status, body = outer.responses.pop(0) if outer.responses else outer.default or (404, "")
                payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up, or was killed
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    @staticmethod
    def chat_reply(content: str, logprobs: list[tuple[str, float]] | None = None) -> dict:
        choice: dict[str, Any] = {
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }
        if logprobs is not None:
            choice["logprobs"] = {"content": [{"token": t, "logprob": lp} for t, lp in logprobs]}
        return {"choices": [choice], "usage": {"prompt_tokens": 42, "completion_tokens": 7}}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    try:
        yield server
    finally:
        server.close()


@contextmanager
def silent_server() -> Iterator[str]:
    """The base URL of a socket that accepts connections (the kernel completes the handshake) and never
    answers: a hung server, which only the client's timeout ends."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


def refusing_url() -> str:
    """The base URL of a port nothing listens on (bound, then closed): a connection to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


SCHEMA_BREAKING_REPLY = "The answer is Nicomachus."
"""What a server that ignores ``response_format`` says: prose, not the JSON the schema asks for."""


@contextmanager
def faulty_llm_server(fault: str) -> Iterator[str]:
    """The base URL of an OpenAI-compatible server with one fault, for as long as the context lasts:
    ``refused`` (nothing listens), ``timeout`` (accepts, never answers), ``http-500`` (every request
    fails), ``broken-json`` (HTTP 200 with text that breaks the schema, also on the repair request)."""
    if fault == "refused":
        yield refusing_url()
    elif fault == "timeout":
        with silent_server() as url:
            yield url
    elif fault in ("http-500", "broken-json"):
        with chat_server() as server:
            server.default = (
                (500, "model worker crashed")
                if fault == "http-500"
                else (200, ChatServer.chat_reply(SCHEMA_BREAKING_REPLY))
            )
            yield server.url
    else:
        raise ValueError(f"unknown fault {fault!r}")


LLM_FAULTS = ("refused", "timeout", "http-500", "broken-json")
FAULT_TIMEOUT_S = 0.5
"""The request timeout the fault tests configure: short, so a hung server costs half a second."""

WHAT_TO_DO = {
    "refused": "start the server or fix llm.base_url",
    "timeout": f"timed out after {FAULT_TIMEOUT_S} s: is the server overloaded? raise llm.timeout_s",
    "http-500": "see the server's log",
    "broken-json": "enforces response_format",
}
"""The next step each fault's error must name (beside the server's URL)."""
