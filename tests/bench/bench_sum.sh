#!/bin/sh
# bench_sum.sh: the exact parallel sum against the ordered fold (make bench).
#
# Runs tests/bench/bench_sum.c on 1 thread, on 2 threads and on all threads, and the
# pool's region cost (tests/c/pool_harness cost). Each ratio compares two measurements
# of the same run; the speedup compares the 1- and 2-thread runs of this invocation.
# Targets (issue 3): 1 thread <= 1.0x the fold at 10^7, <= 1.5x at 10^3, <= 5x at 10;
# 2 threads >= 1.8x faster than 1 for n >= 10^6. The machine may be shared: run it quiet.
# One-thread rows use the thread's CPU time (other tenants' slices do not count); rows
# with more threads, and so the speedup, use wall time and need a quiet machine.
set -e
if [ "$1" = "--help" ] || [ "$1" = "-h" ]; then
  echo "usage: bench_sum.sh [MAX_N]   (CAIRN_TBIN: where bench_sum and pool_harness are)"
  exit 0
fi
TBIN=${CAIRN_TBIN:-build/obj/tbin}
MAX_N=${1:-10000000}
for b in bench_sum pool_harness; do
  [ -x "$TBIN/$b" ] || { echo "bench_sum.sh: $TBIN/$b not built: run make first" >&2; exit 1; }
done
ALL=$(CAIRN_THREADS= "$TBIN/pool_harness" width)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "exact sum / ordered fold (time per sum; ratio < 1: the exact sum is faster)"
WIDTHS="1 2"
[ "$ALL" -gt 2 ] && WIDTHS="1 2 $ALL"
for t in $WIDTHS; do
  CAIRN_THREADS=$t "$TBIN/bench_sum" "$MAX_N" > "$tmp/t$t"
  echo "-- CAIRN_THREADS=$t ($(sed -n 's/^width=[0-9]* clock=//p' "$tmp/t$t") time)"
  grep -v '^width' "$tmp/t$t" | grep -v '^busiest' | awk '{
    split($2,n,"="); split($3,f,"="); split($4,e,"="); split($5,r,"="); split($7,a,"=");
    printf "  %s n=%-9s fold %12.1f ns  exact %12.1f ns  exact/fold %5.2fx  yield/fold %5.2fx\n",
           $1, n[2], f[2], e[2], r[2], a[2] }'
done
echo "-- speedup of the exact sum, 2 threads against 1 (n >= 10^6)"
awk 'FNR==NR { if ($2 ~ /^n=/) one[$1" "$2]=$4; next }
       $2 ~ /^n=/ { split($2,n,"="); if (n[2] >= 1000000) { split(one[$1" "$2],a,"="); split($4,b,"=");
         printf "  %s n=%-9s 1 thread %12.1f ns  2 threads %12.1f ns  speedup %4.2fx\n", $1, n[2], a[2], b[2], a[2]/b[2] } }' \
      "$tmp/t1" "$tmp/t2"
echo "-- the same in CPU time (the machine may be shared): 1 thread against the 2 workers' total / 2"
awk 'FNR==NR { if ($1 == "f64" && $2 ~ /^n=/) one[$2]=$4; next }
     $1 == "busiest" { split(one[$3],a,"="); split($5,b,"="); split($6,c,"=");
       printf "  f64 %-11s 1 thread %12.1f ns  2 workers %12.1f ns total (busiest %12.1f)  speedup if balanced %4.2fx\n",
              $3, a[2], c[2], b[2], 2*a[2]/c[2] }' \
    "$tmp/t1" "$tmp/t2"
echo "-- pool region cost (ns per cairn_pool_run; n = 0, n = 1, one block per worker)"
for t in $WIDTHS; do
  CAIRN_THREADS=$t "$TBIN/pool_harness" cost 200000 | sed "s/^ok /  /"
done
