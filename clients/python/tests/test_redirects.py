"""Credentials never follow a redirect to another origin (two local servers, real HTTP).

A redirect may point anywhere; the API key or OAuth token sent to the service must not be
handed to whatever host the Location names (Fetch's rule, which the TypeScript client gets from
fetch: https://fetch.spec.whatwg.org/#http-redirect-fetch, step 13).
"""

from __future__ import annotations

import http.server
import json
import threading
import unittest
import urllib.request
from typing import Any, Callable, Dict, List

from pet_service import PetService

KEY = "pet_sk_redirecttestkey0000000000000000"


class Server:
    """A local HTTP server that records each request's headers and answers as ``answer`` says."""

    def __init__(self, answer: Callable[[str], tuple]) -> None:
        self.seen: List[Dict[str, str]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def handle_any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                server.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                status, headers, body = answer(self.path)
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = handle_any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


PET = {"id": 1, "object": "pet", "name": "Rex"}


class RedirectTest(unittest.TestCase):
    def server(self, answer: Callable[[str], tuple]) -> Server:
        server = Server(answer)
        self.addCleanup(server.close)
        return server

    def test_drops_the_credentials_when_a_redirect_leads_to_another_origin(self) -> None:
        elsewhere = self.server(lambda path: (200, {}, PET))
        # urllib follows 308 from Python 3.11 on; before, a 308 is an error and nothing is resent.
        followed = (301, 302, 303, 307) + ((308,) if hasattr(urllib.request.HTTPRedirectHandler, "http_error_308") else ())
        for status in followed:
            with self.subTest(status=status):
                elsewhere.seen.clear()
                service = self.server(lambda path, s=status: (s, {"location": elsewhere.url + path}, None))
                client = PetService(api_key=KEY, base_url=service.url, max_retries=0, headers={"Cookie": "a=b"})
                self.assertEqual(client.pets.get(1)["name"], "Rex")
                self.assertIn("authorization", service.seen[0])
                self.assertEqual(len(elsewhere.seen), 1)
                self.assertNotIn("authorization", elsewhere.seen[0])
                self.assertNotIn("cookie", elsewhere.seen[0])

    def test_drops_a_bearer_token_on_a_redirect_to_another_port_of_the_same_host(self) -> None:
        elsewhere = self.server(lambda path: (200, {}, PET))
        service = self.server(lambda path: (307, {"location": elsewhere.url + path}, None))
        client = PetService(base_url=service.url, access_token="token-for-the-service-only", max_retries=0)
        client.request("GET", "/v2/pet/1")
        self.assertEqual(service.seen[0]["authorization"], "Bearer token-for-the-service-only")
        self.assertNotIn("authorization", elsewhere.seen[0])

    def test_keeps_the_credentials_on_a_redirect_within_the_same_origin(self) -> None:
        def answer(path: str) -> tuple:
            return (307, {"location": "/v1/pet/1"}, None) if path == "/old/pet/1" else (200, {}, PET)

        service = self.server(answer)
        client = PetService(api_key=KEY, base_url=service.url, max_retries=0)
        client.request("GET", "/old/pet/1")
        self.assertEqual([s["path"] for s in service.seen], ["/old/pet/1", "/v1/pet/1"])
        self.assertEqual(service.seen[1]["authorization"], service.seen[0]["authorization"])


if __name__ == "__main__":
    unittest.main()
