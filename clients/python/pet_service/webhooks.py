"""Verifying (and, for tests, making) webhook signatures as the service sends them.

The service signs deliveries as Standard Webhooks does (https://www.standardwebhooks.com/):

    webhook-id:        the event id (stable across retries: de-duplicate on it)
    webhook-timestamp: Unix seconds
    webhook-signature: space-separated ``v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>``
                       (two entries while a rotated secret still signs alongside the new one)

The key is the base64 after ``whsec_``. Standard library only (``hmac``, ``hashlib``); MACs are
compared with ``hmac.compare_digest``, in constant time.

    from pet_service import webhooks

    event = webhooks.verify(request.get_data(), request.headers, os.environ["WEBHOOK_SECRET"])
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .errors import PetServiceError

__all__ = ["DEFAULT_TOLERANCE", "WebhookVerificationError", "generate_secret", "sign", "verify"]

#: Seconds a timestamp may be off from now, in either direction (the replay window).
DEFAULT_TOLERANCE = 5 * 60

_PREFIX = "whsec_"
_TIMESTAMP = re.compile(r"^\d{1,15}$")


class WebhookVerificationError(PetServiceError):
    """A webhook that must not be trusted. ``reason`` (also ``code``) says why: ``missing_header``,
    ``invalid_timestamp``, ``timestamp_too_old``, ``timestamp_too_new``, ``no_valid_signature``
    or ``invalid_payload``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message, code=reason)
        self.reason = reason


Payload = Union[bytes, bytearray, memoryview, str]
Secrets = Union[str, Sequence[str]]


def verify(
    payload: Payload,
    headers: Mapping[str, Any],
    secret: Secrets,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """Checks that ``payload`` (the raw request body, as received) came from the service, signed
    with ``secret`` (or one of several) within ``tolerance`` seconds of ``now`` (Unix seconds;
    default the current time), and returns the parsed event. Raises WebhookVerificationError."""
    msg_id = _header(headers, "webhook-id")
    timestamp_text = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    missing = [
        name
        for name, value in (
            ("webhook-id", msg_id),
            ("webhook-timestamp", timestamp_text),
            ("webhook-signature", signatures),
        )
        if value is None
    ]
    if msg_id is None or timestamp_text is None or signatures is None:
        raise WebhookVerificationError(
            "missing_header",
            f"Missing the {', '.join(missing)} header{'s' if len(missing) > 1 else ''}: this is not a "
            "signed webhook (or a proxy dropped the headers).",
        )
    if not _TIMESTAMP.match(timestamp_text):
        raise WebhookVerificationError(
            "invalid_timestamp", f"The webhook-timestamp header must be Unix seconds, not {timestamp_text[:40]!r}."
        )
    timestamp = int(timestamp_text)
    current = int(time.time() if now is None else now)
    if current - timestamp > tolerance:
        raise WebhookVerificationError(
            "timestamp_too_old",
            f"The webhook-timestamp is {current - timestamp} s old, more than the {tolerance} s allowed: "
            "a replay, or this machine's clock is wrong.",
        )
    if timestamp - current > tolerance:
        raise WebhookVerificationError(
            "timestamp_too_new",
            f"The webhook-timestamp is {timestamp - current} s in the future, more than the {tolerance} s "
            "allowed: check this machine's clock.",
        )
    body = _bytes(payload)
    candidates: List[bytes] = []
    for entry in signatures.split(" "):
        version, _, encoded = entry.partition(",")
        if version != "v1" or not encoded:
            continue
        try:
            candidates.append(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError):
            continue
    for key in _keys(secret):
        expected = _mac(key, msg_id, timestamp, body)
        for candidate in candidates:
            if hmac.compare_digest(expected, candidate):
                try:
                    return json.loads(body.decode("utf-8"))  # type: ignore[no-any-return]
                except ValueError:
                    raise WebhookVerificationError(
                        "invalid_payload", "The signature matches but the body is not JSON."
                    ) from None
    raise WebhookVerificationError(
        "no_valid_signature",
        "The webhook-signature header holds no v1 signature."
        if not candidates
        else "No signature matches: the body was changed (verify the raw bytes, before any JSON parsing), "
        "or the secret is not this endpoint's.",
    )


def sign(payload: Payload, secret: Secrets, *, msg_id: str, timestamp: Optional[int] = None) -> Dict[str, str]:
    """The headers the service would send with ``payload``, one ``v1,`` entry per secret given:
    for tests of your receiver."""
    if not msg_id or re.search(r"[\s,.]", msg_id):
        raise ValueError(f"A webhook id must be non-empty, without spaces, commas or dots: {msg_id!r}")
    ts = int(time.time()) if timestamp is None else int(timestamp)
    body = _bytes(payload)
    entries = [f"v1,{base64.b64encode(_mac(key, msg_id, ts, body)).decode('ascii')}" for key in _keys(secret)]
    return {"webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": " ".join(entries)}


def generate_secret() -> str:
    """A new random secret in the service's form: ``whsec_`` + base64 of 32 random bytes."""
    return _PREFIX + base64.b64encode(os.urandom(32)).decode("ascii")


def _mac(key: bytes, msg_id: str, timestamp: int, body: bytes) -> bytes:
    return hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()


def _keys(secret: Secrets) -> List[bytes]:
    secrets = [secret] if isinstance(secret, str) else list(secret)
    keys = []
    for text in secrets:
        encoded = text[len(_PREFIX) :] if text.startswith(_PREFIX) else text
        try:
            key = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if not key:
            raise ValueError("A webhook secret is whsec_ followed by base64 (as the endpoint's create answer shows it).")
        keys.append(key)
    return keys


def _header(headers: Mapping[str, Any], name: str) -> Optional[str]:
    """A header by case-insensitive name, from a plain dict or any framework's headers mapping."""
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if isinstance(k, str) and k.lower() == name), None)
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    if value is None or not str(value).strip():
        return None
    return str(value).strip()


def _bytes(payload: Payload) -> bytes:
    if isinstance(payload, str):
        return payload.encode("utf-8")
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload)
    raise TypeError(
        "Pass the raw request body (bytes or str), not parsed JSON: re-serialising changes the bytes that were signed."
    )
