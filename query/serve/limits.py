"""The request-size limit, enforced before any route reads the body: a declared ``Content-Length``
over the limit is refused at once, and a body sent without one is read only up to the limit."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from query.serve.errors import ApiError, error_response


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refuse(scope, receive, send)
            return
        body, more, disconnected = bytearray(), True, False
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                disconnected, more = True, False
                break
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
        await self.app(scope, _replay(bytes(body), receive, disconnected), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"the request body is larger than {self.max_bytes} bytes"
        await error_response(ApiError(413, "body_too_large", message))(scope, receive, send)


def _replay(body: bytes, receive: Receive, disconnected: bool) -> Receive:
    """The body once, then the client's own messages (a disconnect, when it goes away)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        if disconnected:
            return {"type": "http.disconnect"}
        return await receive()

    return replay
