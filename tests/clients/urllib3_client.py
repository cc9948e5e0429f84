"""A urllib3 client for the replay tests; the URL comes from $RETRYGATE_URL.

Usage: urllib3_client.py MODE
  default            PoolManager() with its default Retry(3): GET
  ignore-retry-after Retry(3, status_forcelist=[429], respect_retry_after_header=False,
                     backoff_factor=0.5, backoff_jitter=0.5): GET
  post-default       default PoolManager, POST (urllib3 does not retry POST by default)
  post-any-method    Retry(3, allowed_methods=None): POST is retried too
  jitter             Retry(3, status_forcelist=[429], backoff_factor=0.5, backoff_jitter=0.5):
                     GET; without Retry-After it waits 0 s, then 1 s, 2 s plus up to 0.5 s
Exits 0 on a 2xx answer, 1 otherwise.
"""
import os
import sys

import urllib3
from urllib3.util.retry import Retry

url = os.environ["RETRYGATE_URL"]
mode = sys.argv[1] if len(sys.argv) > 1 else "default"

if mode == "default":
    http, method, path, retries = urllib3.PoolManager(), "GET", "/items", None
elif mode == "ignore-retry-after":
    retries = Retry(total=3, status_forcelist=[429], respect_retry_after_header=False,
                    backoff_factor=0.5, backoff_jitter=0.5)
    http, method, path = urllib3.PoolManager(retries=retries), "GET", "/items"
elif mode == "post-default":
    http, method, path, retries = urllib3.PoolManager(), "POST", "/orders", None
elif mode == "post-any-method":
    retries = Retry(total=3, allowed_methods=None)
    http, method, path = urllib3.PoolManager(retries=retries), "POST", "/orders"
elif mode == "jitter":
    retries = Retry(total=3, status_forcelist=[429], backoff_factor=0.5, backoff_jitter=0.5)
    http, method, path = urllib3.PoolManager(retries=retries), "GET", "/items"
else:
    sys.exit(f"unknown mode {mode!r}")

try:
    resp = http.request(method, url + path, body=b"item=1" if method == "POST" else None)
except urllib3.exceptions.MaxRetryError as e:
    print(f"gave up: {e.reason}")
    sys.exit(1)
print(resp.status)
sys.exit(0 if 200 <= resp.status < 300 else 1)
