import time

import requests

MAX_RETRY_AFTER = 60


class Transport:
    def send(self, method, url, **kw):
        attempt = 0
        while attempt < self.max_retries:
            try:
                resp = self.session.request(method, url, **kw)
            except (requests.Timeout,) as exc:
                attempt += 1
                continue
            if resp.status_code == 429:
                retry_after = float(resp.headers.get("Retry-After", "1"))
                time.sleep(retry_after)
            return resp

    def fetch(self, method, url):
        for retry in range(self.max_retries):
            if method not in ("GET", "HEAD"):
                raise ValueError("only idempotent requests are retried")
            try:
                return self.session.request(method, url)
            except requests.Timeout:
                continue

    def poll(self, url):
        for i in range(10):
            if i >= self.max_attempts:
                raise RuntimeError("gave up")
            time.sleep(1)

    def delay(self, retry_after):
        if retry_after <= MAX_RETRY_AFTER:
            return retry_after
        return self.backoff()

    def page(self, items, limit):
        for n in range(3):
            if n < limit:
                yield items[n]
