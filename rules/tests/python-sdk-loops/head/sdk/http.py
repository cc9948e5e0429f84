import time

import requests

MAX_RETRY_AFTER = 120


class Transport:
    def send(self, method, url, **kw):
        attempt = 0
        # ruleid: python/retry-loop-bound-widened
        while attempt <= self.max_retries:
            try:
                resp = self.session.request(method, url, **kw)
            # ruleid: python/retry-on-connection-errors-added
            except (requests.Timeout, requests.ConnectionError) as exc:
                attempt += 1
                continue
            if resp.status_code == 429:
                retry_after = float(resp.headers.get("Retry-After", "1"))
                # ruleid: python/retry-after-capped
                if retry_after <= self.max_retry_after:
                    time.sleep(retry_after)
                else:
                    time.sleep(self.backoff(attempt))
            return resp

    def fetch(self, method, url):
        for retry in range(self.max_retries):
            if method not in ("GET", "HEAD"):
                raise ValueError("only idempotent requests are retried")
            try:
                return self.session.request(method, url)
            # ok: python/retry-on-connection-errors-added
            except (requests.Timeout, requests.ConnectionError):
                continue

    def poll(self, url):
        for i in range(10):
            # ok: python/retry-loop-bound-widened
            if i >= self.max_attempts:
                raise RuntimeError("gave up")
            time.sleep(1)

    def delay(self, retry_after):
        # ok: python/retry-after-capped
        if retry_after <= MAX_RETRY_AFTER:
            return retry_after
        return self.backoff()

    def page(self, items, limit):
        for n in range(3):
            # ok: python/retry-loop-bound-widened
            if n <= limit:
                yield items[n]
