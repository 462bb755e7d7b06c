from __future__ import annotations

import warnings
from typing import Any, Mapping, Optional, Union

from .._api_object import ApiObject
from .._http import Call
from .._pagination import Page
from ._resource import NOT_GIVEN, Resource, given, id_path, request_options


class Pets(Resource):
    """``client.pets``: the v1 pet operations (API key) and the v2 Petstore replace (OAuth)."""

    def create(
        self,
        *,
        name: str,
        owner_id: Optional[str] = NOT_GIVEN,
        species: Optional[str] = NOT_GIVEN,
        breed: Optional[str] = NOT_GIVEN,
        status: Optional[str] = NOT_GIVEN,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``POST /v1/pet``. Safe to retry: it always carries an Idempotency-Key."""
        body = given(name=name, owner_id=owner_id, species=species, breed=breed, status=status)
        return self._call(
            Call("POST", "/v1/pet", json_body=body), request_options(idempotency_key, timeout, max_retries)
        )

    def get(self, id: int, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/pet/{id}``."""
        return self._call(Call("GET", id_path("/v1/pet", id)), request_options(None, timeout, max_retries))

    def update(
        self,
        id_or_pet: Union[int, Mapping[str, Any]],
        *,
        name: str = NOT_GIVEN,
        owner_id: Optional[str] = NOT_GIVEN,
        species: Optional[str] = NOT_GIVEN,
        breed: Optional[str] = NOT_GIVEN,
        status: str = NOT_GIVEN,
        if_match: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``PATCH /v1/pet/{id}``: only the fields given change, None clears one.

        Deprecated: ``update({"id": 1, "name": "Rex", "photoUrls": [...]})`` still replaces the
        pet as :meth:`replace` does, with a ``DeprecationWarning``, until 0.3.0.
        """
        if isinstance(id_or_pet, Mapping):
            warnings.warn(
                "pets.update(pet) is deprecated and will be removed in 0.3.0; use pets.replace(pet).",
                DeprecationWarning,
                stacklevel=2,
            )
            return self.replace(id_or_pet, if_match=if_match, timeout=timeout, max_retries=max_retries)
        body = given(name=name, owner_id=owner_id, species=species, breed=breed, status=status)
        options = request_options(None, timeout, max_retries, if_match)
        return self._call(Call("PATCH", id_path("/v1/pet", id_or_pet), json_body=body), options)

    def replace(
        self,
        pet: Mapping[str, Any],
        *,
        if_match: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``PUT /v2/pet``: the Petstore's full replace of the pet ``pet["id"]`` names
        (``{"id": 1, "name": "Rex", "photoUrls": [...], ...}``), with an OAuth token."""
        options = request_options(None, timeout, max_retries, if_match)
        return self._call(Call("PUT", "/v2/pet", credential="token", json_body=dict(pet)), options)

    def delete(
        self,
        id: int,  # noqa: A002
        *,
        if_match: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``DELETE /v1/pet/{id}``."""
        return self._call(Call("DELETE", id_path("/v1/pet", id)), request_options(None, timeout, max_retries, if_match))

    def list(
        self,
        *,
        limit: Optional[int] = None,
        starting_after: Optional[int] = None,
        ending_before: Optional[int] = None,
        status: Optional[str] = None,
        species: Optional[str] = None,
        owner_id: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Page[int]:
        """``GET /v1/pet``, newest first: one page; iterate over it for every pet of every page."""
        params = dict(
            limit=limit,
            starting_after=starting_after,
            ending_before=ending_before,
            status=status,
            species=species,
            owner_id=owner_id,
        )
        return self._list("/v1/pet", params, request_options(None, timeout, max_retries))
