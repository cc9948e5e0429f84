from tenacity import retry, stop_after_attempt, wait_fixed, wait_random


# ruleid: python/attempts-raised, python/jitter-removed
@retry(stop=stop_after_attempt(10), wait=wait_fixed(2))
def fetch():
    return get("/orders")


# ruleid: python/tenacity-stop-removed
@retry(wait=wait_random(0, 1))
def poll():
    return get("/status")
