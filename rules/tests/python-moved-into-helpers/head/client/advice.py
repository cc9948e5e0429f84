import time

from .runtime import server_delay, default_delay


def retry_advice(error):
    # How long to wait before the next retry: the server's word, read by
    # a helper the two retries now share.
    # ok: python/retry-after-removed
    wait = server_delay(error)
    time.sleep(wait)
    return wait


def backoff_advice(error):
    # The same for the upload path's retry: the helper it calls now does
    # not read the header, so the header is no longer read.
    # ruleid: python/retry-after-removed
    wait = default_delay(error)
    time.sleep(wait)
    return wait
