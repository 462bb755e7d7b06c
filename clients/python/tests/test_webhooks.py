"""Webhook signatures (Standard Webhooks): ``pet_service.webhooks.sign`` and ``verify``.

No service needed. The expected signatures below were made by the reference implementation,
the ``standardwebhooks`` npm package (``new Webhook(secret).sign(id, date, body)``); the
repository's test/clients/webhooks-verify.sqlite.test.ts also checks both directions live
against that package.
"""

from __future__ import annotations

import unittest

from pet_service import PetServiceError, WebhookVerificationError, webhooks

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
OTHER_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
MSG_ID = "evt_2VfWkXx3jL0aQ8mN"
TIMESTAMP = 1795478400
BODY = '{"id":"evt_2VfWkXx3jL0aQ8mN","object":"event","type":"pet.created","data":{"object":{"name":"Rëx"}}}'
# What standardwebhooks 1.1.1 answers for BODY, MSG_ID and TIMESTAMP with each secret.
REFERENCE = "v1,K+eiUAcRo+cjpqa5tNSwQ4OmvkiuQTum8uIXzkQo14U="
REFERENCE_OTHER = "v1,DxsFp626mBpqxJnOaegyb0ulLattgg0L2e9e30DjOBw="

HEADERS = {"webhook-id": MSG_ID, "webhook-timestamp": str(TIMESTAMP), "webhook-signature": REFERENCE}


class SignTest(unittest.TestCase):
    def test_signs_as_the_reference_implementation(self) -> None:
        self.assertEqual(webhooks.sign(BODY.encode(), SECRET, msg_id=MSG_ID, timestamp=TIMESTAMP), HEADERS)
        self.assertEqual(webhooks.sign(BODY, SECRET, msg_id=MSG_ID, timestamp=TIMESTAMP), HEADERS)

    def test_signs_with_every_secret_during_a_rotation(self) -> None:
        headers = webhooks.sign(BODY, [SECRET, OTHER_SECRET], msg_id=MSG_ID, timestamp=TIMESTAMP)
        self.assertEqual(headers["webhook-signature"], f"{REFERENCE} {REFERENCE_OTHER}")

    def test_generates_secrets_in_the_service_form(self) -> None:
        secret = webhooks.generate_secret()
        self.assertRegex(secret, r"^whsec_[A-Za-z0-9+/]{43}=$")
        self.assertNotEqual(secret, webhooks.generate_secret())
        self.assertEqual(webhooks.verify(BODY, webhooks.sign(BODY, secret, msg_id=MSG_ID), secret)["type"], "pet.created")


class VerifyTest(unittest.TestCase):
    def verify(self, body: object = BODY, headers: object = None, secret: object = SECRET, now: int = TIMESTAMP):
        return webhooks.verify(body, HEADERS if headers is None else headers, secret, now=now)  # type: ignore[arg-type]

    def refusal(self, **kwargs: object) -> str:
        with self.assertRaises(WebhookVerificationError) as caught:
            self.verify(**kwargs)  # type: ignore[arg-type]
        self.assertIsInstance(caught.exception, PetServiceError)
        self.assertEqual(caught.exception.code, caught.exception.reason)
        return caught.exception.reason

    def test_returns_the_event_for_a_reference_signature(self) -> None:
        self.assertEqual(self.verify()["data"]["object"]["name"], "Rëx")
        self.assertEqual(self.verify(body=BODY.encode())["id"], MSG_ID)

    def test_reads_headers_in_any_case(self) -> None:
        self.assertEqual(self.verify(headers={k.title(): v for k, v in HEADERS.items()})["id"], MSG_ID)

    def test_refuses_a_tampered_body_a_wrong_secret_and_another_id(self) -> None:
        self.assertEqual(self.refusal(body=BODY.replace("Rëx", "Rex")), "no_valid_signature")
        self.assertEqual(self.refusal(secret=OTHER_SECRET), "no_valid_signature")
        self.assertEqual(self.refusal(headers={**HEADERS, "webhook-id": "evt_other"}), "no_valid_signature")
        self.assertEqual(
            self.refusal(headers={**HEADERS, "webhook-signature": REFERENCE.replace("v1,", "v2,")}),
            "no_valid_signature",
        )

    def test_allows_five_minutes_either_way(self) -> None:
        self.assertEqual(self.verify(now=TIMESTAMP + 300)["id"], MSG_ID)
        self.assertEqual(self.verify(now=TIMESTAMP - 300)["id"], MSG_ID)
        self.assertEqual(self.refusal(now=TIMESTAMP + 301), "timestamp_too_old")
        self.assertEqual(self.refusal(now=TIMESTAMP - 301), "timestamp_too_new")
        self.assertEqual(webhooks.verify(BODY, HEADERS, SECRET, now=TIMESTAMP + 3600, tolerance=3600)["id"], MSG_ID)

    def test_accepts_any_matching_entry_and_any_of_several_secrets(self) -> None:
        both = {**HEADERS, "webhook-signature": f"v1,bm90IGl0 {REFERENCE_OTHER}"}
        self.assertEqual(self.verify(headers=both, secret=OTHER_SECRET)["id"], MSG_ID)
        self.assertEqual(self.verify(secret=[OTHER_SECRET, SECRET])["id"], MSG_ID)

    def test_refuses_missing_headers_and_malformed_timestamps(self) -> None:
        unsigned = {k: v for k, v in HEADERS.items() if k != "webhook-signature"}
        self.assertEqual(self.refusal(headers=unsigned), "missing_header")
        self.assertEqual(self.refusal(headers={**HEADERS, "webhook-timestamp": "yesterday"}), "invalid_timestamp")

    def test_refuses_parsed_json_and_malformed_secrets_as_programming_errors(self) -> None:
        with self.assertRaises(TypeError):
            self.verify(body={"id": MSG_ID})
        with self.assertRaises(ValueError):
            self.verify(secret="whsec_")


if __name__ == "__main__":
    unittest.main()
