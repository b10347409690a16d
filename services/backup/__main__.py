"""``ashlar-backup``: back up and restore volumes until SIGTERM."""

from common import service
from services.backup import launcher


def main(argv: list[str] | None = None) -> None:
    service.run_service(launcher.build_service, argv)


if __name__ == "__main__":
    main()
