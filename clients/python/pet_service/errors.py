"""Every failure is a :class:`PetServiceError`; its subclass says what kind of failure it is.

The fields mirror the service's RFC 9457 problem documents
(https://www.rfc-editor.org/rfc/rfc9457) and, for the OAuth token endpoint, RFC 6749 §5.2.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Type


class PetServiceError(Exception):
    """Base class of every error the client raises.

    Attributes:
        status: HTTP status, or None when no response arrived.
        code: stable machine-readable code, e.g. ``pet_not_found`` or OAuth's ``invalid_client``.
        param: the parameter at fault, when there is one.
        request_id: the response's Request-Id; quote it when asking for help.
        detail: what went wrong in this request, and how to fix it.
        title, type: the problem's title and the URI of the page that describes it.
        errors: a list of ``{"param", "message"}`` when several fields are at fault.
        headers: the response headers (lower-case names).
        body: the parsed response body.
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        param: Optional[str] = None,
        request_id: Optional[str] = None,
        detail: Optional[str] = None,
        title: Optional[str] = None,
        type: Optional[str] = None,  # noqa: A002 - the problem document's member name
        errors: Optional[List[Dict[str, str]]] = None,
        headers: Optional[Mapping[str, str]] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.param = param
        self.request_id = request_id
        self.detail = detail
        self.title = title
        self.type = type
        self.errors = errors
        self.headers: Dict[str, str] = dict(headers or {})
        self.body = body

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(status={self.status!r}, code={self.code!r}, message={self.message!r})"


class InvalidRequestError(PetServiceError):
    """400, 405, 413, 415, 422: the request itself is wrong; fix it before sending it again."""


class AuthenticationError(PetServiceError):
    """401: no credential, or an unknown, revoked or expired one (also OAuth ``invalid_client``)."""


class PermissionDeniedError(PetServiceError):
    """403: the credential is valid but lacks the scope the operation needs."""


class NotFoundError(PetServiceError):
    """404: no such object in your account (or no such route)."""


class ConflictError(PetServiceError):
    """409 and 412: conflicts with the current state (status transitions, stale If-Match, ...)."""


class RateLimitError(PetServiceError):
    """429: slow down; :attr:`retry_after` says for how many seconds."""

    @property
    def retry_after(self) -> Optional[float]:
        value = self.headers.get("retry-after")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None


class ServerError(PetServiceError):
    """5xx: the service failed; the request changed nothing and may be retried."""


class APIConnectionError(PetServiceError):
    """No response: DNS, refused connection, reset."""


class APITimeoutError(APIConnectionError):
    """No response within the timeout."""


_OAUTH_AUTH_ERRORS = {"invalid_client", "invalid_grant", "unauthorized_client", "invalid_token"}


def error_class_for(status: int, code: Optional[str] = None) -> Type[PetServiceError]:
    """The subclass for an HTTP error response."""
    if code in _OAUTH_AUTH_ERRORS:
        return AuthenticationError
    if code == "insufficient_scope":
        return PermissionDeniedError
    if status == 401:
        return AuthenticationError
    if status == 403:
        return PermissionDeniedError
    if status == 404:
        return NotFoundError
    if status in (409, 412):
        return ConflictError
    if status == 429:
        return RateLimitError
    if status >= 500:
        return ServerError
    return InvalidRequestError


def error_from_response(status: int, reason: str, headers: Mapping[str, str], body: Any) -> PetServiceError:
    """Builds the error from a problem document, an OAuth error body, or plain text."""
    problem: Dict[str, Any] = body if isinstance(body, dict) else {}

    def text(name: str) -> Optional[str]:
        value = problem.get(name)
        return value if isinstance(value, str) else None

    code = text("code") or text("error")
    if code is None:
        match = re.search(r'error="([^"]+)"', headers.get("www-authenticate", ""))
        code = match.group(1) if match else None
    detail = text("detail") or text("error_description") or text("message")
    if detail is None and isinstance(body, str) and body.strip():
        detail = body.strip()[:500]
    title = text("title") or reason or None
    request_id = text("request_id") or headers.get("request-id")
    message = detail or title or f"HTTP {status}"
    if request_id:
        message += f" (request {request_id})"
    errors = problem.get("errors")
    return error_class_for(status, code)(
        message,
        status=status,
        code=code,
        param=text("param"),
        request_id=request_id,
        detail=detail,
        title=title,
        type=text("type"),
        errors=errors if isinstance(errors, list) else None,
        headers=headers,
        body=body,
    )
