from requests.adapters import HTTPAdapter
from urllib3 import Retry

from net.pool import Pool


def adapter():
    return HTTPAdapter(pool=Pool(total=4), max_retries=Retry(total=2, backoff_factor=0.5))


def other_adapter():
    return HTTPAdapter(pool=Pool(total=4), max_retries=Retry(total=2, backoff_factor=0.5))


def nested():
    return HTTPAdapter(
        max_retries=Retry(
            total=2,
            backoff_factor=0.5,
        )
    )
