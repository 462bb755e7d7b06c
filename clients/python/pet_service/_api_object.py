"""Results: the API's JSON, carrying the response it came from."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ._http import ResponseInfo


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


def wrap(body: Any, info: ResponseInfo) -> ApiObject:
    result = ApiObject(body if isinstance(body, dict) else {})
    result.last_response = info
    return result
