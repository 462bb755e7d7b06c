from __future__ import annotations

from typing import Optional

from .._api_object import ApiObject
from .._http import Call
from .._pagination import Page
from ._resource import NOT_GIVEN, Resource, given, id_path, request_options


class Orders(Resource):
    """``client.orders``: store orders for the pets of your account (v1, API key)."""

    def create(
        self,
        *,
        pet_id: int,
        quantity: int = NOT_GIVEN,
        ship_date: Optional[str] = NOT_GIVEN,
        status: str = NOT_GIVEN,
        complete: bool = NOT_GIVEN,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``POST /v1/order``: ``pet_id`` must be a pet of your account. Safe to retry: it always
        carries an Idempotency-Key."""
        body = given(pet_id=pet_id, quantity=quantity, ship_date=ship_date, status=status, complete=complete)
        return self._call(
            Call("POST", "/v1/order", json_body=body), request_options(idempotency_key, timeout, max_retries)
        )

    def get(self, id: int, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/order/{id}``."""
        return self._call(Call("GET", id_path("/v1/order", id)), request_options(None, timeout, max_retries))

    def update(
        self,
        id: int,  # noqa: A002
        *,
        pet_id: int = NOT_GIVEN,
        quantity: int = NOT_GIVEN,
        ship_date: Optional[str] = NOT_GIVEN,
        status: str = NOT_GIVEN,
        complete: bool = NOT_GIVEN,
        if_match: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``PATCH /v1/order/{id}``: only the fields given change; None clears ship_date."""
        body = given(pet_id=pet_id, quantity=quantity, ship_date=ship_date, status=status, complete=complete)
        return self._call(
            Call("PATCH", id_path("/v1/order", id), json_body=body), request_options(None, timeout, max_retries, if_match)
        )

    def delete(
        self,
        id: int,  # noqa: A002
        *,
        if_match: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``DELETE /v1/order/{id}``."""
        return self._call(Call("DELETE", id_path("/v1/order", id)), request_options(None, timeout, max_retries, if_match))

    def list(
        self,
        *,
        limit: Optional[int] = None,
        starting_after: Optional[int] = None,
        ending_before: Optional[int] = None,
        status: Optional[str] = None,
        pet_id: Optional[int] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Page[int]:
        """``GET /v1/order``, newest first by creation: one page; iterate over it for every order."""
        params = dict(
            limit=limit, starting_after=starting_after, ending_before=ending_before, status=status, pet_id=pet_id
        )
        return self._list("/v1/order", params, request_options(None, timeout, max_retries))
