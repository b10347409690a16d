"""``ashlar-volume``: run this node's backends until SIGTERM."""

from common import service
from services.volume import launcher


def main(argv: list[str] | None = None) -> None:
    conf = service.prepare_process(argv)
    service.catch_stop_signals()
    services = launcher.build_services(conf)
    for svc in services:
        svc.start()
    service.serve_until_signal(services)


if __name__ == "__main__":
    main()
