"""Every error the service returns is JSON with a stable ``code``, never a stack trace.

``ApiError`` is what the service's own code raises; the handlers below turn it, FastAPI's validation
errors, Starlette's 404/405 and anything unexpected (logged here, with its trace, for the operator)
into ``{"error": {"code", "message", "retry_after_s"}}``.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from query.serve.models import ErrorBody, ErrorResponse

log = logging.getLogger(__name__)

HTTP_CODES = {
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    503: "not_ready",
}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.retry_after_s = status, code, message, retry_after_s

    @property
    def body(self) -> ErrorBody:
        return ErrorBody(code=self.code, message=self.message, retry_after_s=self.retry_after_s)


def error_response(error: ApiError) -> JSONResponse:
    headers = {}
    if error.retry_after_s is not None:
        headers["Retry-After"] = str(int(error.retry_after_s))
    if error.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    content = ErrorResponse(error=error.body).model_dump(mode="json")
    return JSONResponse(content, status_code=error.status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        where = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in exc.errors()[:5]
        )
        return error_response(ApiError(422, "invalid_request", f"the request is not valid: {where}"))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        code = HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
        return error_response(ApiError(exc.status_code, code, str(exc.detail)))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error answering %s %s", request.method, request.url.path)
        message = "the server failed on this request; its log has the cause (nothing of it is shown here)"
        return error_response(ApiError(500, "internal_error", message))
