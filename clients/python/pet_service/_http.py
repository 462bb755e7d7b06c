"""Sends requests: credentials, JSON, timeouts, retries with jittered backoff, typed errors."""

from __future__ import annotations

import base64
import email.utils
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

from .errors import APIConnectionError, APITimeoutError, PetServiceError, error_from_response

#: First retry waits about this long (seconds); each further one doubles it, up to MAX_DELAY.
INITIAL_DELAY = 0.25
MAX_DELAY = 8.0
#: A Retry-After longer than this (seconds) is not waited for: the error is raised instead.
MAX_RETRY_AFTER = 60.0

QueryValue = Union[str, int, bool, None, Sequence[Union[str, int]]]


@dataclass(frozen=True)
class ResponseInfo:
    """What every result carries besides the API's JSON."""

    request_id: Optional[str]
    status: int
    headers: Mapping[str, str]
    #: ETag of the object returned, for ``if_match`` on the next change.
    etag: Optional[str] = None


@dataclass
class Call:
    method: str
    path: str
    #: "key" prefers the API key (v1), "token" the OAuth token (v2); each falls back to the other.
    credential: Union[str, Tuple[str, str]] = "key"
    query: Optional[Mapping[str, QueryValue]] = None
    json_body: Any = None
    form: Optional[Mapping[str, Optional[str]]] = None
    #: False for a POST that must not carry an Idempotency-Key (the OAuth token endpoint).
    idempotent: bool = True


@dataclass
class RequestOptions:
    """Per-call options; every method takes them as keyword arguments."""

    idempotency_key: Optional[str] = None
    timeout: Optional[float] = None
    max_retries: Optional[int] = None
    if_match: Optional[str] = None
    headers: Dict[str, str] = field(default_factory=dict)


class Transport:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: Optional[str],
        timeout: float,
        max_retries: int,
        headers: Mapping[str, str],
        token: Optional[Callable[[bool], str]],
        token_renewable: bool,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.headers = dict(headers)
        self.token = token
        self.token_renewable = token_renewable

    def send(self, call: Call, options: Optional[RequestOptions] = None) -> Tuple[Any, ResponseInfo]:
        options = options or RequestOptions()
        max_retries = max(0, self.max_retries if options.max_retries is None else options.max_retries)
        timeout = self.timeout if options.timeout is None else options.timeout
        # One key per call, kept across its retries: the service replays the first response.
        idempotency_key = None
        if call.method == "POST" and call.idempotent:
            idempotency_key = options.idempotency_key or str(uuid.uuid4())
        url = self._url(call.path, call.query)
        data, content_type = _encode_body(call)
        renewed_token = False
        attempt = 0
        while True:
            headers = self._headers(call, options, idempotency_key, content_type)
            request = urllib.request.Request(url, data=data, headers=headers, method=call.method)
            try:
                status, reason, response_headers, body = _perform(request, timeout)
            except APIConnectionError:
                # Without a response we cannot know whether a PATCH was applied: only
                # idempotent methods, and POSTs (which carry an Idempotency-Key), go again.
                if attempt < max_retries and call.method != "PATCH":
                    time.sleep(backoff(attempt))
                    attempt += 1
                    continue
                raise
            if 200 <= status < 300:
                info = ResponseInfo(
                    request_id=response_headers.get("request-id"),
                    status=status,
                    headers=response_headers,
                    etag=response_headers.get("etag"),
                )
                return body, info
            error = error_from_response(status, reason, response_headers, body)
            if status == 401 and not renewed_token and self.token_renewable and self._uses_token(call):
                # The cached token expired early or was revoked: fetch a new one, once.
                renewed_token = True
                assert self.token is not None
                self.token(True)
                continue
            delay = retry_delay(status, response_headers, error, attempt) if attempt < max_retries else None
            if delay is None:
                raise error
            time.sleep(delay)
            attempt += 1

    def _url(self, path: str, query: Optional[Mapping[str, QueryValue]]) -> str:
        pairs = []
        for name, value in (query or {}).items():
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                pairs.extend((name, str(v)) for v in value)
            elif isinstance(value, bool):
                pairs.append((name, "true" if value else "false"))
            else:
                pairs.append((name, str(value)))
        base = path if path.startswith(("http://", "https://")) else self.base_url + path
        return base + ("?" + urllib.parse.urlencode(pairs) if pairs else "")

    def _uses_token(self, call: Call) -> bool:
        if self.token is None:
            return False
        return call.credential == "token" or (call.credential == "key" and self.api_key is None)

    def _authorization(self, credential: Union[str, Tuple[str, str]]) -> Optional[str]:
        if isinstance(credential, tuple):
            return "Basic " + _b64(f"{credential[0]}:{credential[1]}")
        if credential == "none":
            return None
        key_header = None if self.api_key is None else "Basic " + _b64(f"{self.api_key}:")
        if credential == "key" and key_header is not None:
            return key_header
        if self.token is not None:
            return "Bearer " + self.token(False)
        return key_header

    def _headers(
        self,
        call: Call,
        options: RequestOptions,
        idempotency_key: Optional[str],
        content_type: Optional[str],
    ) -> Dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "pet-service-python/0.1.0", **self.headers}
        authorization = self._authorization(call.credential)
        if authorization is not None:
            headers["Authorization"] = authorization
        if content_type is not None:
            headers["Content-Type"] = content_type
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        if options.if_match is not None:
            headers["If-Match"] = options.if_match
        headers.update(options.headers)
        return headers


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _encode_body(call: Call) -> Tuple[Optional[bytes], Optional[str]]:
    if call.json_body is not None:
        return json.dumps(call.json_body).encode("utf-8"), "application/json"
    if call.form is not None:
        fields = {k: v for k, v in call.form.items() if v is not None}
        return urllib.parse.urlencode(fields).encode("ascii"), "application/x-www-form-urlencoded"
    if call.method in ("POST", "PUT", "PATCH"):
        return b"", None
    return None, None


