package com.example;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;

public class ApiClient {
  private int maxNetworkRetries = 0;
  private int maxRetryAttempts = 3;
  private long delayBetweenRetries = 100;
  private boolean autoRetry = false;

  Response execute(Request request) throws IOException {
    for (int retry = 0; retry < maxNetworkRetries; retry++) {
      try {
        return transport.send(request);
      } catch (ConnectException e) {
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
      } catch (ConnectException e) {
        sleep(backoff(retry));
      }
    }
    return transport.send(request);
  }

  long delay(long retryAfterMillis, int attempt) {
    return retryAfterMillis;
  }

  private boolean retryOnTimeout = true;

  long wait(long retryAfterMillis) {
    if (retryAfterMillis > 30_000) {
      return backoff(0);
    }
    return retryAfterMillis;
  }

  void page(int limit) {
    for (int i = 0; i < limit; i++) {
      emit(i);
    }
  }

  Builder configure(Builder b) {
    return b.setMaxRetries(2);
  }
}
