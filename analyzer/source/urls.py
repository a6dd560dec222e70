"""Repository addresses: whether a --repo is a URL, the owner/name a URL or origin remote names,
and whether an origin is a folder on this machine. Plain string work, no git process."""

from __future__ import annotations

import re

_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.I)
# Compiled by re on first use, as the patterns below are: a run that never needs one pays nothing.
_SLUG = r"[:/]([^/:]+)/([^/]+?)(?:\.git)?/?$"


def is_url(spec: str) -> bool:
    return bool(_URL.match(spec))


_NAME_PART = r"^[A-Za-z0-9._-]{1,100}$"
REPO_NAME = re.compile(r"^[^/\s]+/[^/\s]+$")  # what a record's `repo` may hold
# URL schemes git may fetch from here; gitpython refuses the rest (ext::, fd::) and so does this.
ALLOWED_SCHEMES = ("https", "http", "ssh", "git", "file", "git+ssh", "ssh+git")
TRANSPORT = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)::")


def slug_from_url(url: str) -> str | None:
    """`https://HOST/owner/name(.git)` or `git@HOST:owner/name` -> owner/name;
    None when the URL does not end in an owner and a name of the characters GitHub allows (an
    origin with spaces or control characters names no repository we could link to)."""
    m = re.search(_SLUG, url)
    if not m or not re.match(_NAME_PART, m.group(1)) or not re.match(_NAME_PART, m.group(2)):
        return None
    return f"{m.group(1)}/{m.group(2)}"


# git's scp-like form, `[user@]host:path`: a colon before any slash (a drive letter is a path).
_SCP_LIKE = r"^(?:[^@/:\s]+@)?[^@/:\s]+:(?![\\/])"
_DRIVE = r"^[A-Za-z]:(?:[\\/]|$)"


def local_origin_path(url: str) -> str | None:
    """The folder an origin remote names when it is on this machine (a path, or a `file://`
    URL), else None: a remote URL (https, ssh, `git@host:owner/name`)."""
    if "://" in url:
        scheme, _, rest = url.partition("://")
        return rest if scheme.lower() == "file" else None
    if re.match(_SCP_LIKE, url) and not re.match(_DRIVE, url):
        return None
    return url


def origin_name(url: str) -> str | None:
    """owner/name from the repository's origin remote `url`, if it is a remote URL that names it. A
    local path's last two folders are no owner and name (`/home/me/src/burn` is not `src/burn`)."""
    return slug_from_url(url) if url and local_origin_path(url) is None else None
