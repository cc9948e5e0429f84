from urllib3.util import Retry

# ruleid: python/urllib3-allowed-methods
SAFE = Retry(total=2, allowed_methods=frozenset(["GET", "PUT", "POST"]))
