import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

RETRY = Retry(
    # ruleid: python/urllib3-retry-total-raised
    total=8,
    backoff_factor=0.5,
    # ruleid: python/urllib3-allowed-methods
    allowed_methods=None,
    # ruleid: python/retry-after-disabled
    respect_retry_after_header=False,
    status_forcelist=[429, 503],
)
# ruleid: python/urllib3-retry-total-raised
LEGACY = Retry(5)
adapter = HTTPAdapter(max_retries=RETRY)
# ruleid: python/retries-raised
plain = HTTPAdapter(max_retries=4)
