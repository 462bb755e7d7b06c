"""Lists: one page, and iteration over every item of every page (keyset cursors)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Generic, Iterator, List, Mapping, Optional, TypeVar

from ._api_object import ApiObject
from ._http import ResponseInfo

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
