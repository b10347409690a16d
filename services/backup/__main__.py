"""``ashlar-backup``: back up and restore volumes until SIGTERM."""

from common import service
from services.backup import launcher


def main(argv: list[str] | None = None) -> None:
    conf = service.prepare_process(argv)
    svc = launcher.build_service(conf)
    svc.start()
    service.wait_for_signal([svc])


if __name__ == "__main__":
    main()
