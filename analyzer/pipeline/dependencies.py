"""Dependencies with a target profile of their own (burn's GPU backends run on cubecl): which
revision of each the analysed repository's Cargo.lock pins, read from git objects at the analysed
revision, and the one records file and manifest entry that both repositories' records make.

A package is a profile's when the profile's `packages` say so (a name, or a name prefix). Its pin
is a git source's commit (`git+URL?rev=..#<full sha>`: the sha after `#`, what Cargo resolved
the rev, branch or tag to), or a registry version, which is the commit of the profile's release
tag for it (`v{version}`). Packages of one profile pinned to several revisions (two versions in
one lock) are analysed at the revision most of them share; the others are listed with it.

A dependency is only ever fetched from its profile's URL: the lock comes with the code analysed (a
pull request's own), so a git source it names elsewhere (a fork, `file://`, any host) is reported
(Pin.foreign) and never fetched; `--dependency-repo` reads it from a clone the user names.
"""

from __future__ import annotations

import re
from analyzer.core.toml import tomllib
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from analyzer.core.errors import UserError
from analyzer.profiles import Profile
from analyzer.source.repository import GitRepository
from analyzer.source.urls import slug_from_url

LOCKFILE = "Cargo.lock"
_SHA = re.compile(r"[0-9a-f]{40}")
_REGISTRY = ("registry+", "sparse+")


@dataclass(frozen=True)
class Pin:
    """What a lock file pins of one profile's repository."""

    profile: Profile
    name: str  # owner/name of the repository records are made for
    url: str  # where it is fetched from unless --dependency-repo says otherwise
    kind: str  # "git" (a commit) or "registry" (a version, found by its release tag)
    rev: str  # git: the full commit sha; registry: the release tag
    version: str
    packages: tuple[str, ...]
    others: tuple[str, ...] = ()  # packages of the profile pinned to another revision
    # The git source the lock names when it is not the profile's repository: never fetched (the
    # lock comes with the code under analysis, a pull request's included), only reported.
    foreign: str = ""

    def wanted(self) -> str:
        """The revision to resolve in the repository: the commit, or the tag's ref."""
        return self.rev if self.kind == "git" else f"refs/tags/{self.rev}"

    def describe(self) -> str:
        if self.kind == "git":
            return f"{LOCKFILE} pins commit {self.rev[:12]}"
        return f"{LOCKFILE} pins version {self.version} from the registry, tag {self.rev}"

    def to_json(self) -> dict:
        out = {"lockfile": LOCKFILE, "kind": self.kind, "version": self.version, "packages": list(self.packages)}
        out["rev" if self.kind == "git" else "tag"] = self.rev
        if self.others:
            out["otherPackages"] = list(self.others)
        return out


def read_lock(repo: GitRepository, sha: str) -> dict:
    """The lock file at `sha`, parsed; a UserError when there is none or it is not TOML."""
    data = repo.read_files(sha, [LOCKFILE]).get(LOCKFILE)
    if data is None:
        raise UserError(f"--with-dependencies: no {LOCKFILE} at {sha[:12]} in {repo.origin}; the pinned "
                        f"revisions of the dependencies are read from it")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UserError(f"--with-dependencies: {LOCKFILE} at {sha[:12]} is not TOML: {e}") from None


def pins(lock: dict, targets: list[Profile]) -> list[Pin]:
    """The pin of each of `targets` whose packages the lock holds, by repository name."""
    packages = lock.get("package")
    if not isinstance(packages, list):
        return []
    found = []
    for profile in targets:
        by_pin: dict[tuple[str, str, str, str, str, str], list[str]] = {}
        for p in packages:
            if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not profile.packages.owns(p["name"]):
                continue
            pin = _pin_of(p, profile)
            if pin is not None:
                by_pin.setdefault(pin, []).append(p["name"])
        if not by_pin:
            continue
        counts = Counter({k: len(v) for k, v in by_pin.items()})
        best = max(sorted(counts), key=lambda k: counts[k])  # most packages; ties by the sorted first
        name, url, kind, rev, version, foreign = best
        others = sorted(n for k, names in by_pin.items() if k != best for n in names)
        found.append(Pin(profile, name, url, kind, rev, version, tuple(sorted(by_pin[best])), tuple(others), foreign))
    return sorted(found, key=lambda p: p.name)


def _pin_of(package: dict, profile: Profile) -> tuple[str, str, str, str, str, str] | None:
    """(repository name, URL, kind, revision, version, foreign source) of a locked package; None
    for one of the workspace itself (no source) or of a source that names no revision. Only the
    profile's own repository is ever given as the URL; a git source elsewhere is its `foreign`."""
    source, version = package.get("source"), str(package.get("version", ""))
    if not isinstance(source, str):
        return None
    if source.startswith("git+"):
        parts = urlsplit(source[len("git+"):])
        if not _SHA.fullmatch(parts.fragment):
            return None
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        if _same_repository(url, profile.repository.url):
            return profile.repository.name, profile.repository.url, "git", parts.fragment, version, ""
        # Another source (a fork, a local path, any host): named after it, fetched from nowhere.
        return slug_from_url(url) or profile.repository.name, "", "git", parts.fragment, version, url
    if source.startswith(_REGISTRY) and version:
        tag = profile.packages.release_tag.format(version=version)
        return profile.repository.name, profile.repository.url, "registry", tag, version, ""
    return None


def _same_repository(url: str, profile_url: str) -> bool:
    """Whether a lock's git source is the profile's repository: the same https host and
    owner/name (GitHub's names are case-blind; a `.git` suffix or a trailing slash aside)."""
    def canonical(u: str) -> tuple[str, str, str]:
        parts = urlsplit(u)
        path = parts.path.rstrip("/").removesuffix(".git").lower()
        return parts.scheme.lower(), parts.netloc.lower(), path
    got = canonical(url)
    return got[0] == "https" and got == canonical(profile_url)


def parse_overrides(values: tuple[str, ...]) -> dict[str, str]:
    """`--dependency-repo OWNER/NAME=PATH|URL` values, by OWNER/NAME."""
    from analyzer.source.urls import REPO_NAME

    out: dict[str, str] = {}
    for value in values:
        name, sep, where = value.partition("=")
        if not sep or not REPO_NAME.match(name) or not where:
            raise UserError(f"--dependency-repo {value!r} is not OWNER/NAME=PATH|URL (the "
                            f"dependency's repository name, then where to read it: a clone or a git URL)")
        out[name] = where
    return out


def sort_key(line) -> tuple:
    """Records of several repositories: by repository, then file, line and column."""
    return (line.record.repo, line.record.filePath, line.record.lineNumber, line.facts.column)
