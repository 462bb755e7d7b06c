from __future__ import annotations

from typing import Any, Dict, Optional

from .._api_object import ApiObject
from .._http import Call
from .._pagination import Page
from ._resource import Resource, id_path, request_options


class RequestLogs(Resource):
    """``client.request_logs``: the API requests of your account and their answers, kept 7 days
    (v1, API key with ``read:request_logs``). Each entry: ``method``, ``path``, ``status``,
    ``error_code``, ``request_id``, the key or OAuth client used and, for failures,
    ``request_headers``, ``request_body`` and ``response_body`` with secrets redacted."""

    def get(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/request_log/{id}``."""
        return self._call(Call("GET", id_path("/v1/request_log", id)), request_options(None, timeout, max_retries))

    def list(
        self,
        *,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
        status_class: Optional[str] = None,
        method: Optional[str] = None,
        path: Optional[str] = None,
        credential_id: Optional[str] = None,
        request_id: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Page[str]:
        """``GET /v1/request_log``, newest first: one page; iterate over it for every entry.

        ``status_class``: ``"2xx"``, ``"3xx"``, ``"4xx"`` or ``"5xx"``; ``path``: a prefix
        (``"/v1/pet"`` finds ``/v1/pet/42`` too); ``credential_id``: an API key id or OAuth client id.
        """
        params: Dict[str, Any] = dict(
            limit=limit,
            starting_after=starting_after,
            ending_before=ending_before,
            status_class=status_class,
            method=method,
            path=path,
            credential_id=credential_id,
            request_id=request_id,
        )
        return self._list("/v1/request_log", params, request_options(None, timeout, max_retries))
