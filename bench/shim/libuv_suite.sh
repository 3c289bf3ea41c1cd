#!/usr/bin/env bash
# bench/shim/libuv_suite.sh - libuv's own test suite with and without the shim:
# which tests pass, which processes the shim flags and why, and the wall time.
#
# Invariants: libuv's source is found or fetched by tests/corpus/prepare.sh
# (Debian's libuv1 1.44.2; never copied into this repository) and built out of
# tree under $CORPUS_DIR/libuv-suite; runs alternate native and preloaded, in
# that order, ROUNDS times; every preloaded process writes its own JSON report
# (report_path with %p) into a fresh directory per round, so no report is lost
# to another; the figures printed are medians over the rounds.
#
# usage: bench/shim/libuv_suite.sh [ROUNDS]        (default 3)
# env:   CORPUS_DIR  where libuv's source and build go (default <repo>/build-corpus)
#        BUILD_DIR   blockwatch's build directory (default <repo>/build)
#        UV_TESTS    space-separated test names to run instead of the whole suite
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${CORPUS_DIR:-$root/build-corpus}
build=${BUILD_DIR:-$root/build}
rounds=${1:-3}
shim=$build/shim/libblockwatch.so

die() {
  echo "libuv_suite: $*" >&2
  exit 1
}
[ -f "$shim" ] || die "no $shim: build blockwatch first (cmake --build $build)"
command -v python3 >/dev/null || die "python3 is needed to read the reports"

CORPUS_DIR=$corpus bash "$root/tests/corpus/prepare.sh" libuv >&2
src=$(readlink -f "$corpus/libuv/src")
out=$corpus/libuv-suite
if [ ! -x "$out/uv_run_tests" ]; then
  echo "libuv_suite: building libuv's test runner in $out" >&2
  cmake -S "$src" -B "$out" -DLIBUV_BUILD_TESTS=ON -DLIBUV_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out.configure.log" 2>&1 ||
    die "cmake failed (see $out.configure.log)"
  cmake --build "$out" -j"$(nproc)" --target uv_run_tests >"$out.build.log" 2>&1 ||
    die "build failed (see $out.build.log)"
fi

# libuv's runner refuses root unless told; its tests that need a non-root
# user skip themselves.
export UV_RUN_AS_ROOT=1
work=$(mktemp -d "${TMPDIR:-/tmp}/libuv-suite.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Runs the suite (or $UV_TESTS) once; TAP lines to $1, seconds on stdout.
run_suite() {
  local tap=$1 start end
  start=$(date +%s.%N)
  (
    cd "$out"
    if [ -n "${UV_TESTS:-}" ]; then
      for t in $UV_TESTS; do
        if ./uv_run_tests "$t" >/dev/null 2>&1; then echo "ok - $t"; else echo "not ok - $t"; fi
      done
    else
      ./uv_run_tests 2>/dev/null || true
    fi
  ) >"$tap"
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}

for r in $(seq 1 "$rounds"); do
  echo "libuv_suite: round $r of $rounds" >&2
  run_suite "$work/native.$r.tap" >"$work/native.$r.time"
  mkdir -p "$work/reports.$r"
  LD_PRELOAD=$shim BLOCKWATCH_OPTIONS="report=json:verbosity=0:report_path=$work/reports.$r/%p.json" \
    run_suite "$work/shim.$r.tap" >"$work/shim.$r.time"
done

python3 - "$work" "$rounds" <<'EOF'
import glob, json, os, re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])

def results(path):
    out = {}
    for line in open(path, errors="replace"):
        m = re.match(r"(not ok|ok)\b[^-]*- (\S+)(.*)", line)
        if m:
            skip = "# SKIP" in m.group(3)
            out[m.group(2)] = "skip" if skip else ("pass" if m.group(1) == "ok" else "fail")
    return out

def secs(path):
    return float(open(path).read().strip())

native = [secs(f"{work}/native.{r}.time") for r in range(1, rounds + 1)]
shim = [secs(f"{work}/shim.{r}.time") for r in range(1, rounds + 1)]
n_res = results(f"{work}/native.1.tap")
s_res = results(f"{work}/shim.1.tap")
changed = sorted(t for t in n_res if s_res.get(t) != n_res[t])
passed = sum(1 for v in n_res.values() if v == "pass")
print(f"tests: {len(n_res)} ({passed} pass natively); "
      f"result changed under the shim: {len(changed)}")
for t in changed:
    print(f"  {t}: {n_res[t]} natively, {s_res.get(t, 'missing')} under the shim")

flagged, why = 0, {}
reports = glob.glob(f"{work}/reports.1/*.json")
for path in reports:
    try:
        rep = json.load(open(path))
    except ValueError as e:
        print(f"  unreadable report {os.path.basename(path)}: {e}")
        continue
    if rep.get("blocking_calls", {}).get("on_workers", 0) > 0:
        flagged += 1
        for site in rep.get("call_sites", []):
            top = (site.get("frames") or [{}])[0]
            key = f"{site.get('function')} in {top.get('function')} {top.get('file')}:{top.get('line')}"
            why[key] = why.get(key, 0) + 1
print(f"processes: {len(reports)} reports; flagged (a blocking call on a worker "
      f"or loop callback): {flagged}")
for key, n in sorted(why.items(), key=lambda kv: -kv[1])[:20]:
    print(f"  {n:4d} x {key}")
mn, ms = statistics.median(native), statistics.median(shim)
ratios = [s / n for n, s in zip(native, shim)]
print(f"wall time, s: native {mn:.1f} (runs {', '.join(f'{x:.1f}' for x in native)}), "
      f"shim {ms:.1f} (runs {', '.join(f'{x:.1f}' for x in shim)})")
print(f"ratio shim/native: median {statistics.median(ratios):.3f} "
      f"(runs {', '.join(f'{x:.3f}' for x in ratios)})")
EOF
