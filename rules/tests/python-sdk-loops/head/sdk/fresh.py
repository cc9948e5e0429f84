"""A client written in this change: there was no behaviour to narrow or widen."""
import time

import requests


def send(session, url, retry_after_max=60):
    for retry in range(3):
        try:
            resp = session.post(url)
        # ok: python/retry-on-connection-errors-added
        except requests.ConnectionError:
            continue
        retry_after = float(resp.headers.get("Retry-After", "1"))
        # ok: python/retry-after-capped
        if retry_after <= retry_after_max:
            time.sleep(retry_after)
        return resp
