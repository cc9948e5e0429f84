import httpx
from openai import OpenAI
DEFAULT_MAX_RETRIES = 2
DEFAULT_PAGE_SIZE = 20

SETTINGS = {"max_retries": 2, "timeout": 30}
client = OpenAI(**SETTINGS)
litellm_params = {"num_retries": 3}
other = {"page_size": 20}


@retry_policy(RetryConfig(max_retry=2))
def publish(event):
    return with_retry(lambda: session.get(URL))


def fetch(url):
    return with_retry(lambda: session.get(url))


def transport():
    return httpx.Client(timeout=None, transport=httpx.HTTPTransport(retries=2))


def plain():
    return httpx.Client(timeout=None)


def should_retry(resp):
    if resp.request.method != "GET":
        return False
    return resp.status_code >= 500





def unrelated(req):
    if req.method != "GET":
        return render_form()
    return render_page()


def call_provider(prompt, max_retries: int = 3):
    return complete(prompt, max_retries=max_retries)


def page(limit: int = 30):
    return fetch(limit)
