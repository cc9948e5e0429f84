"""A tenacity client: wait_random_exponential(multiplier=0.5, max=10), up to 5
attempts, retrying any 429/503 (tenacity knows nothing of Retry-After).

Usage: tenacity_client.py [GET|POST]; exits 0 on a 2xx answer, 1 otherwise.
"""
import os
import sys
import urllib.error
import urllib.request

from tenacity import RetryError, retry, retry_if_exception, stop_after_attempt, wait_random_exponential

url = os.environ["RETRYGATE_URL"]
method = sys.argv[1] if len(sys.argv) > 1 else "GET"


def transient(e):
    return isinstance(e, urllib.error.HTTPError) and e.code in (429, 503)


@retry(wait=wait_random_exponential(multiplier=0.5, max=10), stop=stop_after_attempt(5),
       retry=retry_if_exception(transient))
def call():
    data = b"item=1" if method == "POST" else None
    req = urllib.request.Request(url + ("/orders" if method == "POST" else "/items"), data=data, method=method)
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status


try:
    print(call())
except (RetryError, urllib.error.HTTPError) as e:
    print(f"gave up: {e}")
    sys.exit(1)
