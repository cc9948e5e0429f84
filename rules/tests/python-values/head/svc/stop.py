import os
from tenacity import retry, stop_after_attempt
from urllib3.util import Retry
import requests

# ruleid: python/attempts-raised
MAX_ATTEMPTS = 10
# ok: python/attempts-raised
OTHER_LIMIT = 10


@retry(stop=stop_after_attempt(MAX_ATTEMPTS))
def fetch(url):
    return requests.get(url, timeout=10)


def adapter():
    # ruleid: python/urllib3-retry-total-raised
    return Retry(total=int(os.environ.get("HTTP_RETRIES", "10")), backoff_factor=0.5)


def adapter_kw():
    # ruleid: python/urllib3-retry-total-raised
    return Retry(**{"total": 10}, backoff_factor=0.5)


def adapter_env_low():
    # ok: python/urllib3-retry-total-raised
    return Retry(total=int(os.getenv("HTTP_RETRIES") or 2), backoff_factor=0.5)


@retry(stop=stop_after_attempt(4))
def download(url):
    # ruleid: python/timeout-lowered
    return requests.get(url, timeout=(3.05, 2))


@retry(stop=stop_after_attempt(4))
def download_fast(url):
    # ok: python/timeout-lowered
    return requests.get(url, timeout=(3.05, 60))


def unchanged_default(retries=3):
    # ok: python/urllib3-retry-total-raised
    return Retry(total=retries, backoff_factor=0.5)


@retry(stop=stop_after_attempt(5))
async def download_image(url):
    # ruleid: python/timeout-none-removed-retried-def
    async with httpx.AsyncClient(proxies=None) as client:
        return await client.get(url)


async def download_once(url):
    x = 1
    y = 2
    z = 3
    # ok: python/timeout-none-removed, python/timeout-none-removed-retried-def
    async with httpx.AsyncClient(proxies=None) as client:
        return await client.get(url)
