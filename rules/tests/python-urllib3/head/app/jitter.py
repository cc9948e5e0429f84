from urllib3.util import Retry

# ruleid: python/jitter-removed
RETRY = Retry(
    total=2,
)
