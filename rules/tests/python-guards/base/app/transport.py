import time

import httpx

RETRYABLE_STATUS = {429, 500, 502, 503, 504}


class RetryTransport(httpx.BaseTransport):
    def __init__(self, inner, max_retries=3):
        self._inner = inner
        self._max_retries = max_retries
        self._retryable_methods = {"GET", "HEAD"}

    def handle_request(self, request):
        response = self._inner.handle_request(request)
        if request.method not in self._retryable_methods:
            return response
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

    def handle_request(self, request):
        response = self._inner.handle_request(request)
        if request.method not in self._safe_methods:
            return response
        for attempt in range(3):
            if response.status_code < 500:
                return response
            time.sleep(0.1 * 2**attempt)
            response = self._inner.handle_request(request)
        return response
