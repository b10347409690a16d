"""``ashlar-scheduler``: place volumes until SIGTERM."""

from common import service
from services.scheduler import launcher


def main(argv: list[str] | None = None) -> None:
    conf = service.prepare_process(argv)
    svc = launcher.build_service(conf)
    svc.start()
    service.wait_for_signal([svc])


if __name__ == "__main__":
    main()
