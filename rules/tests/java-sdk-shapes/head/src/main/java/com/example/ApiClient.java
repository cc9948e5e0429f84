package com.example;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;

public class ApiClient {
  // ruleid: java/retry-count-name-raised
  private int maxNetworkRetries = 2;
  // ok: java/retry-count-name-raised
  private int maxRetryAttempts = 2;
  // ok: java/retry-count-name-raised
  private long delayBetweenRetries = 500;
  // ruleid: java/retry-enabled-by-default
  private boolean autoRetry = true;

  Response execute(Request request) throws IOException {
    // ruleid: java/retry-loop-bound-widened
    for (int retry = 0; retry <= maxNetworkRetries; retry++) {
      try {
        return transport.send(request);
      // ruleid: java/retry-on-connection-errors-added
      } catch (ConnectException | SocketException e) {
        sleep(backoff(retry));
      }
    }
    return transport.send(request);
  }

  Builder headers(Builder b) {
    return b.header("Accept", "application/json");
  }

  Response fetch(Request request) throws IOException {
    for (int retry = 0; retry < 3; retry++) {
      if (!"GET".equals(request.method())) {
        break;
      }
      try {
        return transport.send(request);
      // ok: java/retry-on-connection-errors-added
      } catch (ConnectException | SocketException e) {
        sleep(backoff(retry));
      }
    }
    return transport.send(request);
  }

  long delay(long retryAfterMillis, int attempt) {
    // ruleid: java/retry-after-capped
    return Math.min(retryAfterMillis, maxBackoffMillis);
  }

  // ok: java/retry-enabled-by-default
  private boolean retryOnTimeout = false;

  long wait(long retryAfterMillis) {
    // ok: java/retry-after-capped
    if (retryAfterMillis > 60_000) {
      return backoff(0);
    }
    return retryAfterMillis;
  }

  void page(int limit) {
    // ok: java/retry-loop-bound-widened
    for (int i = 0; i <= limit; i++) {
      emit(i);
    }
  }

  Builder configure(Builder b) {
    // ruleid: java/retry-count-name-raised
    return b.setMaxRetries(4);
  }
}
