"""The Python client against a live Pet Service (real HTTP).

The repository's vitest suite (test/clients/python.sqlite.test.ts) starts the service and runs
``python3 -m unittest`` here with:

    PET_SERVICE_URL                 the service
    PET_SERVICE_API_KEY             an unrestricted API key
    PET_SERVICE_READONLY_API_KEY    a key restricted to read:pets (for PermissionDeniedError)
    PET_SERVICE_CLIENT_ID/SECRET    an OAuth client with write:pets (the OAuth tests skip without)

Misbehaviour (5xx, 429, resets, slow answers) comes from a local proxy in front of the service.
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import threading
import time
import unittest
import urllib.parse
import uuid
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

from pet_service import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    PetService,
    PetServiceError,
    RateLimitError,
    ServerError,
)

URL = os.environ.get("PET_SERVICE_URL", "")
API_KEY = os.environ.get("PET_SERVICE_API_KEY", "")
READONLY_KEY = os.environ.get("PET_SERVICE_READONLY_API_KEY", "")
CLIENT_ID = os.environ.get("PET_SERVICE_CLIENT_ID", "")
CLIENT_SECRET = os.environ.get("PET_SERVICE_CLIENT_SECRET", "")

# A plan for the n-th request: ("forward", delay_s) | ("answer", status, headers, body) | ("reset",)
Plan = Tuple[Any, ...]


class Proxy:
    """A local HTTP server in front of the service that misbehaves as ``plan(n)`` says."""

    def __init__(self, plan: Callable[[int], Plan]) -> None:
        self.seen: List[Dict[str, str]] = []
        proxy = self
        target = urllib.parse.urlsplit(URL)

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def handle_any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with lock:
                    n = len(proxy.seen)
                    proxy.seen.append({"method": self.command, "path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                step = plan(n)
                if step[0] == "reset":
                    self.close_connection = True
                    self.connection.close()
                    return
                if step[0] == "answer":
                    _, status, headers, payload = step
                    data = json.dumps(payload).encode() if payload is not None else b""
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("content-type", "application/problem+json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                connection.request(self.command, self.path, body=body or None, headers=headers)
                response = connection.getresponse()
                data = response.read()
                if step[1]:
                    time.sleep(step[1])
                try:
                    self.send_response(response.status)
                    for name, value in response.getheaders():
                        if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                            self.send_header(name, value)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up waiting (a timeout test)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

        lock = threading.Lock()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def unavailable(status: int = 503, headers: Optional[Dict[str, str]] = None) -> Plan:
    body = {"status": status, "code": "service_unavailable", "detail": "try again", "request_id": "req_proxy"}
    return ("answer", status, headers or {}, body)


FORWARD: Plan = ("forward", 0)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@unittest.skipUnless(URL and API_KEY, "needs PET_SERVICE_URL and PET_SERVICE_API_KEY (run through npm test)")
class LiveServiceTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = PetService(api_key=API_KEY, base_url=URL)

    def proxied(self, plan: Callable[[int], Plan], **options: Any) -> Tuple[PetService, Proxy]:
        proxy = Proxy(plan)
        self.addCleanup(proxy.close)
        return PetService(api_key=API_KEY, base_url=proxy.url, **options), proxy

    # --- pets ---------------------------------------------------------------------------

    def test_creates_a_pet_with_name_owner_id_species_and_breed(self) -> None:
        owner = self.client.users.create(name="Ann", email="ann@example.com")
        pet = self.client.pets.create(name="Rex", owner_id=owner["id"], species="dog", breed="collie")
        self.assertEqual(pet["name"], "Rex")
        self.assertEqual(pet["owner_id"], owner["id"])
        self.assertEqual((pet.species, pet.breed, pet.status), ("dog", "collie", "available"))
        self.assertGreater(pet["id"], 0)
        self.assertTrue(pet.request_id and pet.request_id.startswith("req_"))
        self.assertEqual(pet.last_response.status, 201)
        self.assertEqual(json.loads(json.dumps(pet))["name"], "Rex")

    def test_gets_updates_and_deletes_a_pet(self) -> None:
        created = self.client.pets.create(name="Tom", species="cat")
        fetched = self.client.pets.get(created["id"])
        self.assertEqual(dict(fetched), dict(created))
        updated = self.client.pets.update(
            created["id"], name="Thomas", species=None, breed="tabby", if_match=fetched.last_response.etag
        )
        self.assertEqual((updated["name"], updated["species"], updated["breed"], updated["version"]), ("Thomas", None, "tabby", 2))
        with self.assertRaises(ConflictError) as stale:
            self.client.pets.update(created["id"], name="Tommy", if_match='"1"')
        self.assertEqual((stale.exception.status, stale.exception.code), (412, "precondition_failed"))
        deleted = self.client.pets.delete(created["id"])
        self.assertEqual((deleted["id"], deleted["deleted"]), (created["id"], True))
        with self.assertRaises(NotFoundError):
            self.client.pets.get(created["id"])

    def test_lists_one_page_and_iterates_over_every_page(self) -> None:
        species = unique("py-list")
        ids = [self.client.pets.create(name=f"Pet {i}", species=species)["id"] for i in range(7)]
        page = self.client.pets.list(species=species, limit=3)
        self.assertEqual([p["id"] for p in page.data], ids[::-1][:3])
        self.assertTrue(page.has_more)
        self.assertTrue(page.request_id)
        self.assertEqual([p["id"] for p in page], ids[::-1])
        self.assertEqual([p["id"] for p in self.client.pets.list(species=species, limit=3, starting_after=ids[4])], ids[:4][::-1])
        self.assertEqual(page.to_dict()["object"], "list")

    # --- users --------------------------------------------------------------------------

    def test_manages_users_and_refuses_to_delete_an_owner(self) -> None:
        email = f"{unique('bob')}@example.com"
        username = unique("bob")
        user = self.client.users.create(name="Bob", username=username, email=email, phone="+44 20 7946 0000")
        self.assertTrue(user["id"].startswith("usr_"))
        self.assertEqual(user["username"], username)
        with self.assertRaises(ConflictError) as taken:
            self.client.users.create(name="Other Bob", username=username)
        self.assertEqual(taken.exception.code, "username_taken")
        self.assertEqual(dict(self.client.users.get(user["id"])), dict(user))
        self.assertIsNone(self.client.users.update(user["id"], phone=None)["phone"])
        self.assertEqual([u["id"] for u in self.client.users.list(email=email)], [user["id"]])
        pet = self.client.pets.create(name="Rex", owner_id=user["id"])
        with self.assertRaises(ConflictError) as refused:
            self.client.users.delete(user["id"])
        self.assertEqual(refused.exception.code, "user_has_pets")
        self.client.pets.delete(pet["id"])
        self.assertTrue(self.client.users.delete(user["id"])["deleted"])

    # --- orders -------------------------------------------------------------------------

    def test_manages_orders_of_its_own_pets(self) -> None:
        pet = self.client.pets.create(name="Rex")
        order = self.client.orders.create(pet_id=pet["id"], quantity=2, ship_date="2026-12-24T18:00:00Z")
        self.assertEqual(
            (order["object"], order["pet_id"], order["quantity"], order["status"], order["complete"]),
            ("order", pet["id"], 2, "placed", False),
        )
        self.assertEqual(dict(self.client.orders.get(order["id"])), dict(order))
        updated = self.client.orders.update(order["id"], status="delivered", complete=True, ship_date=None)
        self.assertEqual((updated["status"], updated["complete"], updated["ship_date"]), ("delivered", True, None))
        second = self.client.orders.create(pet_id=pet["id"])
        self.assertEqual([o["id"] for o in self.client.orders.list(pet_id=pet["id"], limit=1)], [second["id"], order["id"]])
        with self.assertRaises(InvalidRequestError) as refused:
            self.client.orders.create(pet_id=pet["id"] + 1_000_000)
        self.assertEqual((refused.exception.code, refused.exception.param), ("order_pet_not_found", "pet_id"))
        self.assertTrue(self.client.orders.delete(order["id"])["deleted"])
        with self.assertRaises(NotFoundError):
            self.client.orders.get(order["id"])

    # --- request logs -------------------------------------------------------------------

    def test_finds_a_failed_request_in_the_request_logs_by_its_request_id(self) -> None:
        with self.assertRaises(InvalidRequestError) as caught:
            self.client.pets.create(name="")
        request_id = caught.exception.request_id
        # Entries are written in batches, off the request path: poll until it is there.
        deadline = time.monotonic() + 10
        found = []
        while not found and time.monotonic() < deadline:
            found = self.client.request_logs.list(request_id=request_id, status_class="4xx").data
            if not found:
                time.sleep(0.1)
        self.assertEqual(len(found), 1)
        entry = self.client.request_logs.get(found[0]["id"])
        self.assertEqual((entry["method"], entry["path"], entry["status"]), ("POST", "/v1/pet", 400))
        self.assertEqual(entry["error_code"], "parameter_invalid")
        self.assertEqual(json.loads(entry["request_body"]), {"name": ""})
        self.assertEqual(entry["request_headers"]["authorization"], "***")
        with self.assertRaises(NotFoundError):
            self.client.request_logs.get("rlog_missing")

    # --- errors -------------------------------------------------------------------------

    def test_invalid_request_error_names_the_parameter(self) -> None:
        with self.assertRaises(InvalidRequestError) as caught:
            self.client.pets.create(name="")
        error = caught.exception
        self.assertIsInstance(error, PetServiceError)
        self.assertEqual((error.status, error.code, error.param), (400, "parameter_invalid", "name"))
        self.assertIn("name", error.detail or "")
        self.assertTrue(error.request_id and error.request_id.startswith("req_"))

    def test_authentication_error_for_a_missing_or_unknown_key(self) -> None:
        with self.assertRaises(AuthenticationError) as missing:
            PetService(base_url=URL).pets.list()
        self.assertEqual(missing.exception.code, "api_key_missing")
        with self.assertRaises(AuthenticationError) as unknown:
            PetService(api_key="pet_sk_not_a_real_key", base_url=URL).pets.get(1)
        self.assertEqual((unknown.exception.status, unknown.exception.code), (401, "api_key_invalid"))

    @unittest.skipUnless(READONLY_KEY, "needs PET_SERVICE_READONLY_API_KEY")
    def test_permission_denied_error_when_the_key_lacks_the_scope(self) -> None:
        limited = PetService(api_key=READONLY_KEY, base_url=URL)
        limited.pets.list()
        with self.assertRaises(PermissionDeniedError) as caught:
            limited.pets.create(name="Rex")
        self.assertEqual((caught.exception.status, caught.exception.code), (403, "insufficient_scope"))

    def test_not_found_and_conflict_errors(self) -> None:
        with self.assertRaises(NotFoundError) as missing:
            self.client.pets.get(987654)
        self.assertEqual(missing.exception.code, "pet_not_found")
        sold = self.client.pets.create(name="Sold", status="sold")
        with self.assertRaises(ConflictError) as conflict:
            self.client.pets.update(sold["id"], status="available")
        self.assertEqual((conflict.exception.status, conflict.exception.code), (409, "invalid_status_transition"))

    def test_rate_limit_error_carries_retry_after(self) -> None:
        client, proxy = self.proxied(lambda n: ("answer", 429, {"retry-after": "7"}, {"status": 429, "code": "rate_limited"}), max_retries=0)
        with self.assertRaises(RateLimitError) as caught:
            client.pets.list()
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("rate_limited", 7.0))
        self.assertEqual(len(proxy.seen), 1)

    def test_server_error_after_the_retries_are_used_up(self) -> None:
        client, proxy = self.proxied(lambda n: unavailable(500), max_retries=2)
        with self.assertRaises(ServerError) as caught:
            client.pets.list()
        self.assertEqual(caught.exception.status, 500)
        self.assertEqual(len(proxy.seen), 3)

    def test_connection_error_when_nothing_listens(self) -> None:
        proxy = Proxy(lambda n: FORWARD)
        url = proxy.url
        proxy.close()
        with self.assertRaises(APIConnectionError) as caught:
            PetService(api_key=API_KEY, base_url=url, max_retries=1).pets.list()
        self.assertNotIsInstance(caught.exception, APITimeoutError)
        self.assertIsNone(caught.exception.status)

    def test_timeout_error_when_the_answer_is_too_slow(self) -> None:
        client, _ = self.proxied(lambda n: ("forward", 0.6), timeout=0.2, max_retries=0)
        with self.assertRaises(APITimeoutError):
            client.pets.list()
        # A per-call timeout overrides the client's.
        self.assertEqual(client.pets.list(timeout=5).object, "list")

    # --- retries ------------------------------------------------------------------------

    def test_a_create_that_fails_twice_then_succeeds_creates_exactly_one_pet(self) -> None:
        species = unique("py-retry")
        client, proxy = self.proxied(lambda n: unavailable(503) if n < 2 else FORWARD)
        pet = client.pets.create(name="Rex", species=species)
        self.assertEqual(len(proxy.seen), 3)
        keys = {r.get("idempotency-key") for r in proxy.seen}
        self.assertEqual(len(keys), 1)
        self.assertIsNotNone(keys.pop())
        self.assertEqual([p["id"] for p in self.client.pets.list(species=species)], [pet["id"]])

    def test_a_create_whose_answer_was_lost_is_replayed_not_repeated(self) -> None:
        species = unique("py-lost")
        client, proxy = self.proxied(lambda n: ("forward", 0.6) if n == 0 else FORWARD, timeout=0.2)
        pet = client.pets.create(name="Once", species=species)
        self.assertGreaterEqual(len(proxy.seen), 2)
        self.assertEqual([p["id"] for p in self.client.pets.list(species=species)], [pet["id"]])

    def test_honours_retry_after_on_429(self) -> None:
        client, proxy = self.proxied(lambda n: ("answer", 429, {"retry-after": "1"}, {"code": "rate_limited"}) if n == 0 else FORWARD)
        started = time.monotonic()
        client.pets.list()
        self.assertGreaterEqual(time.monotonic() - started, 0.9)
        self.assertEqual(len(proxy.seen), 2)

    def test_retries_409_in_progress_but_never_resends_a_patch_after_a_lost_connection(self) -> None:
        in_progress = ("answer", 409, {"retry-after": "0"}, {"code": "idempotency_request_in_progress"})
        client, proxy = self.proxied(lambda n: in_progress if n == 0 else ("reset",) if n == 2 else FORWARD)
        pet = client.pets.create(name="Rex")
        self.assertEqual(len(proxy.seen), 2)
        with self.assertRaises(APIConnectionError):
            client.pets.update(pet["id"], name="Max")
        self.assertEqual(len(proxy.seen), 3)
        self.assertEqual(self.client.pets.get(pet["id"])["name"], "Rex")

    # --- OAuth --------------------------------------------------------------------------

    @unittest.skipUnless(CLIENT_ID and CLIENT_SECRET, "needs an OAuth client (PET_SERVICE_CLIENT_ID/SECRET)")
    def test_replaces_a_pet_through_v2_with_a_client_credentials_token(self) -> None:
        pet = self.client.pets.create(name="Rex", species="dog")
        oauth = PetService(base_url=URL, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, scope="write:pets")
        token = oauth.oauth.token()
        self.assertTrue(token["access_token"])
        self.assertIs(oauth.oauth.token(), token)  # cached until shortly before it expires
        updated = oauth.pets.replace({"id": pet["id"], "name": "Rex II", "photoUrls": ["https://example.com/rex.jpg"], "status": "pending"})
        self.assertEqual((updated["name"], updated["photoUrls"], updated["status"]), ("Rex II", ["https://example.com/rex.jpg"], "pending"))
        self.assertEqual(self.client.pets.get(pet["id"])["name"], "Rex II")

    @unittest.skipUnless(CLIENT_ID and CLIENT_SECRET, "needs an OAuth client (PET_SERVICE_CLIENT_ID/SECRET)")
    def test_update_with_a_petstore_pet_still_replaces_it_with_a_deprecation_warning(self) -> None:
        pet = self.client.pets.create(name="Old")
        oauth = PetService(base_url=URL, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, scope="write:pets")
        with self.assertWarns(DeprecationWarning) as caught:
            updated = oauth.pets.update({"id": pet["id"], "name": "Old II", "photoUrls": []})
        self.assertEqual(
            str(caught.warning), "pets.update(pet) is deprecated and will be removed in 0.3.0; use pets.replace(pet)."
        )
        self.assertEqual(caught.filename, __file__)  # points at the caller's line
        self.assertEqual((updated["id"], updated["name"]), (pet["id"], "Old II"))
        with warnings.catch_warnings(record=True) as v1:
            warnings.simplefilter("always")
            self.client.pets.update(pet["id"], species="cat")
        self.assertEqual(v1, [])  # the v1 shape is not deprecated
        stored = self.client.pets.get(pet["id"])
        self.assertEqual((stored["name"], stored["species"]), ("Old II", "cat"))

    @unittest.skipUnless(CLIENT_ID and CLIENT_SECRET, "needs an OAuth client (PET_SERVICE_CLIENT_ID/SECRET)")
    def test_request_reaches_other_operations_with_the_same_credentials(self) -> None:
        oauth = PetService(base_url=URL, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, scope="read:pets")
        species = unique("py-v2")
        pet = self.client.pets.create(name="Found", species=species, status="sold")
        found = oauth.request("GET", "/v2/pet/findByStatus", query={"status": "sold"})
        self.assertIn(pet["id"], [p["id"] for p in found])
        self.assertTrue(found.request_id)

    @unittest.skipUnless(CLIENT_ID, "needs an OAuth client (PET_SERVICE_CLIENT_ID)")
    def test_a_wrong_client_secret_is_an_authentication_error(self) -> None:
        with self.assertRaises(AuthenticationError) as caught:
            PetService(base_url=URL, client_id=CLIENT_ID, client_secret="wrong").oauth.token()
        self.assertEqual(caught.exception.code, "invalid_client")


if __name__ == "__main__":
    unittest.main()
