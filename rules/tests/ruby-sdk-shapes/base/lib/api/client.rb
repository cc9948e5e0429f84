module Api
  DEFAULT_MAX_RETRIES = 0
  DELAY_BETWEEN_RETRIES = 1
  MAX_UPLOAD_RETRIES = 5

  class Client
    def initialize(max_network_retries: 1,
                   auto_retry: false)
      @max_network_retries = max_network_retries
      @auto_retry = auto_retry
      @retry_options = { tries: 2, rand_factor: 0.5, on: [Net::OpenTimeout] }
    end

    def request(method, path, body = nil)
      attempts = 0
      begin
        attempts += 1
        connection.run_request(method, path, body, headers)
      rescue Net::OpenTimeout
        retry if attempts < @max_network_retries
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
      rescue Net::OpenTimeout
        retry if attempts < 3 && %w[GET HEAD].include?("GET")
        raise
      end
    end

    def slow_options
      { tries: 5, rand_factor: 0.5, retry_on_timeout: true }
    end

    def wait(retry_after)
      retry_after > 30 ? backoff(0) : retry_after
    end

    def self.should_retry?(error, num_retries:)
      case error
      when Net::OpenTimeout
        num_retries < 2
      else
        false
      end
    end

    def wait_for(retry_after, attempt)
      sleep(retry_after)
    end
  end
end
