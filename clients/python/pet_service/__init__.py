"""Official Python client for the Pet Service API (standard library only, Python >= 3.10).

    from pet_service import PetService

    client = PetService(api_key="pet_sk_...", base_url="http://localhost:8080")
    pet = client.pets.create(name="Rex", owner_id=None, species="dog", breed="collie")
"""

from ._api_object import ApiList, ApiObject
from ._client import DEFAULT_BASE_URL, PetService
from ._oauth import OAuth
from ._pagination import Page
from .resources import NOT_GIVEN, Events, Orders, Pets, RequestLogs, Users, WebhookEndpoints
from ._http import RequestOptions, ResponseInfo
from .errors import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    PetServiceError,
    RateLimitError,
    ServerError,
)
from . import webhooks
from .webhooks import WebhookVerificationError

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BASE_URL",
    "NOT_GIVEN",
    "APIConnectionError",
    "APITimeoutError",
    "ApiList",
    "ApiObject",
    "AuthenticationError",
    "ConflictError",
    "Events",
    "InvalidRequestError",
    "NotFoundError",
    "OAuth",
    "Orders",
    "Page",
    "PermissionDeniedError",
    "PetService",
    "PetServiceError",
    "Pets",
    "RateLimitError",
    "RequestLogs",
    "RequestOptions",
    "ResponseInfo",
    "ServerError",
    "Users",
    "WebhookEndpoints",
    "WebhookVerificationError",
    "webhooks",
]
