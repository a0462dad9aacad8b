#!/usr/bin/env python3
"""An independent check of a ppcert attestation: not ppcert's code, not Rust.

Usage: verify-dsse.py ATTESTATION PUBLIC_KEY_PEM BUNDLE_DIR

1. securesystemslib (the Python reference DSSE implementation used by in-toto and TUF)
   verifies the envelope's signature with the SPKI PEM public key;
2. the DSSE pre-authentication encoding is computed here from the specification and the
   Ed25519 signature checked with pyca/cryptography (a second Ed25519 implementation);
3. the payload must be an in-toto Statement v1 whose subjects are exactly the bundle's files
   (every file but the attestation), each with its SHA-256.
Exit 0 and "OK" when all hold; exit 1 naming the first that does not.
"""
import base64
import copy
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_public_key,
)
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def pae(payload_type: bytes, payload: bytes) -> bytes:
    # DSSE v1: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
    return b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type, len(payload), payload)


def main():
    attestation, public_pem, bundle = sys.argv[1:4]
    with open(public_pem, "rb") as f:
        public_key = load_pem_public_key(f.read())
    der = public_key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    keyid = hashlib.sha256(der).hexdigest()
    with open(attestation, "rb") as f:
        document = json.load(f)

    # from_dict consumes what it reads: give it a copy.
    envelope = Envelope.from_dict(copy.deepcopy(document))
    key = SSlibKey.from_crypto(public_key, keyid=keyid)
    try:
        envelope.verify([key], 1)
    except Exception as e:  # VerificationError, or a malformed signature
        fail(f"securesystemslib rejects the envelope: {e}")

    payload = base64.b64decode(document["payload"], validate=True)
    payload_type = document["payloadType"].encode()
    if payload_type != b"application/vnd.in-toto+json":
        fail(f"payloadType {payload_type!r}")
    signatures = [base64.b64decode(s["sig"]) for s in document["signatures"]]
    verified = False
    for signature in signatures:
        try:
            public_key.verify(signature, pae(payload_type, payload))
            verified = True
        except Exception:
            pass
    if not verified:
        fail("no signature verifies over the pre-authentication encoding")

    statement = json.loads(payload)
    if statement.get("_type") != "https://in-toto.io/Statement/v1":
        fail(f"_type {statement.get('_type')!r}")
    subjects = {}
    for subject in statement["subject"]:
        if subject["name"] in subjects:
            fail(f"subject {subject['name']} twice")
        subjects[subject["name"]] = subject["digest"]["sha256"]
    files = sorted(
        name for name in os.listdir(bundle) if name != os.path.basename(attestation)
    )
    if sorted(subjects) != files:
        fail(f"subjects {sorted(subjects)} are not the bundle's files {files}")
    for name in files:
        with open(os.path.join(bundle, name), "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != subjects[name]:
                fail(f"{name} does not match its subject's digest")
    print(f"OK: {len(files)} subjects, signed by {keyid}, verdict {statement['predicate']['verdict']}")


if __name__ == "__main__":
    main()
