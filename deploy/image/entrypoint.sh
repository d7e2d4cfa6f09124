#!/bin/sh
# The image's entrypoint (under tini): picks what a bare `docker run` does, then
# replaces itself with node, so signals go to runset and not to this shell.
#   no arguments: `serve` when a config is there (RUNSET_CONFIG, or ./runset.config.yaml
#                 in the working directory, /suite), else `demo`
#   arguments:    runset's own (`worker --url … --key-file …`, `keys create …`, `--help`);
#                 `runset …` the same; a path or sh, bash, node, npm, npx runs that program
set -eu
RUNSET_MAIN="${RUNSET_HOME:-/app}/dist/src/cli/main.js"

if [ "$#" -eq 0 ]; then
  if [ -n "${RUNSET_CONFIG:-}" ] || [ -f runset.config.yaml ]; then
    set -- serve
  else
    set -- demo
  fi
fi

case "$1" in
  runset) shift ;;
  */* | sh | bash | node | npm | npx) exec "$@" ;;
esac
exec node "$RUNSET_MAIN" "$@"
