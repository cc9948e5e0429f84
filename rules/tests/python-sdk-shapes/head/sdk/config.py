"""Client defaults of an API SDK."""

# ruleid: python/sdk-max-retries-raised
DEFAULT_MAX_NETWORK_RETRIES = 2
# ruleid: python/retry-count-name-raised
NUM_RETRIES_CONNECT = 3
# ruleid: python/attempt-count-name-raised
DEFAULT_MAX_ATTEMPTS = 5
# ok: python/retry-count-name-raised
MAX_UPLOAD_RETRIES = 2
# ok: python/retry-count-name-raised
delay_between_retries = 5
# ok: python/retry-count-name-raised
remaining_retries = 3
# ok: python/retry-count-name-raised
max_request_retries = 4

SETTINGS = {
    # ruleid: python/retry-count-name-raised
    "max_network_retries": 3,
    # ruleid: python/jitter-field-disabled
    "jitter": False,
}


class Client:
    def __init__(
        self,
        api_key,
        # ruleid: python/retry-enabled-by-default
        retry_transient_errors: bool = True,
        # ruleid: python/retry-enabled-by-default
        auto_retry=True,
        # ruleid: python/retry-count-name-raised
        max_connect_retries: int = 4,
        # ruleid: python/jitter-field-disabled
        jitter: bool = False,
    ):
        self.api_key = api_key
        # ruleid: python/retry-count-name-raised
        self.retry_limit = 6
        # ok: python/retry-enabled-by-default
        self.retry_on_timeout = False


# ok: python/attempt-count-name-raised
DEFAULT_MAX_DOWNLOAD_ATTEMPTS = 3
# ok: python/jitter-field-disabled
BACKOFF = {"jitter": True, "randomization_factor": 0.25}
