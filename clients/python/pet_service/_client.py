"""The client: ``PetService`` and its resource namespaces ``pets``, ``users``, ``orders``, ``events``,
``webhook_endpoints`` and ``oauth``."""

from __future__ import annotations

import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, Generic, Iterator, List, Mapping, Optional, Sequence, TypeVar, Union

from ._http import Call, RequestOptions, ResponseInfo, Transport

DEFAULT_BASE_URL = "http://localhost:8080"

#: Renew a fetched token this many seconds before it expires, so it never lapses in flight.
EXPIRY_MARGIN = 30.0


class _NotGiven:
    """Marks an argument that was not passed (None means "clear this field")."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False


NOT_GIVEN: Any = _NotGiven()


class ApiObject(Dict[str, Any]):
    """An API object: a dict of the API's JSON (keys as documented in ``pet_service.types``),
    whose keys can also be read as attributes (``pet.name``), and which carries the response
    it came from (``pet.request_id``, ``pet.last_response``)."""

    last_response: Optional[ResponseInfo] = None

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def request_id(self) -> Optional[str]:
        return None if self.last_response is None else self.last_response.request_id


class ApiList(List[Any]):
    """A JSON array answer (e.g. ``GET /v2/pet/findByStatus`` through ``request``), carrying its
    response like :class:`ApiObject`."""

    last_response: Optional[ResponseInfo] = None

    @property
    def request_id(self) -> Optional[str]:
        return None if self.last_response is None else self.last_response.request_id


def _wrap(body: Any, info: ResponseInfo) -> ApiObject:
    result = ApiObject(body if isinstance(body, dict) else {})
    result.last_response = info
    return result


T = TypeVar("T", int, str)


class Page(Generic[T]):
    """One page of a list. Iterating over it walks every item of every page, fetching the
    next page (``starting_after`` = the last id) when needed; ``data`` is this page only."""

    def __init__(
        self,
        body: Mapping[str, Any],
        info: ResponseInfo,
        fetch: Callable[[Dict[str, Any]], "Page[T]"],
        backwards: bool,
    ) -> None:
        self.data: List[ApiObject] = [ApiObject(item) for item in body.get("data", [])]
        self.has_more: bool = bool(body.get("has_more"))
        self.url: str = str(body.get("url", ""))
        self.object: str = str(body.get("object", "list"))
        self.last_response = info
        self._fetch = fetch
        self._backwards = backwards

    @property
    def request_id(self) -> Optional[str]:
        return self.last_response.request_id

    def to_dict(self) -> Dict[str, Any]:
        """The page as the API answered it."""
        return {"object": self.object, "data": [dict(d) for d in self.data], "has_more": self.has_more, "url": self.url}

    def next_page(self) -> Optional["Page[T]"]:
        """The following page, or None after the last one."""
        if not self.has_more or not self.data:
            return None
        if self._backwards:
            return self._fetch({"ending_before": self.data[0]["id"]})
        return self._fetch({"starting_after": self.data[-1]["id"]})

    def auto_paging_iter(self) -> Iterator[ApiObject]:
        """Every item of this page and of all the pages after it."""
        page: Optional[Page[T]] = self
        while page is not None:
            yield from (reversed(page.data) if self._backwards else page.data)
            page = page.next_page()

    def __iter__(self) -> Iterator[ApiObject]:
        return self.auto_paging_iter()

    def __repr__(self) -> str:
        return f"Page(data=<{len(self.data)} items>, has_more={self.has_more})"


def _options(
    idempotency_key: Optional[str] = None,
    timeout: Optional[float] = None,
    max_retries: Optional[int] = None,
    if_match: Optional[str] = None,
) -> RequestOptions:
    return RequestOptions(idempotency_key=idempotency_key, timeout=timeout, max_retries=max_retries, if_match=if_match)


def _given(**fields: Any) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not NOT_GIVEN}


def _id_path(prefix: str, id: Union[int, str]) -> str:  # noqa: A002
    if id is None or id == "":
        raise ValueError("An id is required.")
    return f"{prefix}/{urllib.parse.quote(str(id), safe='')}"


class _Resource:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def _call(self, call: Call, options: RequestOptions) -> ApiObject:
        body, info = self._transport.send(call, options)
        return _wrap(body, info)

    def _list(self, path: str, params: Dict[str, Any], options: RequestOptions) -> Page[Any]:
        start = {k: params.pop(k) for k in ("starting_after", "ending_before") if params.get(k) is not None}
        backwards = "ending_before" in start

        def fetch(cursor: Dict[str, Any]) -> Page[Any]:
            query = {k: v for k, v in {**params, **cursor}.items() if v is not None}
            body, info = self._transport.send(Call("GET", path, query=query), options)
            return Page(body or {}, info, fetch, backwards)

        return fetch(start)


class Pets(_Resource):
    """``client.pets``: the v1 pet operations (API key) and the v2 Petstore update (OAuth)."""

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
        body = _given(name=name, owner_id=owner_id, species=species, breed=breed, status=status)
        return self._call(
            Call("POST", "/v1/pet", json_body=body), _options(idempotency_key, timeout, max_retries)
        )

    def get(self, id: int, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/pet/{id}``."""
        return self._call(Call("GET", _id_path("/v1/pet", id)), _options(None, timeout, max_retries))

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
        """``update(id, name=..., species=None)``: ``PATCH /v1/pet/{id}``; only the fields given
        change, None clears one.

        ``update({"id": 1, "name": "Rex", "photoUrls": [...], ...})``: ``PUT /v2/pet``, the
        Petstore's full replace, with an OAuth token.
        """
        options = _options(None, timeout, max_retries, if_match)
        if isinstance(id_or_pet, Mapping):
            return self._call(Call("PUT", "/v2/pet", credential="token", json_body=dict(id_or_pet)), options)
        body = _given(name=name, owner_id=owner_id, species=species, breed=breed, status=status)
        return self._call(Call("PATCH", _id_path("/v1/pet", id_or_pet), json_body=body), options)

    def delete(
        self,
        id: int,  # noqa: A002
        *,
        if_match: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> ApiObject:
        """``DELETE /v1/pet/{id}``."""
        return self._call(Call("DELETE", _id_path("/v1/pet", id)), _options(None, timeout, max_retries, if_match))

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
        return self._list("/v1/pet", params, _options(None, timeout, max_retries))


class Users(_Resource):
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
        body = _given(name=name, username=username, email=email, phone=phone)
        return self._call(
            Call("POST", "/v1/user", json_body=body), _options(idempotency_key, timeout, max_retries)
        )

    def get(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/user/{id}``."""
        return self._call(Call("GET", _id_path("/v1/user", id)), _options(None, timeout, max_retries))

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
        body = _given(name=name, username=username, email=email, phone=phone)
        return self._call(
            Call("PATCH", _id_path("/v1/user", id), json_body=body), _options(None, timeout, max_retries, if_match)
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
        return self._call(Call("DELETE", _id_path("/v1/user", id)), _options(None, timeout, max_retries, if_match))

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
        return self._list("/v1/user", params, _options(None, timeout, max_retries))


class Orders(_Resource):
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
        body = _given(pet_id=pet_id, quantity=quantity, ship_date=ship_date, status=status, complete=complete)
        return self._call(
            Call("POST", "/v1/order", json_body=body), _options(idempotency_key, timeout, max_retries)
        )

    def get(self, id: int, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/order/{id}``."""
        return self._call(Call("GET", _id_path("/v1/order", id)), _options(None, timeout, max_retries))

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
        body = _given(pet_id=pet_id, quantity=quantity, ship_date=ship_date, status=status, complete=complete)
        return self._call(
            Call("PATCH", _id_path("/v1/order", id), json_body=body), _options(None, timeout, max_retries, if_match)
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
        return self._call(Call("DELETE", _id_path("/v1/order", id)), _options(None, timeout, max_retries, if_match))

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
        return self._list("/v1/order", params, _options(None, timeout, max_retries))


def _ts(value: Union[str, int, None]) -> Optional[str]:
    return None if value is None else str(value)


class Events(_Resource):
    """``client.events``: what changed in your account, kept 30 days (v1, API key with
    ``read:events``). Each event: ``id``, ``type``, ``created_at``, ``data.object`` (the resource as
    v1 shows it) and, for updates, ``data.previous_attributes``."""

    def get(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/event/{id}``."""
        return self._call(Call("GET", _id_path("/v1/event", id)), _options(None, timeout, max_retries))

    def list(
        self,
        *,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
        type: Union[str, Sequence[str], None] = None,  # noqa: A002 - the API's parameter name
        object_id: Union[str, int, None] = None,
        created_gte: Union[str, int, None] = None,
        created_lte: Union[str, int, None] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Page[str]:
        """``GET /v1/event``, newest first: one page; iterate over it for every event of every page.

        ``type``: an exact type or a wildcard (``"pet.*"``), or a list of them. ``created_gte`` and
        ``created_lte`` (the API's ``created[gte]``/``created[lte]``): ISO 8601 or Unix seconds.
        """
        params: Dict[str, Any] = dict(
            limit=limit,
            starting_after=starting_after,
            ending_before=ending_before,
            type=[type] if isinstance(type, str) else (list(type) if type is not None else None),
            object_id=_ts(object_id),
        )
        params["created[gte]"] = _ts(created_gte)
        params["created[lte]"] = _ts(created_lte)
        return self._list("/v1/event", params, _options(None, timeout, max_retries))


_ENDPOINTS = "/v1/webhook_endpoint"


class WebhookEndpoints(_Resource):
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
        body = _given(url=url, enabled_events=list(enabled_events), description=description)
        return self._call(
            Call("POST", _ENDPOINTS, json_body=body), _options(idempotency_key, timeout, max_retries)
        )

    def get(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/webhook_endpoint/{id}``."""
        return self._call(Call("GET", _id_path(_ENDPOINTS, id)), _options(None, timeout, max_retries))

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
        body = _given(url=url, enabled_events=events, description=description, status=status)
        return self._call(
            Call("PATCH", _id_path(_ENDPOINTS, id), json_body=body), _options(None, timeout, max_retries)
        )

    def delete(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``DELETE /v1/webhook_endpoint/{id}``."""
        return self._call(Call("DELETE", _id_path(_ENDPOINTS, id)), _options(None, timeout, max_retries))

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
        return self._list(_ENDPOINTS, params, _options(None, timeout, max_retries))

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
            Call("POST", _id_path(_ENDPOINTS, id) + "/rotate_secret", json_body=body),
            _options(None, timeout, max_retries),
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
        return self._list(_id_path(_ENDPOINTS, id) + "/delivery", params, _options(None, timeout, max_retries))

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
            Call("POST", _id_path(_ENDPOINTS, id) + "/resend", json_body={"event_id": event_id}),
            _options(None, timeout, max_retries),
        )

    def send_test(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``POST /v1/webhook_endpoint/{id}/test``: a ``webhook.test`` event to this endpoint only."""
        return self._call(
            Call("POST", _id_path(_ENDPOINTS, id) + "/test"), _options(None, timeout, max_retries)
        )


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
                _options(None, timeout),
            )
            token = _wrap(body, info)
            lifetime = float(token.get("expires_in") or 300)
            self._expires_at = time.time() + max(lifetime - EXPIRY_MARGIN, lifetime / 2)
            self._cached = token
            return token

    def _bearer(self, refresh: bool) -> str:
        return str(self.token(force_refresh=refresh)["access_token"])


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
        self.webhook_endpoints = WebhookEndpoints(self._transport)

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
        result, info = self._transport.send(call, _options(idempotency_key, timeout, max_retries))
        if isinstance(result, list):
            items = ApiList(result)
            items.last_response = info
            return items
        return _wrap(result, info)
