package shop;

class Http {
    static CloseableHttpClient client() {
        return HttpClients.custom()
            // ruleid: java/httpclient-retry-count-raised
            .setRetryStrategy(new DefaultHttpRequestRetryStrategy(5, TimeValue.ofSeconds(1)))
            .build();
    }

    static HttpClient legacy() {
        return HttpClientBuilder.create()
            // ruleid: java/httpclient-request-sent-retry
            .setRetryHandler(new DefaultHttpRequestRetryHandler(3, true))
            .build();
    }

    static Pool pool() {
        // ok: java/httpclient-retry-count-raised, java/httpclient-request-sent-retry
        return new Pool(new Semaphore(8), true);
    }

    static class Handler implements HttpRequestRetryHandler {
        // ruleid: java/method-guard-removed
        public boolean retryRequest(IOException e, int count, HttpContext ctx) {
            if (count > 2) {
                return false;
            }
            return true;
        }
    }

    Order create(Order o) {
        // ruleid: java/retry-helper-write
        return withRetry(() -> api.post("/orders", o));
    }

    Order read(String id) {
        // ok: java/retry-helper-write
        return withRetry(() -> api.get("/orders/" + id));
    }
}
