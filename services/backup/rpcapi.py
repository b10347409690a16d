"""Client side of the backup service's RPC API."""

from common import constants
from common import rpc
from common.context import RequestContext


class BackupAPI(rpc.RPCAPI):
    """Client of ``ashlar-backup`` servers named ``host``.

    API version history::

        1.0 - Initial version: create_backup, restore_backup,
              delete_backup (casts).
        1.1 - import_record (cast): check an imported record against the
              store, then make the backup available.
    """

    TOPIC = constants.BACKUP_TOPIC
    BINARY = constants.BACKUP_BINARY
    RPC_API_VERSION = "1.1"
    #: What an import needs of the backup service.
    IMPORT_VERSION = "1.1"

    def create_backup(self, ctxt: RequestContext, host: str,
                      backup_id: str) -> None:
        """Back up a ``creating`` backup's ``backing-up`` volume (cast)."""
        self._prepare(server=host, version="1.0").cast(
            ctxt, "create_backup", backup_id=backup_id)

    def restore_backup(self, ctxt: RequestContext, host: str, backup_id: str,
                       volume_id: str, new_volume: bool) -> None:
        """Restore a ``restoring`` backup into a volume: ``new_volume``, one
        being created (the service waits until it is available), else one
        already ``restoring-backup`` (cast)."""
        self._prepare(server=host, version="1.0").cast(
            ctxt, "restore_backup", backup_id=backup_id, volume_id=volume_id,
            new_volume=new_volume)

    def delete_backup(self, ctxt: RequestContext, host: str,
                      backup_id: str) -> None:
        """Remove a ``deleting`` backup's data, then its row (cast)."""
        self._prepare(server=host, version="1.0").cast(
            ctxt, "delete_backup", backup_id=backup_id)

    def import_record(self, ctxt: RequestContext, host: str, backup_id: str,
                      backup_service: str, backup_url: str) -> None:
        """Check a ``creating`` imported backup's record against the store
        and make it available (cast; ``require(IMPORT_VERSION)`` first)."""
        self._prepare(server=host, version=self.IMPORT_VERSION).cast(
            ctxt, "import_record", backup_id=backup_id,
            backup_service=backup_service, backup_url=backup_url)
