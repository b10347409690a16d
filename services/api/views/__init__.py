"""Response bodies, one module per resource, in Cinder's shapes."""

import datetime


def timestamp(value: datetime.datetime | None) -> str | None:
    """Cinder's naive-UTC form, ``YYYY-MM-DDTHH:MM:SS.ffffff``.

    NOTE(ashlar): ``isoformat`` spells a naive time from year 1000 on the
    same way, at half the CPU of ``strftime`` (two per row of a list).
    """
    if not value:
        return None
    if value.tzinfo is None and value.year >= 1000:
        return value.isoformat(timespec="microseconds")
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f")


class Links:
    """A collection's self and bookmark links, with the project only if
    the URL had it; the prefixes made once (a list view's rows share
    them)."""

    def __init__(self, base_url: str, url_project: str | None,
                 collection: str) -> None:
        project = "/%s" % url_project if url_project else ""
        self._self = "%s/v3%s/%s/" % (base_url, project, collection)
        self._bookmark = "%s%s/%s/" % (base_url, project, collection)

    def __call__(self, item_id: str) -> list[dict]:
        return [{"rel": "self", "href": self._self + item_id},
                {"rel": "bookmark", "href": self._bookmark + item_id}]


def links(base_url: str, url_project: str | None, collection: str,
          item_id: str) -> list[dict]:
    """Self and bookmark links of one item."""
    return Links(base_url, url_project, collection)(item_id)
