#!/usr/bin/env bash
# bench/fleet.sh [N [MS]] - the fleet figure of README "Fleet cache (Redis)": N
# processes (default 8) of bench/fleet_bench start at once, each with its own
# empty disk cache, all sharing one private redis-server (started here on a
# free loopback port, stopped at the end). Then one late process on a fresh
# disk; for comparison, that process again on its now filled disk without
# Redis, one alone (no Redis, fresh disk) and one with tuning off.
# Prints each process's line, the number of tunes between the N (goal: 1,
# the site has one key), and the first-call latency of a process that found
# the key in Redis against one that had to tune.
# Needs redis-server and libhiredis.so.0.14; STC_BUILD (default build/plain).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-8}
keep_ms=${2:-3000} # how long each process keeps calling the site
bench=${STC_BUILD:-build/plain}/bin/fleet_bench
helper=test/remote-cache/redis-helper.py
[ -x "$bench" ] || { echo "fleet.sh: build $bench first" >&2; exit 2; }
tmp=$(mktemp -d)
port=$(python3 "$helper" start "$tmp/server")
trap 'python3 "$helper" stop "$tmp/server"; rm -rf "$tmp"' EXIT
url=redis://127.0.0.1:$port

python3 "$helper" fleet "$n" "$tmp/run" -- env STC_CACHE_DIR="$tmp/disk{i}" \
  STC_CACHE_REMOTE="$url" "$bench" $((1 << 20)) "$keep_ms"
env STC_CACHE_DIR="$tmp/late" STC_CACHE_REMOTE="$url" "$bench" > "$tmp/late.out"
env STC_CACHE_DIR="$tmp/late" "$bench" > "$tmp/disk.out"
env STC_CACHE_DIR="$tmp/alone" "$bench" > "$tmp/alone.out"
env STC_TUNE=off STC_CACHE_DIR="$tmp/off" "$bench" > "$tmp/off.out"

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" "$2"; }
echo "fleet.sh: $n processes at once, separate empty disks, one Redis ($url)"
printf '%-8s %14s %-10s %14s %6s\n' process first_call_ms source picked_up_ms tunes
tunes=0
for i in $(seq 1 "$n"); do
  f=$tmp/run.$i.out
  printf '%-8s %14s %-10s %14s %6s\n' "$i" "$(field first_call_ms "$f")" \
    "$(field source "$f")" "$(field picked_up_ms "$f")" "$(field tunes "$f")"
  tunes=$((tunes + $(field tunes "$f")))
done
for name in late disk alone off; do
  f=$tmp/$name.out
  printf '%-8s %14s %-10s %14s %6s\n' "$name" "$(field first_call_ms "$f")" \
    "$(field source "$f")" "$(field picked_up_ms "$f")" "$(field tunes "$f")"
done
echo "late: started after the fleet, fresh disk, same Redis; disk: late's disk" \
  "again, no Redis; alone: no Redis, fresh disk; off: STC_TUNE=off"
echo "RESULT tunes_between_${n}=$tunes (goal 1)" \
  "first_call_ms_remote=$(field first_call_ms "$tmp/late.out")" \
  "first_call_ms_local_disk=$(field first_call_ms "$tmp/disk.out")" \
  "first_call_ms_tuned=$(field first_call_ms "$tmp/alone.out")" \
  "first_call_ms_reference=$(field first_call_ms "$tmp/off.out")"
