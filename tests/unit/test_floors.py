"""benchmarks.floors: the cycle's CPU floor, process by process."""

from benchmarks import floors


def test_cpu_floor_by_process_puts_each_piece_where_it_runs() -> None:
    found = {
        "http": {"p50_ms": 1.0, "cpu_ms": {"api": 0.5, "this_process": 0.7}},
        "rpc": {"p50_ms": 1.8, "cpu_ms": {"rabbitmq": 0.4,
                                          "this_process": 1.5}},
        "sql": {"select": {"p50_ms": 0.1, "cpu_ms": {"mariadb": 0.08,
                                                     "this_process": 0.04}},
                "update": {"p50_ms": 0.3, "cpu_ms": {"mariadb": 0.2,
                                                     "this_process": 0.04}}},
        "cycle": {"p50_ms": 20.0, "statements_per_cycle": 20.0,
                  "log_writes_per_cycle": 5.0,
                  "cpu_ms": {"api": 9.0, "volume": 4.0, "rabbitmq": 1.0,
                             "mariadb": 2.0, "client": 4.0,
                             "scheduler": 0.1}}}
    by = floors.floor(found)["cycle_cpu_floor_by_process_ms"]
    assert by["client"] == {"floor": 2.8, "cycle": 4.0, "over": 1.2}
    # 4 requests' 0.5, both rpc ends' 1.5, 20 statements' 0.04
    assert by["api"] == {"floor": 4.3, "cycle": 9.0, "over": 4.7}
    assert by["volume"] == {"floor": 1.5, "cycle": 4.0, "over": 2.5}
    assert by["rabbitmq"]["floor"] == 0.8
    assert by["mariadb"] == {"floor": 1.6, "cycle": 2.0, "over": 0.4}
