from tenacity import retry, stop_after_attempt, wait_random_exponential

CLIENT = make_client(timeout_s=1.0, retries=6)


@retry(stop=stop_after_attempt(5), wait=wait_random_exponential(max=5))
def fetch():
    return get("/x")


@backoff.on_exception(backoff.expo, HTTPError, max_tries=3)
def gone():
    return get("/gone")
