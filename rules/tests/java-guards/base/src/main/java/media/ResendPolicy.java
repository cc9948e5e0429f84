package media;

import java.io.IOException;

import org.apache.http.client.HttpRequestRetryHandler;
import org.apache.http.client.methods.HttpUriRequest;
import org.apache.http.protocol.HttpContext;

class ResendPolicy implements HttpRequestRetryHandler {
    private final int maxRetries;

    ResendPolicy(int maxRetries) {
        this.maxRetries = maxRetries;
    }

    @Override
    public boolean retryRequest(IOException exception, int executionCount, HttpContext context) {
        boolean retry = executionCount <= maxRetries;

        if (retry) {
            // replay only what is safe to replay
            HttpUriRequest current = (HttpUriRequest) context.getAttribute("http.request");
            if (current == null) {
                return false;
            }
            String verb = current.getMethod();
            retry = !verb.equals("POST");
        }

        if (retry) {
            pause();
        }
        return retry;
    }

    private void pause() {
    }

    boolean retryOnce(HttpUriRequest request, int executionCount) {
        if (executionCount > 1) {
            return false;
        }
        boolean retry = !request.getMethod().equals("POST");
        return retry;
    }
}
