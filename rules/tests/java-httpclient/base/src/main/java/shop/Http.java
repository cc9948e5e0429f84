package shop;

class Http {
    static CloseableHttpClient client() {
        return HttpClients.custom()
            .setRetryStrategy(new DefaultHttpRequestRetryStrategy(1, TimeValue.ofSeconds(1)))
            .build();
    }

    static HttpClient legacy() {
        return HttpClientBuilder.create()
            .setRetryHandler(new DefaultHttpRequestRetryHandler(3, false))
            .build();
    }

    static Pool pool() {
        return new Pool(new Semaphore(2));
    }

    static class Handler implements HttpRequestRetryHandler {
        public boolean retryRequest(IOException e, int count, HttpContext ctx) {
            if (count > 2) {
                return false;
            }
            HttpRequest request = HttpClientContext.adapt(ctx).getRequest();
            if (request instanceof HttpEntityEnclosingRequest) {
                return false;
            }
            return true;
        }
    }

    Order create(Order o) {
        return withRetry(() -> api.get("/orders"));
    }
}
