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


def links(base_url: str, url_project: str | None, collection: str,
          item_id: str) -> list[dict]:
    """Self and bookmark links, with the project only if the URL had it."""
    project = "/%s" % url_project if url_project else ""
    return [{"rel": "self",
             "href": "%s/v3%s/%s/%s" % (base_url, project, collection, item_id)},
            {"rel": "bookmark",
             "href": "%s%s/%s/%s" % (base_url, project, collection, item_id)}]
