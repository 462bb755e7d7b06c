"""``client.events`` and ``client.webhook_endpoints`` against a local server speaking the API's
contract (no service needed): each operation's method, path, query and body, and pagination.

The same operations against the real service are in the repository's
test/clients/events-live.sqlite.test.ts.
"""

from __future__ import annotations

import http.server
import json
import threading
import unittest
import urllib.parse
from typing import Any, Dict, List, Tuple

from pet_service import PetService

KEY = "pet_sk_contracttestkey000000000000000"

ENDPOINT = {
    "id": "we_1",
    "object": "webhook_endpoint",
    "url": "https://example.com/hook",
    "enabled_events": ["pet.*"],
    "description": None,
    "status": "enabled",
    "disabled_reason": None,
    "created_at": "2026-11-24T00:00:00.000Z",
    "updated_at": "2026-11-24T00:00:00.000Z",
}


def event(n: int) -> Dict[str, Any]:
    return {
        "id": f"evt_{n:04d}",
        "object": "event",
        "type": "pet.created",
        "created_at": f"2026-11-24T00:00:{n:02d}.000Z",
        "data": {"object": {"id": n, "object": "pet", "name": f"Pet {n}"}},
    }


EVENTS = [event(n) for n in (5, 4, 3, 2, 1)]


class ContractServer:
    """Answers as the contract says, and records (method, path, query, body) of each request."""

    def __init__(self) -> None:
        self.seen: List[Tuple[str, str, Dict[str, List[str]], Any]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def handle_any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                server.seen.append((self.command, url.path, query, json.loads(raw) if raw else None))
                status, body = server.answer(self.command, url.path, query)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = handle_any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, method: str, path: str, query: Dict[str, List[str]]) -> Tuple[int, Any]:
        if path == "/v1/event":
            after = query.get("starting_after", [None])[0]
            start = 0 if after is None else [e["id"] for e in EVENTS].index(after) + 1
            limit = int(query.get("limit", ["10"])[0])
            data = EVENTS[start : start + limit]
            return 200, {"object": "list", "data": data, "has_more": start + limit < len(EVENTS), "url": path}
        if path.startswith("/v1/event/"):
            return 200, event(1)
        if path.endswith("/delivery") or (method == "GET" and path == "/v1/webhook_endpoint"):
            return 200, {"object": "list", "data": [ENDPOINT], "has_more": False, "url": path}
        if path.endswith(("/resend", "/test")):
            return 202, {}
        if method == "DELETE":
            return 200, {"id": "we_1", "object": "webhook_endpoint", "deleted": True}
        return (201 if method == "POST" and path == "/v1/webhook_endpoint" else 200), {**ENDPOINT, "secret": "whsec_x"}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class EventsContractTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = ContractServer()
        self.addCleanup(self.server.close)
        self.client = PetService(api_key=KEY, base_url=self.server.url, max_retries=0)

    def test_lists_events_across_pages_with_the_filters_as_the_api_names_them(self) -> None:
        page = self.client.events.list(limit=2, type=["pet.*", "user.deleted"], object_id=7, created_gte=1795478400)
        self.assertEqual([e["id"] for e in page.data], ["evt_0005", "evt_0004"])
        self.assertEqual([e.id for e in page], [e["id"] for e in EVENTS])
        method, path, query, _ = self.server.seen[0]
        self.assertEqual((method, path), ("GET", "/v1/event"))
        self.assertEqual(query["type"], ["pet.*", "user.deleted"])
        self.assertEqual(query["object_id"], ["7"])
        self.assertEqual(query["created[gte]"], ["1795478400"])
        self.assertNotIn("created[lte]", query)
        self.assertEqual(self.server.seen[1][2]["starting_after"], ["evt_0004"])

    def test_gets_one_event(self) -> None:
        got = self.client.events.get("evt_0001")
        self.assertEqual(got["data"]["object"]["name"], "Pet 1")
        self.assertEqual(self.server.seen[0][:2], ("GET", "/v1/event/evt_0001"))

    def test_sends_each_endpoint_operation_to_its_route(self) -> None:
        we = self.client.webhook_endpoints
        created = we.create(url=ENDPOINT["url"], enabled_events=["pet.*"], description="mine")
        self.assertEqual(created.secret, "whsec_x")
        we.get("we_1")
        we.update("we_1", status="disabled", description=None)
        self.assertEqual([e.id for e in we.list(limit=5)], ["we_1"])
        we.rotate_secret("we_1", expire_current_in_hours=0)
        we.list_deliveries("we_1", event_id="evt_1", status="failed")
        we.resend("we_1", event_id="evt_1")
        we.send_test("we_1")
        self.assertTrue(we.delete("we_1").deleted)
        self.assertEqual(
            [(m, p, {k: v[0] for k, v in q.items()}, b) for m, p, q, b in self.server.seen],
            [
                ("POST", "/v1/webhook_endpoint", {}, {"url": ENDPOINT["url"], "enabled_events": ["pet.*"], "description": "mine"}),
                ("GET", "/v1/webhook_endpoint/we_1", {}, None),
                ("PATCH", "/v1/webhook_endpoint/we_1", {}, {"description": None, "status": "disabled"}),
                ("GET", "/v1/webhook_endpoint", {"limit": "5"}, None),
                ("POST", "/v1/webhook_endpoint/we_1/rotate_secret", {}, {"expire_current_in_hours": 0}),
                ("GET", "/v1/webhook_endpoint/we_1/delivery", {"event_id": "evt_1", "status": "failed"}, None),
                ("POST", "/v1/webhook_endpoint/we_1/resend", {}, {"event_id": "evt_1"}),
                ("POST", "/v1/webhook_endpoint/we_1/test", {}, None),
                ("DELETE", "/v1/webhook_endpoint/we_1", {}, None),
            ],
        )


if __name__ == "__main__":
    unittest.main()
