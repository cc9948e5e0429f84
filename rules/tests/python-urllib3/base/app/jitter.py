from urllib3.util import Retry

RETRY = Retry(
    total=2,
    backoff_jitter=0.5,
)
