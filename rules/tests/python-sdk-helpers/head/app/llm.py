import httpx
from openai import OpenAI
# ruleid: python/sdk-max-retries-raised
DEFAULT_MAX_RETRIES = 5
# ok: python/sdk-max-retries-raised
DEFAULT_PAGE_SIZE = 50

# ruleid: python/sdk-max-retries-raised
SETTINGS = {"max_retries": 8, "timeout": 30}
client = OpenAI(**SETTINGS)
# ok: python/sdk-max-retries-raised
litellm_params = {"num_retries": 1}
# ok: python/sdk-max-retries-raised
other = {"page_size": 50}


# ruleid: python/sdk-max-retries-raised
@retry_policy(RetryConfig(max_retry=6))
def publish(event):
    # ruleid: python/retry-helper-write
    return with_retry(lambda: session.post(URL, json=event))


def fetch(url):
    # ok: python/retry-helper-write
    return with_retry(lambda: session.get(url, timeout=5))


def transport():
    # ruleid: python/timeout-none-removed
    return httpx.Client(transport=httpx.HTTPTransport(retries=2))


def plain():
    # ok: python/timeout-none-removed
    return httpx.Client()


# ok: python/retry-helper-write
def post_once(payload):
    return session.post(URL, json=payload)


# ruleid: python/method-guard-removed
def should_retry(resp):
    return resp.status_code >= 500





# ok: python/method-guard-removed
def unrelated(req):
    # ok: python/method-guard-removed
    return render_page()


# ruleid: python/retries-raised
def call_provider(prompt, max_retries: int = 4):
    return complete(prompt, max_retries=max_retries)


# ok: python/retries-raised
def page(limit: int = 40):
    return fetch(limit)
