#!/bin/sh
export AWS_MAX_ATTEMPTS=3
echo "AWS_MAX_ATTEMPTS=3 is the default"
aws s3 sync build/ s3://bucket/
