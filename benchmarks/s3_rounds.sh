#!/usr/bin/env bash
# The attach cycle (bench.py S3 at one concurrency) on Cinder 29 and on
# Ashlar, both running, in alternating rounds, so that both sides of each
# ratio see the same phase of this machine's drifting speed.
#
#   ANCHOR_HOME=/work/anchor-home [DB=mysql] [ROUNDS=3] [CONCURRENCY=8] \
#       [ASHLAR_CYCLES=2000] benchmarks/s3_rounds.sh
#
# Cinder runs 200 cycles a round (bench.py's default), Ashlar
# ASHLAR_CYCLES (2000: about as long, so that both sides of a ratio span
# the same stretch of this machine's drift, not a few seconds of it).
# Prints, per round, each side's cycles/s, the creates it refused and
# whether the volume ended available with no attachment, then the ratio;
# last, the ratio of the two medians.  Needs the anchor set up once
# (../shared/anchors/cinder/RESULTS.md).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
ANCHOR="${ANCHOR:-$REPO/../shared/anchors/cinder}"
export ANCHOR_HOME="${ANCHOR_HOME:?set ANCHOR_HOME to the anchor state folder}"
ROUNDS="${ROUNDS:-3}"
CONCURRENCY="${CONCURRENCY:-8}"
ASHLAR_CYCLES="${ASHLAR_CYCLES:-2000}"
CINDER_EP="http://127.0.0.1:8776/v3/ba5eba11ba5eba11ba5eba11ba5eba11"
WORK="$(mktemp -d /tmp/s3-rounds-XXXXXX)"

"$ANCHOR/stop.sh" > /dev/null 2>&1 || true
"$ANCHOR_HOME/venv/bin/cinder-manage" --config-file "$ANCHOR/etc/cinder.conf" \
    db purge 0 > /dev/null 2>&1 || true
"$ANCHOR/run.sh" > "$WORK/cinder-run.txt"
cd "$REPO"
python3 benchmarks/ma_cluster.py serve --db "${DB:-postgresql}" \
    > "$WORK/ashlar-serve.txt" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; wait $SERVE 2>/dev/null || true;
      "$ANCHOR/stop.sh" > /dev/null 2>&1 || true' EXIT
until grep -q "State and logs" "$WORK/ashlar-serve.txt"; do
    kill -0 $SERVE || { cat "$WORK/ashlar-serve.txt"; exit 1; }; sleep 0.5; done
EP=$(grep -o "at http[^ ]*" "$WORK/ashlar-serve.txt" | cut -c4-)

# One S3 run: "cycles/s refused final_ok" on stdout.
s3() {
    rm -f "$WORK/s3.jsonl"
    python3 "$ANCHOR/bench.py" --endpoint "$1" --scenarios S3 \
        --s3-concurrency "$CONCURRENCY" --s3-cycles "$2" \
        --output "$WORK/s3.jsonl" > /dev/null 2>&1
    tail -1 "$WORK/s3.jsonl" | python3 -c '
import json, sys
level = json.load(sys.stdin)["levels"][0]
print(level["cycles_per_s"],
      sum(level["create_rejections_by_status"].values()),
      level["final_state_ok"])'
}

C_RATES=""
A_RATES=""
for round in $(seq "$ROUNDS"); do
    read -r c_rate c_refused c_ok <<< "$(s3 "$CINDER_EP" 200)"
    read -r a_rate a_refused a_ok <<< "$(s3 "$EP" "$ASHLAR_CYCLES")"
    C_RATES="$C_RATES $c_rate,"
    A_RATES="$A_RATES $a_rate,"
    python3 -c "
print('round %s: Cinder %.2f cycles/s (%s refused, final ok %s), '
      'Ashlar %.2f (%s refused, final ok %s): %.1fx'
      % ($round, $c_rate, $c_refused, '$c_ok', $a_rate, $a_refused, '$a_ok',
         $a_rate / $c_rate))"
done
python3 -c "
import statistics
c, a = statistics.median([$C_RATES]), statistics.median([$A_RATES])
print('medians: Cinder %.2f, Ashlar %.2f cycles/s: %.1fx' % (c, a, a / c))"
