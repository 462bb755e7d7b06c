"""OAuth access tokens for the v2 API (client credentials grant, cached and renewed)."""

from __future__ import annotations

import threading
import time
import urllib.parse
from typing import Callable, Optional

from ._api_object import ApiObject, wrap
from ._http import Call, RequestOptions, Transport

#: Renew a fetched token this many seconds before it expires, so it never lapses in flight.
EXPIRY_MARGIN = 30.0


class OAuth:
    """Access tokens for the v2 API.

    With a client id and secret it runs the client credentials grant (RFC 6749 §4.4) with HTTP
    Basic client authentication (§2.3.1: both parts form-encoded first), caches the token until
    shortly before it expires, and renews it. With a fixed access token it hands that out.
    """

    def __init__(
        self,
        transport: Callable[[], Transport],
        *,
        access_token: Optional[str],
        client_id: Optional[str],
        client_secret: Optional[str],
        scope: Optional[str],
        token_path: str,
    ) -> None:
        self._transport = transport
        self._access_token = access_token
        self._client_id = client_id
        self._client_secret = client_secret
        self._scope = scope
        self._token_path = token_path
        self._cached: Optional[ApiObject] = None
        self._expires_at = 0.0
        self._lock = threading.Lock()

    @property
    def renewable(self) -> bool:
        return self._client_id is not None and self._client_secret is not None

    @property
    def configured(self) -> bool:
        return self._access_token is not None or self.renewable

    def token(self, *, force_refresh: bool = False, timeout: Optional[float] = None) -> ApiObject:
        """The token response: ``{"access_token", "token_type", "expires_in", "scope"}``."""
        if self._access_token is not None:
            return ApiObject(access_token=self._access_token, token_type="Bearer")
        if not self.renewable:
            raise ValueError("No OAuth credentials: pass access_token, or client_id and client_secret.")
        with self._lock:
            if not force_refresh and self._cached is not None and time.time() < self._expires_at:
                return self._cached
            quote = urllib.parse.quote_plus
            body, info = self._transport().send(
                Call(
                    "POST",
                    self._token_path,
                    credential=(quote(self._client_id or ""), quote(self._client_secret or "")),
                    form={"grant_type": "client_credentials", "scope": self._scope},
                    idempotent=False,
                ),
                RequestOptions(timeout=timeout),
            )
            token = wrap(body, info)
            lifetime = float(token.get("expires_in") or 300)
            self._expires_at = time.time() + max(lifetime - EXPIRY_MARGIN, lifetime / 2)
            self._cached = token
            return token

    def _bearer(self, refresh: bool) -> str:
        return str(self.token(force_refresh=refresh)["access_token"])
