package grpcconf

const serviceConfig = `{
  "methodConfig": [{
    "name": [{"service": "orders.Orders"}],
    "retryPolicy": {
      // ruleid: go/grpc-max-attempts-raised
      "maxAttempts": 5,
      "initialBackoff": "0.1s",
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`
