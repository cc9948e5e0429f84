"""A client that backs off the way got does by default, for the replay tests;
the URL comes from $RETRYGATE_URL. Standard library only, so it starts fast.

got (sindresorhus/got, `calculateRetryDelay`) waits `2^(attempt-1) s` plus a
fixed `Math.random() * 100` ms of noise: waits of 1, 2, 4 s, each with the
same 0-100 ms window, however long the wait. This client adds the same
0-100 ms to a `Retry-After` too, so that both kinds of scenario show what
that window does.

Usage: got_like_client.py [RETRIES] [BASE_S]
  RETRIES  how many times to retry a 429 or 5xx (default 5)
  BASE_S   the first backoff in seconds without Retry-After (default 1)
Exits 0 on a 2xx answer, 1 otherwise.
"""
import os
import random
import sys
import time
import urllib.error
import urllib.request

url = os.environ["RETRYGATE_URL"] + "/items"
retries = int(sys.argv[1]) if len(sys.argv) > 1 else 5
base = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0

for attempt in range(retries + 1):
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            resp.read()
            print(resp.status)
            sys.exit(0)
    except urllib.error.HTTPError as e:
        status, retry_after = e.code, e.headers.get("Retry-After")
        e.read()
    if attempt == retries or not (status == 429 or status >= 500):
        print(f"gave up: {status}")
        sys.exit(1)
    try:
        wait = float(retry_after)
    except (TypeError, ValueError):
        wait = base * 2**attempt
    time.sleep(wait + random.random() * 0.1)
