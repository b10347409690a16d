"""Response bodies, one module per resource, in Cinder's shapes."""

import datetime


def timestamp(value: datetime.datetime | None) -> str | None:
    """Cinder's naive-UTC form, ``YYYY-MM-DDTHH:MM:SS.ffffff``."""
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f") if value else None


def links(base_url: str, url_project: str | None, collection: str,
          item_id: str) -> list[dict]:
    """Self and bookmark links, with the project only if the URL had it."""
    project = "/%s" % url_project if url_project else ""
    return [{"rel": "self",
             "href": "%s/v3%s/%s/%s" % (base_url, project, collection, item_id)},
            {"rel": "bookmark",
             "href": "%s%s/%s/%s" % (base_url, project, collection, item_id)}]
