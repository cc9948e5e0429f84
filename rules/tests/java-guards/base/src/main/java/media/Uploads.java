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
            retry = retry && !req.getMethod().equalsIgnoreCase("POST");
            return retry;
        };
    }
}
