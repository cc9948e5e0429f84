import stamina
import httpx
from botocore.config import Config

# ruleid: python/botocore-max-attempts-raised
CFG = Config(retries={"max_attempts": 9, "mode": "standard"})
# ruleid: python/attempts-raised
TOTAL = Config(retries={"total_max_attempts": 6})
# ruleid: python/retries-raised
transport = httpx.HTTPTransport(retries=3)


# ruleid: python/attempts-raised, python/jitter-disabled
@stamina.retry(on=httpx.HTTPError, attempts=5, wait_jitter=0)
def call():
    return httpx.get("https://example.test", timeout=5)


def limited(resp):
    # ruleid: python/retry-after-removed
    wait = 1
    sleep(wait)
    return retry_call()
