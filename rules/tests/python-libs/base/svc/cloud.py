import stamina
import httpx
from botocore.config import Config

CFG = Config(retries={"max_attempts": 2, "mode": "standard"})
TOTAL = Config(retries={"total_max_attempts": 3})
transport = httpx.HTTPTransport(retries=1)


@stamina.retry(on=httpx.HTTPError, attempts=3, wait_jitter=1.0)
def call():
    return httpx.get("https://example.test", timeout=5)


def limited(resp):
    wait = int(resp.headers["Retry-After"])
    sleep(wait)
    return retry_call()
