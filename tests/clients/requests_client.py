"""A requests client with HTTPAdapter(max_retries=3), for the replay tests.

GETs $RETRYGATE_URL/items; exits 0 on a 2xx answer, 1 otherwise.
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
sys.exit(0 if resp.ok else 1)
