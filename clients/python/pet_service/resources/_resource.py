"""What every resource namespace shares: sending a call, listing pages, the request options."""

from __future__ import annotations

import urllib.parse
from typing import Any, Dict, Optional, Union

from .._api_object import ApiObject, wrap
from .._http import Call, RequestOptions, Transport
from .._pagination import Page


class _NotGiven:
    """Marks an argument that was not passed (None means "clear this field")."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False


NOT_GIVEN: Any = _NotGiven()


def request_options(
    idempotency_key: Optional[str] = None,
    timeout: Optional[float] = None,
    max_retries: Optional[int] = None,
    if_match: Optional[str] = None,
) -> RequestOptions:
    return RequestOptions(idempotency_key=idempotency_key, timeout=timeout, max_retries=max_retries, if_match=if_match)


def given(**fields: Any) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not NOT_GIVEN}


def id_path(prefix: str, id: Union[int, str]) -> str:  # noqa: A002
    if id is None or id == "":
        raise ValueError("An id is required.")
    return f"{prefix}/{urllib.parse.quote(str(id), safe='')}"


class Resource:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def _call(self, call: Call, options: RequestOptions) -> ApiObject:
        body, info = self._transport.send(call, options)
        return wrap(body, info)

    def _list(self, path: str, params: Dict[str, Any], options: RequestOptions) -> Page[Any]:
        start = {k: params.pop(k) for k in ("starting_after", "ending_before") if params.get(k) is not None}
        backwards = "ending_before" in start

        def fetch(cursor: Dict[str, Any]) -> Page[Any]:
            query = {k: v for k, v in {**params, **cursor}.items() if v is not None}
            body, info = self._transport.send(Call("GET", path, query=query), options)
            return Page(body or {}, info, fetch, backwards)

        return fetch(start)
