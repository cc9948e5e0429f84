import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

RETRY = Retry(
    total=2,
    backoff_factor=0.5,
    status_forcelist=[429, 503],
)
LEGACY = Retry(3)
adapter = HTTPAdapter(max_retries=RETRY)
plain = HTTPAdapter(max_retries=1)
