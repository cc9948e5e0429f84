from urllib3.util import Retry

A = Retry(total=3, allowed_methods=None)


def helper():
    return 1
