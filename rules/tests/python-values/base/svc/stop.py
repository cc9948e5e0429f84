import os
from tenacity import retry, stop_after_attempt
from urllib3.util import Retry
import requests

MAX_ATTEMPTS = 3
OTHER_LIMIT = 3


@retry(stop=stop_after_attempt(MAX_ATTEMPTS))
def fetch(url):
    return requests.get(url, timeout=10)


def adapter():
    return Retry(total=3, backoff_factor=0.5)


def adapter_kw():
    return Retry(total=2, backoff_factor=0.5)


def adapter_env_low():
    return Retry(total=5, backoff_factor=0.5)


@retry(stop=stop_after_attempt(4))
def download(url):
    return requests.get(url, timeout=(3.05, 27))


@retry(stop=stop_after_attempt(4))
def download_fast(url):
    return requests.get(url, timeout=(3.05, 27))


def unchanged_default(retries=3):
    return Retry(total=retries)


@retry(stop=stop_after_attempt(5))
async def download_image(url):
    async with httpx.AsyncClient(
        proxies=None, timeout=None
    ) as client:
        return await client.get(url)


async def download_once(url):
    x = 1
    y = 2
    z = 3
    async with httpx.AsyncClient(
        proxies=None, timeout=None
    ) as client:
        return await client.get(url)
