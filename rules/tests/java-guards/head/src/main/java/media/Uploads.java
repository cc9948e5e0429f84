package media;

import java.io.IOException;

import org.apache.http.client.HttpRequestRetryHandler;
import org.apache.http.client.methods.HttpUriRequest;
import org.apache.http.protocol.HttpContext;

class Uploads {
    static HttpRequestRetryHandler handler() {
        return (IOException e, int count, HttpContext ctx) -> {
            HttpUriRequest req = (HttpUriRequest) ctx.getAttribute("http.request");
            boolean retry = count < 3;
            // ok: java/method-guard-removed
            retry = retry && !"POST".equalsIgnoreCase(req.getMethod());
            return retry;
        };
    }
}
