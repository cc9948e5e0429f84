package grpcconf

const serviceConfig = `{
  "methodConfig": [{
    "name": [{"service": "orders.Orders"}],
    "retryPolicy": {
      "maxAttempts": 2,
      "initialBackoff": "0.1s",
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`
