package shop;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.util.function.Supplier;

class Gateway {
    private final HttpClient http = HttpClient.newHttpClient();
    private final int maxAttempts = 3;

    private <T> T resilient(Supplier<T> call) {
        for (int attempt = 1; attempt < maxAttempts; attempt++) {
            try {
                return call.get();
            } catch (RuntimeException e) {
                sleep(attempt);
            }
        }
        return call.get();
    }

    private <T> T timed(Supplier<T> call) {
        return call.get();
    }

    Object charge(HttpRequest.Builder b, HttpRequest.BodyPublisher body) {
        return resilient(() -> send(b.GET().build()));
    }

    Object refund(HttpRequest.Builder b, HttpRequest.BodyPublisher body) {
        return timed(() -> send(b.GET().build()));
    }
}
