from __future__ import annotations

from typing import Optional, Sequence

from .._api_object import ApiObject
from .._http import Call
from .._pagination import Page
from ._resource import NOT_GIVEN, Resource, given, id_path, request_options


_ENDPOINTS = "/v1/webhook_endpoint"


class WebhookEndpoints(Resource):
    """``client.webhook_endpoints``: where the service POSTs your account's events, signed (check
    them with :func:`pet_service.webhooks.verify`). Reads need ``read:webhooks``, changes
    ``write:webhooks``."""

    def create(
        self,
        *,
        url: str,
        enabled_events: Sequence[str],
        description: Optional[str] = NOT_GIVEN,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``POST /v1/webhook_endpoint``. The answer holds the signing ``secret`` (``whsec_...``),
        shown this once: store it now."""
        body = given(url=url, enabled_events=list(enabled_events), description=description)
        return self._call(
            Call("POST", _ENDPOINTS, json_body=body), request_options(idempotency_key, timeout, max_retries)
        )

    def get(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/webhook_endpoint/{id}``."""
        return self._call(Call("GET", id_path(_ENDPOINTS, id)), request_options(None, timeout, max_retries))

    def update(
        self,
        id: str,  # noqa: A002
        *,
        url: str = NOT_GIVEN,
        enabled_events: Sequence[str] = NOT_GIVEN,
        description: Optional[str] = NOT_GIVEN,
        status: str = NOT_GIVEN,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``PATCH /v1/webhook_endpoint/{id}``: only the fields given change (``status="disabled"``
        pauses deliveries; None clears the description)."""
        events = NOT_GIVEN if enabled_events is NOT_GIVEN else list(enabled_events)
        body = given(url=url, enabled_events=events, description=description, status=status)
        return self._call(
            Call("PATCH", id_path(_ENDPOINTS, id), json_body=body), request_options(None, timeout, max_retries)
        )

    def delete(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``DELETE /v1/webhook_endpoint/{id}``."""
        return self._call(Call("DELETE", id_path(_ENDPOINTS, id)), request_options(None, timeout, max_retries))

    def list(
        self,
        *,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Page[str]:
        """``GET /v1/webhook_endpoint``, newest first: one page; iterate over it for all."""
        params = dict(limit=limit, starting_after=starting_after, ending_before=ending_before)
        return self._list(_ENDPOINTS, params, request_options(None, timeout, max_retries))

    def rotate_secret(
        self,
        id: str,  # noqa: A002
        *,
        expire_current_in_hours: Optional[float] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``POST /v1/webhook_endpoint/{id}/rotate_secret``: a new ``secret`` (shown once); the current
        one keeps signing alongside it for ``expire_current_in_hours`` (default 24; 0 stops it now)."""
        body = {} if expire_current_in_hours is None else {"expire_current_in_hours": expire_current_in_hours}
        return self._call(
            Call("POST", id_path(_ENDPOINTS, id) + "/rotate_secret", json_body=body),
            request_options(None, timeout, max_retries),
        )

    def list_deliveries(
        self,
        id: str,  # noqa: A002
        *,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
        event_id: Optional[str] = None,
        status: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Page[str]:
        """``GET /v1/webhook_endpoint/{id}/delivery``: the delivery log, newest attempt first."""
        params = dict(
            limit=limit, starting_after=starting_after, ending_before=ending_before, event_id=event_id, status=status
        )
        return self._list(id_path(_ENDPOINTS, id) + "/delivery", params, request_options(None, timeout, max_retries))

    def resend(
        self,
        id: str,  # noqa: A002
        *,
        event_id: str,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``POST /v1/webhook_endpoint/{id}/resend``: deliver one event to this endpoint again."""
        return self._call(
            Call("POST", id_path(_ENDPOINTS, id) + "/resend", json_body={"event_id": event_id}),
            request_options(None, timeout, max_retries),
        )

    def send_test(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``POST /v1/webhook_endpoint/{id}/test``: a ``webhook.test`` event to this endpoint only."""
        return self._call(
            Call("POST", id_path(_ENDPOINTS, id) + "/test"), request_options(None, timeout, max_retries)
        )
