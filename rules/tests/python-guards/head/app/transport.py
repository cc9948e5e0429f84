import time

import httpx

RETRYABLE_STATUS = {429, 500, 502, 503, 504}


class RetryTransport(httpx.BaseTransport):
    def __init__(self, inner, max_retries=3):
        self._inner = inner
        self._max_retries = max_retries
        self._retryable_methods = {"GET", "HEAD"}

    def handle_request(self, request):
        # POST, PUT, PATCH and DELETE are now retried too.
        response = self._inner.handle_request(request)
        # ruleid: python/method-guard-removed
        for attempt in range(self._max_retries):
            if response.status_code not in RETRYABLE_STATUS:
                return response
            time.sleep(0.1 * 2**attempt)
            response = self._inner.handle_request(request)
        return response


class ReadTransport(httpx.BaseTransport):
    def __init__(self, inner):
        self._inner = inner
        self._safe_methods = {"GET"}

    def _is_safe(self, request):
        return request.method in self._safe_methods

    def handle_request(self, request):
        response = self._inner.handle_request(request)
        # The guard moved into a method whose answer still decides.
        # ok: python/method-guard-removed
        if not self._is_safe(request):
            return response
        for attempt in range(3):
            if response.status_code < 500:
                return response
            time.sleep(0.1 * 2**attempt)
            response = self._inner.handle_request(request)
        return response
