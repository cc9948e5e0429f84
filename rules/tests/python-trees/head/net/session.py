from requests.adapters import HTTPAdapter
from urllib3 import Retry

from net.pool import Pool


def adapter():
    # The pool's size is not a retry count, though it shares the line with Retry(...).
    # ok: python/urllib3-retry-total-raised
    return HTTPAdapter(pool=Pool(total=16), max_retries=Retry(total=2, backoff_factor=0.5))


def other_adapter():
    # ruleid: python/urllib3-retry-total-raised
    return HTTPAdapter(pool=Pool(total=4), max_retries=Retry(total=6, backoff_factor=0.5))


def nested():
    return HTTPAdapter(
        max_retries=Retry(
            # ruleid: python/urllib3-retry-total-raised
            total=5,
            backoff_factor=0.5,
        )
    )
