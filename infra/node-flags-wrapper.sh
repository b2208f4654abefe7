#!/bin/sh
# Lambda's AWS_LAMBDA_EXEC_WRAPPER (infra/node-flags.ts): Lambda runs this with the runtime's
# command line, node's path first, and the runtime starts once this execs it. The flags go right
# after node's path, before the runtime's own arguments.
node="$1"
shift
# Unquoted on purpose: several flags, split at spaces (none has one).
# shellcheck disable=SC2086
exec "$node" $KAFKA_MIRROR_NODE_FLAGS "$@"
