#!/usr/bin/env bash
# Installs cargo-afl, at the version of the `afl` crate that crates/engine/fuzz/Cargo.lock pins
# (the two must match), from crates.io; its build compiles AFL++ from the sources it ships, which
# needs make and a C compiler (installed with apt-get when missing). Does nothing when that version
# is already installed. Fails, saying why, when it cannot install: CI's fuzz runs need it.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '$0 == "name = \"afl\"" { getline; split($0, v, "\""); print v[2]; exit }' crates/engine/fuzz/Cargo.lock)
if [ -z "$version" ]; then
  echo "install-cargo-afl: no afl version in crates/engine/fuzz/Cargo.lock" >&2
  exit 1
fi
installed() { [ "$(cargo afl --version 2>/dev/null | awk '{ print $2 }')" = "$version" ]; }
# AFL++ and its runtime are built per rustc version; any subcommand but config checks for them.
built() { local out; out=$(cargo afl showmap -h 2>&1 || true); [[ $out != *"was not built"* ]]; }
if installed && built; then
  exit 0
fi
missing=()
command -v make >/dev/null || missing+=(make)
command -v cc >/dev/null || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-cargo-afl: installing ${missing[*]} with apt-get" >&2
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >/dev/null; then
    echo "install-cargo-afl: apt-get could not install ${missing[*]} (no network, or not root?)" >&2
    exit 1
  fi
fi
start=$SECONDS
if ! installed; then
  echo "install-cargo-afl: cargo install cargo-afl@$version (builds AFL++; about 1.5 minutes on 2 cores)" >&2
  if ! cargo install cargo-afl --locked --version "$version" --quiet; then
    echo "install-cargo-afl: cargo install cargo-afl@$version failed (is crates.io reachable?)" >&2
    exit 1
  fi
fi
# The install builds AFL++ too, but only warns when that fails: build it here, where a failure shows.
if ! built && ! cargo afl config --build --force; then
  echo "install-cargo-afl: building AFL++ failed (see above)" >&2
  exit 1
fi
echo "install-cargo-afl: $(cargo afl --version) in $((SECONDS - start)) s" >&2
