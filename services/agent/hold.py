"""``ashlar-agent hold``: attach a volume and keep it open, as an instance
does, serving commands from stdin, one per line, each answered by one JSON
line on stdout::

    write OFFSET HEX     write the bytes (hex) at OFFSET
    read OFFSET LENGTH   read LENGTH bytes at OFFSET (answered in hex)
    takeover             make this attachment the volume's writer (fences
                         the other writers), then reopen; only an
                         attachment the volume's project made for this
                         host (``hold VOLUME --attachment ID``) may
    reopen               reopen as the attachment's connection says now
    detach               close, detach and exit (a close that fails, as a
                         fenced host's flush does, is reported in
                         ``close_failed`` and the detach still happens)

A volume held this way is one librados instance for its whole life, as a
hypervisor's: a fence revokes exactly it, and its next write fails.
"""

import contextlib
from typing import Callable, Iterable

from services.agent import connector as agent_connector
from services.agent import volume_io

Say = Callable[[dict], None]


class Holder:
    """One attachment of this host, held open."""

    def __init__(self, host: agent_connector.HostConnector) -> None:
        self.host = host
        self.attachment: dict = {}
        self._stack = contextlib.ExitStack()
        #: The open volume, from ``serve``'s first ``_reopen`` on.
        self._volume: volume_io.VolumeHandle

    def serve(self, volume_id: str, instance_uuid: str | None,
              mode: str | None, commands: Iterable[str], say: Say,
              attachment_id: str | None = None) -> None:
        """Attach (through the project's ``attachment_id``, if given),
        open, then answer ``commands`` until ``detach``."""
        self.attachment = self.host.attach(volume_id, instance_uuid, mode,
                                           attachment_id)
        self._reopen()
        say({"attachment": self.attachment, "clients": self._volume.clients})
        for line in commands:
            words = line.split()
            if not words:
                continue
            try:
                answer = self._do(words)
            except Exception as exc:  # answered, and the next one is read
                answer = {"error": "%s: %s" % (type(exc).__name__, exc)}
            say(answer)
            if words[0] == "detach" and "error" not in answer:
                return
        self._close()

    def _do(self, words: list[str]) -> dict:
        verb, args = words[0], words[1:]
        if verb == "write":
            offset, data = int(args[0]), bytes.fromhex(args[1])
            return {"written": self._volume.write(offset, data)}
        if verb == "read":
            return {"data": self._volume.read(int(args[0]),
                                              int(args[1])).hex()}
        if verb == "takeover":
            answer = self.host.api.attachment_takeover(self.attachment["id"])
            self._reopen()
            return {"fenced": [row["id"] for row in answer["fenced"]],
                    "attach_mode": answer["attachment"]["attach_mode"]}
        if verb == "reopen":
            self._reopen()
            return {"reopened": self.attachment["id"],
                    "clients": self._volume.clients}
        if verb == "detach":
            failed = self._close()
            answer = self.host.detach(self.attachment["id"])
            return answer if failed is None else dict(answer,
                                                      close_failed=failed)
        raise ValueError("unknown command %r" % verb)

    def _close(self) -> str | None:
        """Close the volume; say how the close failed, if it did.

        NOTE(ashlar): a fenced host's last writes may sit in librbd's
        cache and fail only at the flush that closing the image does: the
        close fails, and the detach must still go through, or the fenced
        attachment stays behind.
        """
        stack, self._stack = self._stack, contextlib.ExitStack()
        try:
            stack.close()
        except Exception as exc:
            return "%s: %s" % (type(exc).__name__, exc)
        return None

    def _reopen(self) -> None:
        self._stack.close()
        self._stack = contextlib.ExitStack()
        self._volume = self._stack.enter_context(
            self.host.open(self.attachment["id"]))
