"""Client defaults of an API SDK."""

DEFAULT_MAX_NETWORK_RETRIES = 0
NUM_RETRIES_CONNECT = 1
DEFAULT_MAX_ATTEMPTS = 3
MAX_UPLOAD_RETRIES = 5
delay_between_retries = 1
remaining_retries = 0
max_request_retries = 4

SETTINGS = {
    "max_network_retries": 1,
    "jitter": True,
}


class Client:
    def __init__(
        self,
        api_key,
        retry_transient_errors: bool = False,
        auto_retry=False,
        max_connect_retries: int = 2,
        jitter: bool = True,
    ):
        self.api_key = api_key
        self.retry_limit = 2
        self.retry_on_timeout = True


DEFAULT_MAX_DOWNLOAD_ATTEMPTS = 5
BACKOFF = {"jitter": True, "randomization_factor": 0.5}
