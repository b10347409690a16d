"""benchmarks.scale_sides: the runs' figures paired, by phase."""

import json

from benchmarks import scale_sides


def _write(path, records):
    path.write_text("a log line\n" + "".join(
        json.dumps(r) + "\n" for r in records) + "| a | table |\n")
    return str(path)


def _run(tmp_path, name, scale, side):
    reads = [{"figure": "read", "op": "volume_show", "p50_ms": 2.0 * scale,
              "api_cpu_ms_per_op": 1.0 * scale}]
    if side == "ashlar":
        reads.append(dict(reads[0], phase="loaded_no_reports",
                          p50_ms=1.0 * scale))
    return _write(tmp_path / name, reads + [
        {"phase": "empty", "scenario": "S3", "concurrency": 1,
         "cycle_ms": {"p50_ms": 5.0 * scale}},
        {"phase": "loaded", "scenario": "S3", "concurrency": 1,
         "cycle_ms": {"p50_ms": 6.0 * scale}},
        {"phase": "loaded_no_reports", "scenario": "S3", "concurrency": 1,
         "cycle_ms": {"p50_ms": 4.0 * scale}},
        {"phase": "loaded", "scenario": "S4", "all_attached_ms": 8.0 * scale},
        {"phase": "loaded", "figure": "boot_storm", "all_attached_s": scale,
         "attach_p99_ms": 3.0 * scale},
        {"figure": "paging", "all_tenants": True, "limit": 1000,
         "seconds": scale},
        {"phase": "loaded", "figure": "multiattach_storm", "hosts": 50,
         "all_attached_ms": None if side == "cinder" and scale == 30
         else 5.0 * scale}])


def test_pairs_runs_in_order_and_gives_the_ratio_span(tmp_path):
    ashlar = [scale_sides.figures(_run(tmp_path, "a%d" % i, s, "ashlar"),
                                  "loaded", "ashlar")
              for i, s in enumerate((1, 2))]
    cinder = [scale_sides.figures(_run(tmp_path, "c%d" % i, s, "cinder"),
                                  "loaded", "cinder")
              for i, s in enumerate((10, 30))]
    rows = scale_sides.table(ashlar, cinder).splitlines()
    assert "| S3 c=1 cycle p50 ms | 60–180 | 6–12 | 10–15× |" in rows
    assert "| volume_show p50 ms | 20–60 | 2–4 | 10–15× |" in rows
    assert "| S4 all attached p50 ms | 80–240 | 8–16 | 10–15× |" in rows
    assert "| boot storm p99 ms | 30–90 | 3–6 | 10–15× |" in rows
    assert "| paging all projects by 1000 s | 10–30 | 1–2 | 10–15× |" in rows
    assert ("| 50 hosts on one volume: all attached ms | 50, never in 1 of 2 "
            "| 5–10 | 10× |") in rows


def test_ashlar_phase_is_chosen_and_cinder_stays_loaded(tmp_path):
    quiet = scale_sides.figures(_run(tmp_path, "a", 1, "ashlar"),
                                "loaded_no_reports", "ashlar")
    assert quiet["volume_show p50 ms"] == 1.0
    assert quiet["S3 c=1 cycle p50 ms"] == 4.0
    cinder = scale_sides.figures(_run(tmp_path, "c", 1, "cinder"),
                                 "loaded_no_reports", "cinder")
    assert cinder["volume_show p50 ms"] == 2.0
    assert cinder["S3 c=1 cycle p50 ms"] == 6.0
    empty = scale_sides.figures(_run(tmp_path, "e", 1, "ashlar"),
                                "empty", "ashlar")
    assert empty == {"S3 c=1 cycle p50 ms": 5.0}
