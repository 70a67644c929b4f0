"""The token rule: when the service has a token, every API request carries it as ``Authorization:
Bearer <token>``; compared in constant time. Health checks and the page itself (which holds no data)
stay open, so a load balancer and a browser can reach them."""

from __future__ import annotations

import hmac

from fastapi import Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from query.serve.errors import ApiError

bearer = HTTPBearer(auto_error=False, description="required when the server has a token")


async def require_token(request: Request) -> None:
    token = request.app.state.settings.token
    if token is None:
        return
    credentials: HTTPAuthorizationCredentials | None = await bearer(request)
    given = credentials.credentials if credentials is not None else ""
    if not hmac.compare_digest(given.encode(), token.get_secret_value().encode()):
        raise ApiError(401, "unauthorized", "send the server's token as 'Authorization: Bearer <token>'")
