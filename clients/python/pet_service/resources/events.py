from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Union

from .._api_object import ApiObject
from .._http import Call
from .._pagination import Page
from ._resource import Resource, id_path, request_options


def _ts(value: Union[str, int, None]) -> Optional[str]:
    return None if value is None else str(value)


class Events(Resource):
    """``client.events``: what changed in your account, kept 30 days (v1, API key with
    ``read:events``). Each event: ``id``, ``type``, ``created_at``, ``data.object`` (the resource as
    v1 shows it) and, for updates, ``data.previous_attributes``."""

    def get(self, id: str, *, timeout: Optional[float] = None, max_retries: Optional[int] = None) -> ApiObject:  # noqa: A002
        """``GET /v1/event/{id}``."""
        return self._call(Call("GET", id_path("/v1/event", id)), request_options(None, timeout, max_retries))

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
        return self._list("/v1/event", params, request_options(None, timeout, max_retries))
