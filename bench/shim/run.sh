#!/usr/bin/env bash
# bench/shim/run.sh - what libblockwatch.so costs: per intercepted call, for a
# small synthetic program, and for real test binaries of this tree, each run
# natively and under LD_PRELOAD in the same session, alternating (ABBA: which
# goes first flips every round), reporting MEDIANS over the rounds and the
# difference or ratio against the native baseline of the same session.
#
# env: BLOCKWATCH_BENCH_BUILD  build directory (default <repo>/build-bench)
#      BENCH_SHIM_RUNS         rounds, each one native + one shim run (9)
#      BENCH_SHIM_ITERS        calls per batch in bw_bench_shim (20000)
#      BENCH_SHIM_WHOLE_ITERS  iterations per thread of the synthetic
#                              program (200000)
#      BENCH_SHIM_TESTS        test binaries, relative to <build>/tests
#                              (default: runtime pool/task/stress and the
#                              rules tests; "" skips the test-run table)
# Exit status 1 when something is not built, or a program failed (its
# status differs from 0 natively or under the shim).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BLOCKWATCH_BENCH_BUILD:-$root/build-bench}
bin=$build/bench/shim/bw_bench_shim
lib=$build/shim/libblockwatch.so
if [ ! -x "$bin" ] || [ ! -f "$lib" ]; then
  echo "bench/shim: build first (bench/run.sh)" >&2
  exit 1
fi
runs=${BENCH_SHIM_RUNS:-9}
iters=${BENCH_SHIM_ITERS:-20000}
witers=${BENCH_SHIM_WHOLE_ITERS:-200000}
tests=${BENCH_SHIM_TESTS-runtime/test_runtime_pool runtime/test_runtime_task runtime/test_runtime_stress rules/test_rules_packs rules/test_rules_parse rules/test_rules_oom}
# Per-call rows: worker_name makes the thread "work-0" a worker (the pool rows
# run on a runtime worker, which the runtime announces), lock=1 makes
# mutexes wrapped; nothing is reported, so output cost is not measured.
call_opts='worker_name=work-*:lock=1:report=none'
# The itemfn rows: a hand-written pool's worker, its items told by item_fn.
item_opts='worker_name=itemw-*:item_fn=bench_item_*:lock=1:report=none'
run_opts='report=none'

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0

# median: the median of the numbers on stdin, one per line.
median() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "nan"; exit }
    print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ms_of CMD...: runs CMD (output discarded) and prints its wall time in ms,
# or "fail" when it exits non-zero.
ms_of() {
  local t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 || { echo fail; return; }
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
}

# One native and one shim run of "$@", appending "tag value..." lines to
# $tmp/native and $tmp/shim; the order flips with the round number ($1).
pair() {
  local round=$1 tag=$2 opts=$3
  shift 3
  local order=(native shim)
  [ $((round % 2)) -eq 0 ] && order=(shim native)
  local kind out
  for kind in "${order[@]}"; do
    if [ "$kind" = shim ]; then
      out=$(LD_PRELOAD=$lib BLOCKWATCH_OPTIONS=$opts "$@")
    else
      out=$("$@")
    fi
    printf '%s\n' "$out" | sed "s|^|$tag |" >>"$tmp/$kind"
  done
}

# col FILE TAG NAME FIELD: the median of FIELD over lines "TAG NAME ...".
col() {
  awk -v t="$2" -v n="$3" -v f="$4" '$1 == t && $2 == n { print $f }' "$1" | median
}

echo "shim overhead: $runs rounds, native and shim alternating, medians"
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)," \
  "kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M UTC')"

# ---- per call ------------------------------------------------------------
for ((r = 1; r <= runs; r++)); do
  pair "$r" call "$call_opts" "$bin" "$iters"
  pair "$r" call "$item_opts" "$bin" "$iters" itemfn
done
if ! grep -q '^call pool.mutex_pair ' "$tmp/native" ||
  ! grep -q '^call pool.mutex_pair ' "$tmp/shim"; then
  echo "bench/shim: bw_bench_shim printed no figures" >&2
  exit 1
