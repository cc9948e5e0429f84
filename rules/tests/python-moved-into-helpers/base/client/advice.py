import time


def retry_advice(error):
    # How long to wait before the next retry: the server's word.
    wait = float(error.response.headers["Retry-After"])
    time.sleep(wait)
    return wait


def backoff_advice(error):
    # The same for the upload path's retry.
    wait = float(error.response.headers["Retry-After"])
    time.sleep(wait)
    return wait
