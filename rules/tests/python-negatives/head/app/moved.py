from urllib3.util import Retry


def helper():
    return 1

# Moved, not new and not raised.
# ok: python/urllib3-allowed-methods, python/urllib3-retry-total-raised
A = Retry(total=3, allowed_methods=None)
