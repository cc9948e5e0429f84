module Api
  # ruleid: ruby/retry-count-raised
  DEFAULT_MAX_RETRIES = 2
  # ok: ruby/retry-count-raised
  DELAY_BETWEEN_RETRIES = 5
  # ok: ruby/retry-count-raised
  MAX_UPLOAD_RETRIES = 3

  class Client
    # ruleid: ruby/retry-count-raised
    def initialize(max_network_retries: 2,
                   # ruleid: ruby/retry-enabled-by-default
                   auto_retry: true)
      @max_network_retries = max_network_retries
      @auto_retry = auto_retry
      # ruleid: ruby/attempts-raised, ruby/jitter-removed
      @retry_options = { tries: 4, on: [Net::OpenTimeout] }
    end

    def request(method, path, body = nil)
      attempts = 0
      begin
        attempts += 1
        connection.run_request(method, path, body, headers)
      # ruleid: ruby/retry-on-connection-errors-added
      rescue Net::OpenTimeout, Errno::ECONNRESET
        # ruleid: ruby/retry-loop-bound-widened
        retry if attempts <= @max_network_retries
        raise
      end
    end

    def headers
      { 'Accept' => 'application/json' }
    end

    def get(path)
      attempts = 0
      begin
        attempts += 1
        connection.get(path)
      # ok: ruby/retry-on-connection-errors-added
      rescue Net::OpenTimeout, Errno::ECONNRESET
        # ok: ruby/retry-loop-bound-widened
        retry if attempts < 3 && %w[GET HEAD].include?("GET")
        raise
      end
    end

    def slow_options
      # ok: ruby/attempts-raised, ruby/jitter-removed, ruby/retry-enabled-by-default
      { tries: 3, rand_factor: 0.5, retry_on_timeout: false }
    end

    def wait(retry_after)
      # ok: ruby/retry-after-capped
      retry_after > 60 ? backoff(0) : retry_after
    end

    def self.should_retry?(error, num_retries:)
      case error
      # ruleid: ruby/retry-on-connection-errors-added
      when Net::OpenTimeout, EOFError
        num_retries < 2
      else
        false
      end
    end

    def wait_for(retry_after, attempt)
      # ruleid: ruby/retry-after-capped
      sleep(retry_after > @max_retry_after ? backoff(attempt) : retry_after)
    end
  end
end
