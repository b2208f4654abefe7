#!/usr/bin/env bash
# Builds everything the tests need into .testbed/ (ignored by git): librdkafka's mock Kafka
# cluster behind our launcher, and DynamoDB Local. Each step skips itself when its output is
# already there, so running this before every test run is cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/testbed/build-mock-kafka.sh
bash scripts/testbed/fetch-dynamodb-local.sh
