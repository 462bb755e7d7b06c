from __future__ import annotations

from typing import Optional

from .._api_object import ApiObject
from .._http import Call
from ._resource import Resource, request_options


class AccountResource(Resource):
    """``client.account``: the account the API key belongs to."""

    def retrieve(self, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:
        """``GET /v1/account``: the key's account, with ``mode`` (``live``, or ``sandbox`` for a
        ``pet_sk_test_`` key) and, for a sandbox, ``live_account_id``."""
        return self._call(Call("GET", "/v1/account"), request_options(None, timeout, max_retries))
