CFG = Config(retries={"max_attempts": 5})
R = Retry(total=2, respect_retry_after_header=True)


@retry(stop=stop_after_attempt(3), wait=wait_random(0, 1))
def poll():
    return get("/status")


def limited(resp):
    wait = int(resp.headers["Retry-After"])
    sleep(wait)
