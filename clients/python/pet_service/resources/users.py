from __future__ import annotations

from typing import Optional

from .._api_object import ApiObject
from .._http import Call
from .._pagination import Page
from ._resource import NOT_GIVEN, Resource, given, id_path, request_options


class Users(Resource):
    """``client.users``: the pet owners of your account (v1, API key)."""

    def create(
        self,
        *,
        name: str,
        username: Optional[str] = NOT_GIVEN,
        email: Optional[str] = NOT_GIVEN,
        phone: Optional[str] = NOT_GIVEN,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``POST /v1/user``. Safe to retry: it always carries an Idempotency-Key.

        ``username`` is unique in the account (ConflictError when another user has it).
        """
        body = given(name=name, username=username, email=email, phone=phone)
        return self._call(
            Call("POST", "/v1/user", json_body=body), request_options(idempotency_key, timeout, max_retries)
        )

    def get(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/user/{id}``."""
        return self._call(Call("GET", id_path("/v1/user", id)), request_options(None, timeout, max_retries))

    def update(
        self,
        id: str,  # noqa: A002
        *,
        name: str = NOT_GIVEN,
        username: Optional[str] = NOT_GIVEN,
        email: Optional[str] = NOT_GIVEN,
        phone: Optional[str] = NOT_GIVEN,
        if_match: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``PATCH /v1/user/{id}``: only the fields given change; None clears username, email or phone."""
        body = given(name=name, username=username, email=email, phone=phone)
        return self._call(
            Call("PATCH", id_path("/v1/user", id), json_body=body), request_options(None, timeout, max_retries, if_match)
        )

    def delete(
        self,
        id: str,  # noqa: A002
        *,
        if_match: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``DELETE /v1/user/{id}``; ConflictError while pets still name the user as owner."""
        return self._call(Call("DELETE", id_path("/v1/user", id)), request_options(None, timeout, max_retries, if_match))

    def list(
        self,
        *,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
        email: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Page[str]:
        """``GET /v1/user``, newest first: one page; iterate over it for every user."""
        params = dict(limit=limit, starting_after=starting_after, ending_before=ending_before, email=email)
        return self._list("/v1/user", params, request_options(None, timeout, max_retries))
