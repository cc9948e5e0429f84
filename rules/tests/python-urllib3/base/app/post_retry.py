from urllib3.util import Retry

SAFE = Retry(total=2, allowed_methods=frozenset(["GET", "PUT"]))
