from tenacity import retry, stop_after_attempt, wait_exponential_jitter

# Fewer retries and a longer timeout are safer, not findings.
# ok: python/retries-raised, python/timeout-lowered
CLIENT = make_client(timeout_s=2.0, retries=2)


# One jittered wait exchanged for another keeps the jitter.
# ok: python/jitter-removed, python/attempts-raised
@retry(stop=stop_after_attempt(3), wait=wait_exponential_jitter(max=5))
def fetch():
    return get("/x")

# The whole retried function was deleted: not a retry that lost its limit.
# ok: python/backoff-limit-removed
VERSION = 2
