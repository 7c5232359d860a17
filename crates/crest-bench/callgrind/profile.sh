#!/bin/bash
# Instruction counts of N creates of issue 27's shape (shape_client.py: 64 client-certificate
# TLS connections, the seed's CronTab schema, 2,624-byte generateName bodies) in a server run
# under callgrind, after 128 warm-up creates on the same connections (so neither startup nor the
# TLS handshakes are counted).
#   crates/crest-bench/callgrind/profile.sh target/release/crest /tmp/cg 640
#   -> /tmp/cg/incl.txt: callgrind_annotate --inclusive=yes; divide by N for one create.
set -eu
B=$1; D=$2; N=${3:-640}
HERE=$(cd "$(dirname "$0")" && pwd)
export WORK=$D
rm -rf "$D"; mkdir -p "$D/data"; chmod 700 "$D/data"
valgrind --tool=callgrind --callgrind-out-file="$D/cg.out" "$B" serve --data-dir "$D/data" \
  --listen 127.0.0.1:0 > "$D/server.log" 2>&1 &
VPID=$!
for _ in $(seq 1 400); do [ -f "$D/data/kubeconfig" ] && break; sleep 1; done; sleep 5
timeout 300 python3 "$HERE/shape_client.py" "$D/data" 0 1 crd
WARM=128 timeout 600 python3 "$HERE/shape_client.py" "$D/data" "$N" 64 2> "$D/client.log" &
CPID=$!
while ! grep -q warm "$D/client.log"; do sleep 0.5; done
callgrind_control -z $VPID > /dev/null
touch "$D/go"
wait $CPID
callgrind_control -d $VPID > /dev/null
sleep 1
kill $VPID; wait $VPID 2>/dev/null || true
cat "$D/client.log"
callgrind_annotate --inclusive=yes "$D/cg.out.1" > "$D/incl.txt" 2>/dev/null
grep "PROGRAM TOTALS" "$D/incl.txt"
