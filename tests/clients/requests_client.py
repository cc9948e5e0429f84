"""A requests client with HTTPAdapter(max_retries=3), for the replay tests.

GETs $RETRYGATE_URL/items; with `json`, parses the 2xx body as JSON and
checks it, as application code does. Exits 0 on a 2xx answer, 1 otherwise.
"""
import os
import sys

import requests
from requests.adapters import HTTPAdapter

session = requests.Session()
session.mount("http://", HTTPAdapter(max_retries=3))
try:
    resp = session.get(os.environ["RETRYGATE_URL"] + "/items", timeout=30)
except requests.exceptions.RetryError as e:
    print(f"gave up: {e}")
    sys.exit(1)
print(resp.status_code)
if resp.ok and sys.argv[1:] == ["json"]:
    body = resp.json()  # raises on a body that is not JSON
    print(body)
    sys.exit(0 if body.get("ok") is True else 1)
sys.exit(0 if resp.ok else 1)
