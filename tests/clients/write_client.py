"""A POSTing client for the write-loss scenarios, built on requests + urllib3.

Usage: write_client.py MODE
  no-key   retries the POST (urllib3 Retry(allowed_methods=None): 502, resets
           and read timeouts) without an Idempotency-Key
  key      the same retries, with one Idempotency-Key sent on every attempt
  park     urllib3's default Retry, which never re-sends a POST: an
           unanswered write is reported as "maybe created" and the client
           exits 1 for a person to check
Every mode parses the 2xx body as JSON. The read timeout is 2 s, so a held
answer (lost-response) times out. Exits 0 on a 2xx, 1 otherwise.
"""
import os
import sys
import uuid

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

url = os.environ["RETRYGATE_URL"] + "/orders"
mode = sys.argv[1] if len(sys.argv) > 1 else "park"

session = requests.Session()
headers = {}
if mode in ("no-key", "key"):
    retry = Retry(total=3, allowed_methods=None, status_forcelist=[502], backoff_factor=0.2)
    session.mount("http://", HTTPAdapter(max_retries=retry))
    if mode == "key":
        headers["Idempotency-Key"] = str(uuid.uuid4())
elif mode != "park":
    sys.exit(f"unknown mode {mode!r}")

try:
    resp = session.post(url, json={"item": 1}, headers=headers, timeout=(5, 2))
except requests.exceptions.RequestException as e:
    print(f"order maybe created, not re-sent: {type(e).__name__}")
    sys.exit(1)
if not resp.ok:
    print(f"order maybe created, not re-sent: HTTP {resp.status_code}")
    sys.exit(1)
print(resp.json())
sys.exit(0)
