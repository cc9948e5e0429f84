from tenacity import retry, stop_after_attempt, wait_random_exponential, wait_random


@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
def fetch():
    return get("/orders")


@retry(stop=stop_after_attempt(3), wait=wait_random(0, 1))
def poll():
    return get("/status")
