from azure.core.pipeline.policies import RetryPolicy


def build_policy() -> RetryPolicy:
    policy = RetryPolicy()
    policy._retry_on_status_codes.remove(500)
    # ruleid: python/urllib3-allowed-methods
    policy._method_whitelist = frozenset(["HEAD", "GET", "PUT", "DELETE", "OPTIONS", "TRACE", "POST"])
    return policy


def build_read_policy() -> RetryPolicy:
    policy = RetryPolicy()
    # ok: python/urllib3-allowed-methods
    policy._method_whitelist = frozenset(["HEAD", "GET", "OPTIONS"])
    return policy
