"""The client, ``PetService``: the transport, OAuth and the resource namespaces (resources/)."""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Union

from ._api_object import ApiList, ApiObject, wrap
from ._http import Call, RequestOptions, Transport
from ._oauth import OAuth
from .resources import AccountResource, Events, Orders, Pets, RequestLogs, Users, WebhookEndpoints

DEFAULT_BASE_URL = "http://localhost:8080"


class PetService:
    """The Pet Service API.

    >>> client = PetService(api_key="pet_sk_...", base_url="http://localhost:8080")
    >>> pet = client.pets.create(name="Rex", species="dog")
    >>> for p in client.pets.list(species="dog"):
    ...     print(p["name"])
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: str = DEFAULT_BASE_URL,
        access_token: Optional[str] = None,
        client_id: Optional[str] = None,
        client_secret: Optional[str] = None,
        scope: Union[str, List[str], None] = None,
        token_url: str = "/oauth/token",
        timeout: float = 30.0,
        max_retries: int = 2,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        if (client_id is None) != (client_secret is None):
            raise ValueError("Pass client_id and client_secret together.")
        scope_text = " ".join(scope) if isinstance(scope, list) else scope
        self.oauth = OAuth(
            lambda: self._transport,
            access_token=access_token,
            client_id=client_id,
            client_secret=client_secret,
            scope=scope_text,
            token_path=token_url,
        )
        self._transport = Transport(
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            headers=headers or {},
            token=self.oauth._bearer if self.oauth.configured else None,
            token_renewable=self.oauth.renewable,
        )
        self.pets = Pets(self._transport)
        self.users = Users(self._transport)
        self.orders = Orders(self._transport)
        self.events = Events(self._transport)
        self.request_logs = RequestLogs(self._transport)
        self.webhook_endpoints = WebhookEndpoints(self._transport)
        #: The key's account, live or sandbox: ``client.account.retrieve()``.
        self.account = AccountResource(self._transport)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Union[ApiObject, ApiList]:
        """Any other operation, with the same credentials, retries and errors. ``/v2/...`` paths
        use the OAuth token when one is configured, everything else the API key. A JSON array
        answer comes back as an :class:`ApiList`."""
        call = Call(
            method.upper(),
            path,
            credential="token" if path.startswith("/v2/") else "key",
            query=query,
            json_body=body,
        )
        options = RequestOptions(idempotency_key=idempotency_key, timeout=timeout, max_retries=max_retries)
        result, info = self._transport.send(call, options)
        if isinstance(result, list):
            items = ApiList(result)
            items.last_response = info
            return items
        return wrap(result, info)
