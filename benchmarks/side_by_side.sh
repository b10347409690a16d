#!/usr/bin/env bash
# Cinder 29 (the anchor, port 8776) and Ashlar (separate processes on
# RabbitMQ + a fresh database), measured one after the other in one run on
# this machine with identical bench.py flags, plus Ashlar's own scripts.
#
#   ANCHOR_HOME=/work/anchor-home [DB=mysql] benchmarks/side_by_side.sh
#
# Needs the anchor set up once (../shared/anchors/cinder/RESULTS.md).
# Every figure lands in $OUT (printed at the end) as JSON lines.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
ANCHOR="${ANCHOR:-$REPO/../shared/anchors/cinder}"
DB="${DB:-postgresql}"
OUT="${OUT:-$(mktemp -d /tmp/side-by-side-XXXXXX)}"
mkdir -p "$OUT"
export ANCHOR_HOME="${ANCHOR_HOME:?set ANCHOR_HOME to the anchor state folder}"
CINDER_EP="http://127.0.0.1:8776/v3/ba5eba11ba5eba11ba5eba11ba5eba11"

echo "== Cinder anchor (bench_anchor.sh: all scenarios)"
"$ANCHOR/bench_anchor.sh" > "$OUT/cinder-run.txt" 2>&1
cp "$(ls -td "$ANCHOR_HOME"/state/results/*/ | head -1)"/bench.jsonl "$OUT/cinder-bench.jsonl"
cp "$(ls -td "$ANCHOR_HOME"/state/results/*/ | head -1)"/procstats.json "$OUT/cinder-procstats.json"
"$ANCHOR/run.sh" > /dev/null
(cd "$REPO" && python3 -m benchmarks.create_latency --endpoint "$CINDER_EP" \
    --count 50 > "$OUT/cinder-create-latency.jsonl")
"$ANCHOR/stop.sh" > /dev/null

echo "== Ashlar ($DB)"
cd "$REPO"
python3 benchmarks/ma_cluster.py serve --db "$DB" > "$OUT/ashlar-serve.txt" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; wait $SERVE 2>/dev/null || true' EXIT
until grep -q "Ashlar ready" "$OUT/ashlar-serve.txt"; do
    kill -0 $SERVE || { cat "$OUT/ashlar-serve.txt"; exit 1; }; sleep 0.5; done
EP=$(grep -o "at http[^ ]*" "$OUT/ashlar-serve.txt" | cut -c4-)
STATE=$(grep -o "State and logs: .*" "$OUT/ashlar-serve.txt" | cut -d' ' -f4)
python3 "$ANCHOR/bench.py" --endpoint "$EP" --output "$OUT/ashlar-bench.jsonl" \
    --s6-start-cmd "python3 $HERE/ma_cluster.py extra start $STATE" \
    --s6-stop-cmd "python3 $HERE/ma_cluster.py extra stop $STATE" \
    --s6-pool-match "@extra#" --s6-backend-name extra \
    > /dev/null 2> "$OUT/ashlar-bench.stderr"
python3 -m benchmarks.create_latency --endpoint "$EP" --count 50 \
    > "$OUT/ashlar-create-latency.jsonl"
python3 benchmarks/procmem.py services.api services.scheduler services.volume \
    > "$OUT/ashlar-procmem.json"
echo "results in $OUT"
