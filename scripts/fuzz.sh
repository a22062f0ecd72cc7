#!/usr/bin/env bash
# Coverage-guided fuzzing of every place the engine parses peer bytes (HTTP/1.1, WebSocket frames,
# content decoders, the HTTP/2 session) with AFL++ (cargo-afl, stable toolchain).
#   scripts/fuzz.sh SECONDS [TARGET...]   run each target (default: all) for SECONDS
# Targets and their seed corpora live in crates/engine/fuzz; findings go to
# crates/engine/fuzz/out/<target> (ignored by git). Needs cargo-afl (scripts/install-cargo-afl.sh);
# without it the script says so and fails. Exits non-zero on any crash or hang.
set -euo pipefail
cd "$(dirname "$0")/../crates/engine/fuzz"
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_response encode_head ws_frames decode_body h2_session)
if ! cargo afl --version >/dev/null 2>&1; then
  echo "fuzz: cargo-afl is not installed (scripts/install-cargo-afl.sh installs it)"
  exit 1
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo afl build --release --quiet
mkdir -p out
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_QUIET=1
failed=0
for t in "${targets[@]}"; do
  out=out/$t
  rm -rf "$out"
  cargo afl fuzz -V "$secs" -i "seeds/$t" -o "$out" "$CARGO_TARGET_DIR/release/$t" >"out-$t.log" 2>&1 || true
  stats=$out/default/fuzzer_stats
  if [ ! -f "$stats" ]; then
    echo "fuzz $t: AFL did not start (see crates/engine/fuzz/out-$t.log)"
    failed=1
    continue
  fi
  get() { awk -F' *: *' -v k="$1" '$1 == k { print $2 }' "$stats"; }
  crashes=$(get saved_crashes)
  hangs=$(get saved_hangs)
  echo "fuzz $t: $(get run_time)s, $(get execs_done) execs, $(get corpus_count) paths, edges $(get edges_found)/$(get total_edges) ($(get bitmap_cvg)), crashes $crashes, hangs $hangs"
  if [ "$crashes" != 0 ] || [ "$hangs" != 0 ]; then failed=1; fi
done
exit $failed
