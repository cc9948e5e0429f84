from azure.core.pipeline.policies import RetryPolicy


def build_policy() -> RetryPolicy:
    policy = RetryPolicy()
    policy._retry_on_status_codes.remove(500)
    return policy


def build_read_policy() -> RetryPolicy:
    policy = RetryPolicy()
    return policy
