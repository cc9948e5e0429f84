# ok: python/botocore-max-attempts-raised
CFG = Config(retries={"max_attempts": 2})
# ok: python/retry-after-disabled
R = Retry(total=2)
# ok: python/retry-after-disabled
log.warning("set respect_retry_after_header=False to debug")


# A stop condition exchanged for another is still a limit.
# ok: python/tenacity-stop-removed
@retry(stop=stop_after_delay(30), wait=wait_random(0, 1))
def poll():
    return get("/status")


def limited(resp):
    # ok: python/retry-after-removed
    wait = parse_retry_after(resp.headers["Retry-After"])
    sleep(wait)
