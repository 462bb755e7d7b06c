"""The keys of the API's objects, for type checkers and readers.

Results are :class:`pet_service.ApiObject` dicts holding exactly these keys (as the service's
OpenAPI document, docs/openapi.json, defines them).
"""

from __future__ import annotations

from typing import List, Literal, Optional, TypedDict

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
    email: Optional[str]
    phone: Optional[str]
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
