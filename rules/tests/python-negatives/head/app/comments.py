from urllib3.util import Retry

# We used to run with retries=2 here; retries=9 would be too many.
# ok: python/retries-raised, python/urllib3-retry-total-raised
RETRY = Retry(total=2)
# ok: python/retries-raised, python/jitter-disabled
log.info("client configured with retries=9 and jitter=False")


def doc():
    # ok: python/urllib3-allowed-methods, python/urllib3-retry-total-raised
    """Retry(total=9, allowed_methods=None, respect_retry_after_header=False) would retry POST."""
