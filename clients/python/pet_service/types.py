"""The keys of the API's objects, for type checkers and readers.

Results are :class:`pet_service.ApiObject` dicts holding exactly these keys (as the service's
OpenAPI document, docs/openapi.json, defines them).
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict

PetStatus = Literal["available", "pending", "sold"]


class Category(TypedDict, total=False):
    id: int
    name: str


class Pet(TypedDict):
    """A pet, v1 representation (``client.pets.*``)."""

    id: int
    object: Literal["pet"]
    name: str
    owner_id: Optional[str]
    species: Optional[str]
    breed: Optional[str]
    status: PetStatus
    photo_urls: List[str]
    category: Optional[Category]
    tags: List[Category]
    #: Increases on every change; the ETag.
    version: int
    created_at: str
    updated_at: str


class User(TypedDict):
    """A pet owner in your account (``client.users.*``)."""

    id: str
    object: Literal["user"]
    name: str
    #: Unique in the account; the user is ``/v2/user/{username}`` on v2.
    username: Optional[str]
    email: Optional[str]
    phone: Optional[str]
    version: int
    created_at: str
    updated_at: str


OrderStatus = Literal["placed", "approved", "delivered"]


class Order(TypedDict):
    """A store order for a pet of your account (``client.orders.*``)."""

    id: int
    object: Literal["order"]
    pet_id: int
    quantity: int
    #: RFC 3339 date-time as sent, or None.
    ship_date: Optional[str]
    status: OrderStatus
    complete: bool
    version: int
    created_at: str
    updated_at: str


class Deleted(TypedDict):
    """What ``delete`` answers."""

    id: object
    object: str
    deleted: Literal[True]


class PetstorePet(TypedDict, total=False):
    """A pet in the Swagger Petstore v2 shape, as ``client.pets.update({...})`` sends it."""

    id: int
    name: str
    photoUrls: List[str]
    category: Category
    tags: List[Category]
    status: PetStatus
    ownerId: str
    species: str
    breed: str


class TokenResponse(TypedDict, total=False):
    """The token endpoint's answer (RFC 6749 §5.1)."""

    access_token: str
    token_type: str
    expires_in: int
    scope: str


class Account(TypedDict):
    """The account an API key belongs to (``client.account.retrieve()``)."""

    id: str
    object: Literal["account"]
    #: ``sandbox`` for a sandbox's ``pet_sk_test_`` keys, else ``live``.
    mode: Literal["live", "sandbox"]
    #: For a sandbox, the live account it belongs to.
    live_account_id: Optional[str]
    created_at: str


class EventData(TypedDict, total=False):
    #: The resource as v1 shows it (after the change; as it was, for ``*.deleted``).
    object: Dict[str, Any]
    #: Only on ``*.updated``: the fields that changed, with their old values.
    previous_attributes: Dict[str, Any]


class Event(TypedDict):
    """One change in your account (``client.events.*``); also a webhook's body."""

    id: str
    object: Literal["event"]
    #: ``pet.created|updated|deleted``, ``user.created|updated|deleted``,
    #: ``order.created|updated|deleted``, or ``webhook.test``.
    type: str
    created_at: str
    data: EventData


class WebhookEndpoint(TypedDict, total=False):
    """Where events are POSTed (``client.webhook_endpoints.*``). ``secret`` only in the answers of
    ``create`` and ``rotate_secret``."""

    id: str
    object: Literal["webhook_endpoint"]
    url: str
    enabled_events: List[str]
    description: Optional[str]
    status: Literal["enabled", "disabled"]
    disabled_reason: Optional[str]
    created_at: str
    updated_at: str
    secret: str


class WebhookDelivery(TypedDict):
    """One attempt to deliver one event to one endpoint (``list_deliveries``)."""

    id: str
    object: Literal["webhook_delivery"]
    endpoint_id: str
    event_id: str
    event_type: str
    attempt: int
    status: Literal["pending", "succeeded", "failed", "retrying"]
    attempted_at: Optional[str]
    response_status: Optional[int]
    latency_ms: Optional[int]
    response_body_excerpt: Optional[str]
    error: Optional[str]
    next_attempt_at: Optional[str]