fi
echo
echo "per call, ns (median of $runs processes; each figure itself the median of 9 batches of $iters calls)"
printf '%-20s %8s %8s %8s   %10s %8s\n' measurement native shim diff 'libc-direct' 'diff'
for name in other.poll_zero other.sched_yield other.mutex_pair \
  worker.poll_zero worker.sched_yield worker.mutex_pair \
  pool.poll_zero pool.sched_yield pool.mutex_pair \
  itemfn.poll_zero itemfn.sched_yield itemfn.mutex_pair; do
  n=$(col "$tmp/native" call "$name" 3)
  s=$(col "$tmp/shim" call "$name" 3)
  d=$(col "$tmp/shim" call "$name" 4)
  awk -v m="$name" -v n="$n" -v s="$s" -v d="$d" 'BEGIN {
    printf "%-20s %8.1f %8.1f %+8.1f   %10.1f %+8.1f\n", m, n, s, s - n, d, s - d }'
done
echo "(other: the main thread; worker: a thread worker_name makes a worker; pool: an"
echo " item on a worker of a bundled-runtime pool of two, whose other worker idles;"
echo " itemfn: inside an item of a hand-written pool, told by item_fn=bench_item_*;"
echo " native/shim: the call through its symbol, in a native and a preloaded process;"
echo " libc-direct: the same call straight to libc in the preloaded process, and the"
echo " shim's figure minus it - a baseline measured in the same process, batches alternating)"

# ---- synthetic program ---------------------------------------------------
for ((r = 1; r <= runs; r++)); do
  pair "$r" whole "lock=1:$run_opts" "$bin" "$witers" whole
done
n=$(col "$tmp/native" whole whole.ms 3)
s=$(col "$tmp/shim" whole whole.ms 3)
echo
printf '%-34s %10s %10s %8s\n' 'whole run, ms (median)' native shim ratio
awk -v n="$n" -v s="$s" 'BEGIN { printf "%-34s %10.1f %10.1f %8.3f\n", "synthetic (4 threads, lock=1)", n, s, s / n }'

# ---- fork children that exec at once (libuv's uv_spawn of a missing file) --
for ((r = 1; r <= runs; r++)); do
  pair "$r" fork "$run_opts" "$bin" 100 fork
done
n=$(col "$tmp/native" fork fork.ms 3)
s=$(col "$tmp/shim" fork fork.ms 3)
awk -v n="$n" -v s="$s" 'BEGIN { printf "%-34s %10.3f %10.3f %8.3f\n", "fork + failed exec, ms per child", n, s, s / n }'

# ---- exit with 20 call sites: named in the process, or once by bw-merge ----
# One process under LD_PRELOAD with the options `blockwatch --` gives it
# (a JSON report), symbolize=1 (each process names its own frames, as
# before) against symbolize=0 (the wrapper's now): wall ms and the peak
# RSS (KiB, GNU time); then a whole `blockwatch --` run of 10 such
# processes, whose bw-merge names the frames once for all of them.
wrapper=$build/shim/blockwatch
if [ -x "$build/tools/bw-merge/bw-merge" ] && [ -x /usr/bin/time ]; then
  sites_opts="worker_name=work-*:report=json:report_path=$tmp/sites.%p.json"
  tree="for i in 1 2 3 4 5 6 7 8 9 10; do '$bin' 20 sites || exit 1; done"
  for ((r = 1; r <= runs; r++)); do
    for sym in 1 0; do
      t0=$EPOCHREALTIME
      LD_PRELOAD=$lib BLOCKWATCH_OPTIONS="$sites_opts:symbolize=$sym" \
        /usr/bin/time -f %M -o "$tmp/rss" "$bin" 20 sites >/dev/null 2>&1 || status=1
      awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="$sym" -v k="$(cat "$tmp/rss")" \
        'BEGIN { printf "sites one.%s %.3f %s\n", s, (b - a) * 1000, k }' >>"$tmp/sites"
      t0=$EPOCHREALTIME
      "$wrapper" --worker-name 'work-*' symbolize=$sym -- sh -c "$tree" \
        >/dev/null 2>&1 || status=1
      awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="$sym" \
        'BEGIN { printf "sites tree.%s %.3f\n", s, (b - a) * 1000 }' >>"$tmp/sites"
    done
  done
  echo
  printf '%-34s %10s %10s %8s\n' '20 call sites, exit cost (median)' 'in process' 'bw-merge' ratio
  for row in "one:3:one process, wall ms" "one:4:one process, peak RSS KiB" \
    "tree:3:blockwatch -- 10 processes, ms"; do
    IFS=: read -r what field label <<<"$row"
    b=$(col "$tmp/sites" sites "$what.1" "$field")
    a=$(col "$tmp/sites" sites "$what.0" "$field")
    awk -v m="$label" -v b="$b" -v a="$a" 'BEGIN { printf "%-34s %10.1f %10.1f %8.3f\n", m, b, a, a / b }'
  done
  echo "(in process: symbolize=1, every process names its frames with libdw at exit;"
  echo " bw-merge: symbolize=0, the wrapper's default, bw-merge names them once)"
  rm -f "$tmp"/sites.*.json