#: Headers that carry credentials; never sent on to another origin after a redirect.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def _origin(url: str) -> Tuple[str, str, Optional[int]]:
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


class _SameOriginCredentials(urllib.request.HTTPRedirectHandler):
    """Follows redirects like urllib does, but drops the credential headers when the new URL is
    another origin (scheme, host or port), as Fetch does for the TypeScript client
    (https://fetch.spec.whatwg.org/#http-redirect-fetch). urllib alone copies every header to
    wherever the Location points, handing the API key or token to another host."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> Optional[urllib.request.Request]:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(new.full_url) != _origin(req.full_url):
            for name in [n for n in new.headers if n.lower() in CREDENTIAL_HEADERS]:
                del new.headers[name]
        return new


_OPENER = urllib.request.build_opener(_SameOriginCredentials)


def _perform(request: urllib.request.Request, timeout: float) -> Tuple[int, str, Dict[str, str], Any]:
    """One attempt: the status, reason, lower-cased headers and parsed body, or APIConnectionError."""
    try:
        with _OPENER.open(request, timeout=timeout) as response:  # noqa: S310 - caller's URL
            return _read(response.status, response.reason, response.headers, response.read())
    except urllib.error.HTTPError as error:
        with error:
            return _read(error.code, error.reason, error.headers, error.read())
    except (socket.timeout, TimeoutError) as error:
        raise APITimeoutError(f"No response within {timeout} s.") from error
    except urllib.error.URLError as error:
        if isinstance(error.reason, (socket.timeout, TimeoutError)):
            raise APITimeoutError(f"No response within {timeout} s.") from error
        raise APIConnectionError(f"Could not reach the Pet Service: {error.reason}") from error
    except (ConnectionError, OSError) as error:
        raise APIConnectionError(f"Could not reach the Pet Service: {error}") from error


def _read(status: int, reason: str, raw_headers: Any, raw: bytes) -> Tuple[int, str, Dict[str, str], Any]:
    headers = {k.lower(): v for k, v in raw_headers.items()}
    text = raw.decode("utf-8", errors="replace")
    body: Any = None
    if text:
        body = text
        if "json" in headers.get("content-type", ""):
            try:
                body = json.loads(text)
            except ValueError:
                pass
    return status, str(reason or ""), headers, body


def retry_delay(
    status: int, headers: Mapping[str, str], error: PetServiceError, attempt: int
) -> Optional[float]:
    """Seconds to wait before retrying this error response, or None not to retry it."""
    retryable = (
        status in (408, 429)
        or (status >= 500 and status != 501)
        # Another attempt of this same request still holds the Idempotency-Key.
        or (status == 409 and error.code == "idempotency_request_in_progress")
    )
    if not retryable:
        return None
    retry_after = parse_retry_after(headers.get("retry-after"))
    if retry_after is None:
        return backoff(attempt)
    if retry_after > MAX_RETRY_AFTER:
        return None
    return retry_after


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff(attempt: int) -> float:
    """Exponential backoff with "equal jitter": half fixed, half random, so clients spread out."""
    ceiling = min(MAX_DELAY, INITIAL_DELAY * 2**attempt)
    return ceiling / 2 + random.random() * (ceiling / 2)
