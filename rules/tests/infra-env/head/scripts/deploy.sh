#!/bin/sh
# ruleid: infra/aws-max-attempts-raised
export AWS_MAX_ATTEMPTS=7
# ok: infra/aws-max-attempts-raised
echo "AWS_MAX_ATTEMPTS=9 would be too many"
aws s3 sync build/ s3://bucket/