fi

# ---- real test binaries --------------------------------------------------
[ -n "$tests" ] || exit $status
for t in $tests; do
  [ -x "$build/tests/$t" ] || { echo "bench/shim: $build/tests/$t not built" >&2; exit 1; }
done
for ((r = 1; r <= runs; r++)); do
  for t in $tests; do
    name=$(basename "$t")
    order=(native shim)
    [ $((r % 2)) -eq 0 ] && order=(shim native)
    for kind in "${order[@]}"; do
      if [ "$kind" = shim ]; then
        ms=$(LD_PRELOAD=$lib BLOCKWATCH_OPTIONS=$run_opts ms_of "$build/tests/$t")
      else
        ms=$(ms_of "$build/tests/$t")
      fi
      if [ "$ms" = fail ]; then
        echo "bench/shim: $t failed ($kind, round $r)" >&2
        status=1
        continue
      fi
      echo "test $name $ms $r" >>"$tmp/$kind"
    done
  done
done
# The suite: per round, the sum over the binaries (a whole test run).
for kind in native shim; do
  awk '$1 == "test" { sum[$4] += $3 } END { for (r in sum) print "test suite", sum[r] }' \
    "$tmp/$kind" >"$tmp/$kind.suite"
  cat "$tmp/$kind.suite" >>"$tmp/$kind"
done
for t in $tests; do
  name=$(basename "$t")
  n=$(col "$tmp/native" test "$name" 3)
  s=$(col "$tmp/shim" test "$name" 3)
  awk -v m="$name" -v n="$n" -v s="$s" 'BEGIN { printf "%-34s %10.1f %10.1f %8.3f\n", m, n, s, s / n }'
done
n=$(col "$tmp/native" test suite 3)
s=$(col "$tmp/shim" test suite 3)
awk -v n="$n" -v s="$s" 'BEGIN { printf "%-34s %10.1f %10.1f %8.3f\n", "all of the above, one after another", n, s, s / n }'
echo "(wall time of each process from exec to exit; shim runs with BLOCKWATCH_OPTIONS=$run_opts)"

# ---- the runtime's observer path -------------------------------------------
# The stress test's first case (2M items) with no observer, with the
# runtime's own do-nothing and counting observers, and under the shim (whose
# observer has every item callback), the four modes rotating per round.
stress=$build/tests/runtime/test_runtime_stress
[ "$tests" = "${tests/test_runtime_stress/}" ] && exit $status
export BW_STRESS_ONLY=test_stress_every_item_runs_exactly_once
modes=(none null items shim)
for ((r = 1; r <= runs; r++)); do
  for ((k = 0; k < ${#modes[@]}; k++)); do
    mode=${modes[$(((k + r) % ${#modes[@]}))]}
    case $mode in
    none) ms=$(ms_of "$stress") ;;
    shim) ms=$(LD_PRELOAD=$lib BLOCKWATCH_OPTIONS=$run_opts ms_of "$stress") ;;
    *) ms=$(BW_STRESS_OBSERVER=$mode ms_of "$stress") ;;
    esac
    if [ "$ms" = fail ]; then
      echo "bench/shim: stress ($mode, round $r) failed" >&2
      status=1
      continue
    fi
    echo "stress $mode $ms" >>"$tmp/stress"
  done
done
echo
printf '%-34s %10s %8s\n' "stress, first case only, ms" median ratio
base=$(col "$tmp/stress" stress none 3)
for mode in "${modes[@]}"; do
  m=$(col "$tmp/stress" stress "$mode" 3)
  awk -v m="$mode" -v v="$m" -v b="$base" 'BEGIN { printf "%-34s %10.1f %8.3f\n", m, v, v / b }'
done
echo "(none: no observer; null: an observer with every callback NULL; items: item"
echo " callbacks that count; shim: under LD_PRELOAD - ratio against none)"
exit $status
