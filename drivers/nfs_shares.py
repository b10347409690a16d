"""The NFS backend's shares: ``nfs_shares_config`` read into libnfs URLs.

One share a line, as Cinder's ``nfs_shares_config``: ``host:/export``
followed, optionally, by mount options (``-o port=2049,vers=3``), or a
libnfs URL (``nfs://host/export?nfsport=N&mountport=M``).  Blank lines
and lines starting with ``#`` are skipped.  Nothing here mounts: neither
the volume node nor the compute hosts have a kernel NFS client, so a
share is reached through libnfs with the URL made here.
"""

import dataclasses
import re
import shlex
import urllib.parse

from common import exception

#: Mount options (``-o``) that become libnfs URL options.
_URL_OPTIONS = {"port": "nfsport", "nfsport": "nfsport",
                "mountport": "mountport", "vers": "version",
                "nfsvers": "version"}
_EXPORT_RE = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+)"
                        r":(?P<path>/\S*)$")


@dataclasses.dataclass(frozen=True)
class Share:
    """One share of ``nfs_shares_config``.

    :ivar export: Cinder's ``host:/path``, sent in ``connection_info``.
    :ivar options: the line's mount options as written (may be empty).
    :ivar url: the libnfs URL of the share (its ports, if given).
    """

    export: str
    options: str
    url: str


def parse_line(line: str) -> Share | None:
    """The share a line of ``nfs_shares_config`` names; None for a blank
    line or a comment.

    :raises InvalidInput: the line names no share, or gives an option
        with no value.
    """
    words = line.strip().split(None, 1)
    if not words or words[0].startswith("#"):
        return None
    address, options = words[0], (words[1] if len(words) > 1 else "")
    if address.startswith("nfs://"):
        return _from_url(address, options)
    match = _EXPORT_RE.match(address)
    if match is None:
        raise exception.InvalidInput(
            reason="%r is not an NFS share: write host:/path or "
            "nfs://host/path?options" % address)
    query = _url_query(options)
    url = "nfs://%s%s" % (match["host"], match["path"])
    return Share(export=address, options=options,
                 url=url + ("?" + query if query else ""))


def _from_url(url: str, options: str) -> Share:
    parsed = urllib.parse.urlsplit(url)
    if not parsed.hostname or not parsed.path.startswith("/"):
        raise exception.InvalidInput(
            reason="%r is not an NFS share URL: nfs://host/path" % url)
    host = parsed.netloc.rsplit("@", 1)[-1]
    return Share(export="%s:%s" % (host, parsed.path), options=options,
                 url=url)


def _url_query(options: str) -> str:
    """libnfs URL options from mount options (``-o a=1,b=2``); those
    libnfs has no use for are left out of the URL."""
    query = []
    words = shlex.split(options)
    for index, word in enumerate(words):
        if word != "-o":
            continue
        if index + 1 >= len(words):
            raise exception.InvalidInput(
                reason="mount options %r: -o without options" % options)
        for option in words[index + 1].split(","):
            key, _sep, value = option.partition("=")
            if key in _URL_OPTIONS:
                if not value:
                    raise exception.InvalidInput(
                        reason="mount option %r has no value" % option)
                query.append((_URL_OPTIONS[key], value))
    return urllib.parse.urlencode(query)


def parse(text: str, source: str = "nfs_shares_config") -> list[Share]:
    """Every share of a shares file's ``text``, in order, once each.

    :raises InvalidInput: a line names no share (its number is given).
    """
    shares: list[Share] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            share = parse_line(line)
        except exception.InvalidInput as exc:
            raise exception.InvalidInput(
                reason="%s line %d: %s" % (source, number, exc.msg)) from exc
        if share is not None and share.export not in {
                known.export for known in shares}:
            shares.append(share)
    return shares
