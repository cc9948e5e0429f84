from clients import naive_client

# The checkout incident's change: three regressions on one line.
# ruleid: python/retries-raised, python/jitter-disabled, python/timeout-lowered
# ok: python/jitter-removed
client = naive_client(timeout_s=0.8, retries=6, jitter=False)
