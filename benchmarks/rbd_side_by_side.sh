#!/usr/bin/env bash
# Cinder 29's own RBD driver (the anchor's rbd/ folder, port 8798) and
# Ashlar's rbd backend (benchmarks/rbd_cluster.py), on THE
# SAME throwaway Ceph cluster, in one run: RUNS rounds, each a fresh start
# of Cinder then of Ashlar (fresh database and vhost), each measured by the
# same bench.py with the same flags, and Cinder's snapshot/clone latency
# after its last run; then, on one more Ashlar deployment, snapshot/clone
# latency (rbd, raw file, qcow2 file) and the data path.
#
#   ANCHOR_HOME=/work/anchor-home [RUNS=3] [DB=mysql] \
#       benchmarks/rbd_side_by_side.sh ANCHOR_DIR
#
# ANCHOR_DIR is the Cinder anchor's folder (bench.py, stop.sh, rbd/...),
# ANCHOR_HOME its venv and state (benchmarks/README.md).
# Needs the RBD anchor's one-time setup (its README.md).  Starts the cluster
# with the anchor's ceph-up.sh in /tmp/ceph-anchor (the path in
# cinder-rbd.conf) unless one runs there already; stops what it started.
# Every figure lands in $OUT as JSON lines; the summary is printed at the end.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
ANCHOR="$(cd "${1:?usage: $0 ANCHOR_DIR}" && pwd)"
RBD="$ANCHOR/rbd"
RUNS="${RUNS:-3}"
DB="${DB:-mysql}"
OUT="${OUT:-$(mktemp -d /tmp/rbd-side-by-side-XXXXXX)}"
export ANCHOR_HOME="${ANCHOR_HOME:?set ANCHOR_HOME to the anchor state folder}"
export STATE="$ANCHOR_HOME/state-rbd" CEPH_DIR=/tmp/ceph-anchor
export CEPH_MON_V2_PORT="${CEPH_MON_V2_PORT:-13300}"
export CEPH_MON_V1_PORT="${CEPH_MON_V1_PORT:-16789}"
export CEPH_MS_PORT_MIN="${CEPH_MS_PORT_MIN:-7400}"
export CEPH_MS_PORT_MAX="${CEPH_MS_PORT_MAX:-7900}"
CONF="$CEPH_DIR/ceph.conf"
KEYRING="$CEPH_DIR/ceph.client.cinder.keyring"
CINDER_EP="http://127.0.0.1:8798/v3/ba5eba11ba5eba11ba5eba11ba5eba11"
BENCH=(python3 "$ANCHOR/bench.py" --scenarios S1,S2,S3,S4,S5
       --poll-interval 0.005)
mkdir -p "$OUT" "$STATE"
SERVE=""
EP=""
STARTED_CEPH=0

stop_ashlar() {
    [[ -n "$SERVE" ]] || return 0
    kill "$SERVE" 2>/dev/null || true; wait "$SERVE" 2>/dev/null || true
    SERVE=""
}
cleanup() {
    stop_ashlar
    "$ANCHOR/stop.sh" > /dev/null 2>&1 || true
    [[ $STARTED_CEPH == 1 ]] && "$RBD/ceph-down.sh" > "$OUT/ceph-down.txt" 2>&1
    return 0
}
trap cleanup EXIT

serve_ashlar() {  # serve_ashlar LOG [--file]: sets SERVE and EP
    local log="$1"; shift
    (cd "$REPO" && exec python3 -m benchmarks.rbd_cluster serve --db "$DB" \
        --ceph-conf "$CONF" --keyring "$KEYRING" "$@") > "$log" 2>&1 &
    SERVE=$!
    until grep -q "Ashlar ready" "$log"; do
        kill -0 "$SERVE" || { cat "$log" >&2; exit 1; }; sleep 0.5; done
    EP=$(grep -o "at http[^ ]*" "$log" | cut -c4-)
}

if ! ceph -c "$CONF" --connect-timeout 5 health > /dev/null 2>&1; then
    echo "== Ceph (ceph-up.sh, $CEPH_DIR)"
    STARTED_CEPH=1
    "$RBD/ceph-up.sh" > "$OUT/ceph-up.txt" 2>&1
fi

for run in $(seq 1 "$RUNS"); do
    echo "== run $run: Cinder on RBD (fresh start)"
    "$ANCHOR/stop.sh" > /dev/null 2>&1 || true
    "$ANCHOR_HOME/venv/bin/cinder-manage" --config-file "$RBD/cinder-rbd.conf" \
        db purge 0 > /dev/null 2>&1 || true
    "$RBD/run-rbd.sh" > "$OUT/cinder-start.$run.txt"
    "${BENCH[@]}" --endpoint "$CINDER_EP" \
        --prefix "cinder$run" --output "$OUT/cinder-rbd.jsonl" \
        > /dev/null 2> "$OUT/cinder-bench.$run.stderr"
    if [[ $run == "$RUNS" ]]; then
        echo "== Cinder: snapshots and clones"
        (cd "$REPO" && python3 -m benchmarks.snapshot_latency --side cinder \
            --endpoint "$CINDER_EP" --backend anchor_ma \
            --count "${SNAP_COUNT:-20}" > "$OUT/snapshot-latency.jsonl")
    fi
    "$ANCHOR/stop.sh" > /dev/null

    echo "== run $run: Ashlar on RBD (fresh start)"
    serve_ashlar "$OUT/ashlar-serve.$run.txt"
    "${BENCH[@]}" --endpoint "$EP" --prefix "ashlar$run" \
        --output "$OUT/ashlar-rbd.jsonl" \
        > /dev/null 2> "$OUT/ashlar-bench.$run.stderr"
    stop_ashlar
done

echo "== Ashlar: snapshots, clones and the data path"
serve_ashlar "$OUT/ashlar-serve.extra.txt" --file
(cd "$REPO" && python3 -m benchmarks.snapshot_latency --endpoint "$EP" \
    --backend rbd --backend file --backend plain --count "${SNAP_COUNT:-20}" \
    >> "$OUT/snapshot-latency.jsonl")
(cd "$REPO" && python3 -m benchmarks.data_path --endpoint "$EP" \
    --ceph-conf "$CONF" --keyring-dir "$CEPH_DIR" --total 256 --block 4 \
    --rounds 3 > "$OUT/data-path.jsonl" 2> "$OUT/data-path.stderr")
stop_ashlar

for side in cinder ashlar; do
    echo "== $side on RBD, bench.py: median [min-max] of $RUNS runs"
    python3 "$RBD/summarize.py" "$OUT/$side-rbd.jsonl"
done
(cd "$REPO" && python3 -m benchmarks.rbd_compare --cinder "$OUT/cinder-rbd.jsonl" \
    --ashlar "$OUT/ashlar-rbd.jsonl" --snapshots "$OUT/snapshot-latency.jsonl" \
    --data-path "$OUT/data-path.jsonl")
echo "results in $OUT"
