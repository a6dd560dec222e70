"""Target profiles: what the analysis knows about one repository that is not Rust itself (its
default URL and pin, its link shape, its backend-trait and dtype-enum conventions, its test code,
how prompts name it), one versioned TOML file per target in this folder (`burn.toml`, the
default), read into frozen dataclasses and checked as they are read.

One target is current at a time: the CLI makes the `--target` one current once, before anything
reads it (`select`), and a run that analyses another repository on the way does it inside
`using(profile)`. The stages read `current()` where they need a value instead of taking a
profile parameter through every call from the command to the parser, the classifier rules, the
record builder and the sinks. Parser processes are handed the current profile when they start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import re
import string
from analyzer.core.toml import tomllib
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from analyzer.core.errors import UserError

FORMAT_VERSION = 1
DEFAULT = "burn"
SUFFIX = ".toml"
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_REPO_NAME = re.compile(r"^[^/\s]+/[^/\s]+$")
_LINK_FIELDS = {"repository": {"repo"}, "blob": {"repo", "sha", "path", "start", "end"},
                "commit": {"repo", "sha"}, "compare": {"repo", "base", "head"}, "new_issue": {"repo"}}


@dataclass(frozen=True)
class Repository:
    url: str
    name: str
    pin: str


@dataclass(frozen=True)
class Links:
    """Address templates (str.format fields, values already percent-encoded)."""

    repository: str
    blob: str
    commit: str
    compare: str
    new_issue: str


@dataclass(frozen=True)
class Code:
    backend_trait: str
    ops_trait_suffix: str
    ops_trait_kinds: tuple[tuple[str, str], ...]
    crate_tag_prefixes: tuple[str, ...]
    claims_methods: tuple[str, ...]


@dataclass(frozen=True)
class Dtypes:
    primary_enum: str
    kinds: tuple[tuple[str, str], ...]
    foreign_kind_method: str
    foreign_kind_enum: str
    foreign_enums: tuple[str, ...]
    foreign_non_exhaustive: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Tests:
    paths: str
    attributes: tuple[str, ...]


@dataclass(frozen=True)
class Packages:
    """The crates this repository publishes, as another workspace's Cargo.lock names them (a
    name in `names`, or one starting with one of `prefixes`, but none in `foreign`), and the tag
    a registry release of them is cut from (`release_tag`, with {version})."""

    names: tuple[str, ...]
    prefixes: tuple[str, ...]
    foreign: tuple[str, ...]
    release_tag: str

    def owns(self, package: str) -> bool:
        return package not in self.foreign and (
            package in self.names or any(package.startswith(p) for p in self.prefixes))


@dataclass(frozen=True)
class Runtimes:
    """What a runtime or compiler dialect is (cubecl's wgpu, CUDA, the C++ compiler's Metal
    dialect): `rows` are (name, a regex over a file's path in the tree), the rows of `coverage`'s
    runtimes view; `enums` the element-type enums its columns come from; `features` (name, a
    regex over a record's file, function, arm pattern and message) the feature columns; and
    `backends` (a crate of this repository, a regex over a dependency's row names): which runtimes
    of a dependency a backend crate runs on, whose limits its coverage shows."""

    rows: tuple[tuple[str, str], ...]
    enums: tuple[str, ...]
    features: tuple[tuple[str, str], ...]
    backends: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Prompt:
    kind: str


@dataclass(frozen=True)
class Audience:
    """Crates whose callers are not the users of a model but the authors of kernels: `kernel_api`
    (the kernel language, its standard library and IR, which kernels are written against) and
    `compile_time` (proc-macro crates whose input is kernel source); and `kernel_dtypes`, the
    element types only kernels hold, never a user's tensor."""

    kernel_api: tuple[str, ...]
    compile_time: tuple[str, ...]
    kernel_dtypes: tuple[str, ...]


@dataclass(frozen=True)
class Reach:
    """What the reach verdict (decisions/preemption.py) knows of the target: `creation`, a regex
    over ops-method names by which a tensor of a kind comes into being (made from data or empty,
    converted into the kind); `backward_suffix`, how a backward operation's name extends its
    forward's; `gradient_backends`, the backend types that compute gradients by wrapping another
    backend, whose own backward operations only another of them calls; `nested_refusal`, a regex
    over the message of the refusal by which the API refuses to nest them."""

    creation: str
    backward_suffix: str
    gradient_backends: tuple[str, ...]
    nested_refusal: str


@dataclass(frozen=True)
class Profile:
    format_version: int
    name: str
    repository: Repository
    links: Links
    code: Code
    dtypes: Dtypes
    tests: Tests
    packages: Packages
    runtimes: Runtimes
    prompt: Prompt
    audience: Audience
    reach: Reach
    # The file's bytes, hashed: what the rules hash covers. Not part of the file.
    digest: str = field(default="", compare=False)

    def link(self, kind: str, **values) -> str:
        """The `kind` address of links (blob, commit, ...) with `values`, which the caller has
        percent-encoded as its output needs."""
        return getattr(self.links, kind).format(**values)

    def blob_prefix(self, repo: str, sha: str) -> str:
        """What every link to a file of `repo` at `sha` starts with: the blob address up to its
        `{path}`, as `link` fills it. The caches check kept links against it."""
        from analyzer.core.safe import url_path
        return self.links.blob.split("{path}", 1)[0].format(repo=url_path(repo), sha=sha)

    @cached_property
    def runtime_rows(self) -> tuple[tuple[str, re.Pattern], ...]:
        return tuple((name, re.compile(rx)) for name, rx in self.runtimes.rows)

    @cached_property
    def runtime_features(self) -> tuple[tuple[str, re.Pattern], ...]:
        return tuple((name, re.compile(rx)) for name, rx in self.runtimes.features)

    # -- conventions, compiled once per profile -----------------------------------------------
    def crate_tag(self, crate: str) -> str:
        """`burn-ndarray` -> `ndarray`: the crate's name without the target's prefix; a name that
        is only the prefix stays whole."""
        for prefix in self.code.crate_tag_prefixes:
            if crate.startswith(prefix):
                return crate[len(prefix):] or crate
        return crate

    @cached_property
    def test_path(self) -> re.Pattern:
        return re.compile(self.tests.paths)

    @cached_property
    def test_attribute(self) -> re.Pattern:
        """An attribute that makes the item under it test code: one of the target's test
        attributes (plain or by path), or a `cfg(test)`."""
        names = "|".join(re.escape(a) for a in self.tests.attributes)
        # Anchored at the attribute's start, the name its last path segment: searched anywhere,
        # `#[doc = "cfg(test)"]` or `#[rstest::fixture]` made a library function test code and
        # hid its panics. `test` counts alone or as one term of an `all(..)` (`not(test)`,
        # `any(test, ..)` compile outside tests). Callers strip string literals first.
        return re.compile(rf"^#\s*!?\s*\[\s*(?:[\w:]*::)?(?:{names})\s*[(\]]"
                          r"|^#\s*!?\s*\[\s*cfg\s*\(\s*(?:all\s*\((?:[^()]|\([^()]*\))*?(?<!\w))?test\s*[,)]")

    @cached_property
    def dtype_kinds(self) -> frozenset[str]:
        """The dtype kinds' names, lower-case (float, int, bool, ...)."""
        return frozenset(kind.lower() for kind, _ in self.dtypes.kinds)

    @cached_property
    def dtype_kind_patterns(self) -> tuple[tuple[str, re.Pattern], ...]:
        return tuple((kind, re.compile(rx)) for kind, rx in self.dtypes.kinds)

    @cached_property
    def backend_word(self) -> re.Pattern:
        return re.compile(rf"\b{re.escape(self.code.backend_trait)}\b")

    @cached_property
    def ops_hint(self) -> re.Pattern:
        """A type named `...<suffix>` followed by what follows a trait's name in its definition
        or an impl's header (`Ops<B: Backend> {`, `Ops: Backend {`, `Ops<Self> for`): the files
        that define or implement backend operations. The pattern starts with the literal suffix,
        which the regex engine finds by a fast scan."""
        suffix = re.escape(self.code.ops_trait_suffix).encode()
        return re.compile(suffix + rb"\b\s*(?:<[^;{]*?>\s*)?(?:for\b|\{|:(?!:)|where\b)")

    @cached_property
    def claims_hint(self) -> re.Pattern | None:
        """`fn dtype_usage(` (one of the claims methods defined): the files the claims view reads.
        Starts with the literal `fn`, found by a fast scan."""
        if not self.code.claims_methods:
            return None
        names = b"|".join(re.escape(m.encode()) for m in self.code.claims_methods)
        return re.compile(rb"fn\s+(?:" + names + rb")\s*[<(]")

    def wants_code(self, source: bytes) -> bool:
        """Whether a file without a panic may still hold code facts the coverage audit reads: an
        ops trait or impl, or a claims method."""
        hint = self.claims_hint
        return self.ops_hint.search(source) is not None or (hint is not None and hint.search(source) is not None)

    @cached_property
    def ops_impl(self) -> re.Pattern:
        """`impl<..> path::FloatTensorOps<..> for T` -> the trait's name before the suffix."""
        suffix = re.escape(self.code.ops_trait_suffix)
        name = r"[A-Za-z_][A-Za-z0-9_]*"
        return re.compile(rf"^impl(?:<.*?>)?\s+(?:{name}::)*({name}){suffix}\b.*\bfor\b")


# -- reading and checking a profile file -----------------------------------------------------------

def _check(value, hint, where: str) -> Any:
    """`value` as the dataclass field type `hint` wants it (lists become tuples), or a UserError
    that names the key."""
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise _Bad(f"{where or 'the file'} must be a table")
        hints = get_type_hints(hint)
        names = [f.name for f in dataclasses.fields(hint) if f.init and f.name != "digest"]
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise _Bad(f"unknown key {_join(where, unknown[0])}")
        missing = [n for n in names if n not in value]
        if missing:
            raise _Bad(f"missing key {_join(where, missing[0])}")
        return hint(**{n: _check(value[n], hints[n], _join(where, n)) for n in names})  # type: ignore[operator]
    origin = get_origin(hint)
    if origin is tuple:
        args = get_args(hint)
        if not isinstance(value, list):
            raise _Bad(f"{where} must be a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_check(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise _Bad(f"{where} must be a list of {len(args)}")
        return tuple(_check(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
    if origin in (Union, types.UnionType):
        raise TypeError(hint)  # no optional keys: every profile says everything
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Bad(f"{where} must be an integer")
        return value
    if hint is str:
        if not isinstance(value, str) or not value:
            raise _Bad(f"{where} must be a non-empty string")
        return value
    raise TypeError(hint)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


class _Bad(Exception):
    pass


def _semantics(p: Profile) -> None:
    """What the types do not say."""
    if not _NAME.match(p.name):
        raise _Bad(f"name {p.name!r} is not a lower-case word")
    if not _REPO_NAME.match(p.repository.name):
        raise _Bad(f"repository.name {p.repository.name!r} is not OWNER/NAME")
    if not re.fullmatch(r"[0-9a-f]{40}", p.repository.pin):
        raise _Bad("repository.pin must be a full 40-hex commit SHA")
    for key, allowed in _LINK_FIELDS.items():
        template = getattr(p.links, key)
        try:
            names = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
        except ValueError as e:
            raise _Bad(f"links.{key}: {e}") from None
        if names - allowed:
            raise _Bad(f"links.{key} names {{{sorted(names - allowed)[0]}}}; it may name "
                       f"{', '.join('{' + a + '}' for a in sorted(allowed))}")
        if not template.startswith("https://"):
            raise _Bad(f"links.{key} must be an https:// address")
    before_path = p.links.blob.split("{path}", 1)
    if len(before_path) != 2 or {f for _, f, _, _ in string.Formatter().parse(before_path[0]) if f} - {"repo", "sha"}:
        raise _Bad("links.blob must name {path}, after {repo} and {sha} and before {start} and {end}")
    try:
        tag_fields = {f for _, f, _, _ in string.Formatter().parse(p.packages.release_tag) if f is not None}
    except ValueError as e:
        raise _Bad(f"packages.release_tag: {e}") from None
    if tag_fields != {"version"}:
        raise _Bad("packages.release_tag must name {version} and nothing else")
    kinds = [(f"dtypes.kinds[{i}]", rx) for i, (_, rx) in enumerate(p.dtypes.kinds)]
    kinds += [(f"runtimes.{key}[{i}]", rx) for key in ("rows", "features", "backends")
              for i, (_, rx) in enumerate(getattr(p.runtimes, key))]
    kinds += [("reach.creation", p.reach.creation), ("reach.nested_refusal", p.reach.nested_refusal)]
    for where, rx in [("tests.paths", p.tests.paths), *kinds]:
        try:
            re.compile(rx)
        except re.error as e:
            raise _Bad(f"{where} is not a regular expression: {e}") from None


def parse(data: bytes, source: str) -> Profile:
    """A profile from the bytes of its file; `source` names it in errors."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UserError(f"target profile {source} is not TOML: {e}") from None
    version = raw.get("format_version")
    if version != FORMAT_VERSION:
        raise UserError(f"target profile {source} has format_version {version!r}; this burn-errors reads "
                        f"format_version {FORMAT_VERSION}")
    try:
        profile = _check(raw, Profile, "")
        _semantics(profile)
    except _Bad as e:
        raise UserError(f"target profile {source}: {e}") from None
    return dataclasses.replace(profile, digest=hashlib.sha256(data).hexdigest())


def _folder() -> Path:
    # The package's folder on disk, as pip installs it (importlib.resources would cost every run
    # its readers' imports).
    return Path(__file__).parent


def known() -> list[str]:
    """The names of the profiles shipped with the tool, sorted."""
    return sorted(e.name[: -len(SUFFIX)] for e in _folder().iterdir() if e.name.endswith(SUFFIX))


_LOADED: dict[str, Profile] = {}


def load(target: str) -> Profile:
    """The profile a `--target` value names: a shipped profile by name, or a profile file by its
    path (a name ending in .toml). Each is read once."""
    if target in _LOADED:
        return _LOADED[target]
    if target.endswith(SUFFIX):
        path = Path(target)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise UserError(f"cannot read the target profile {target}: {e.strerror or e}") from None
    elif _NAME.match(target) and target in known():
        data = _folder().joinpath(target + SUFFIX).read_bytes()
    else:
        raise UserError(f"unknown target {target!r}; known targets: {', '.join(known())} "
                        f"(or the path of a profile file, NAME.toml)")
    profile = parse(data, target)
    if not target.endswith(SUFFIX) and profile.name != target:
        raise UserError(f"target profile {target}{SUFFIX} says its name is {profile.name!r}")
    _LOADED[target] = profile
    return profile


_CURRENT: Profile | None = None


def current() -> Profile:
    """The current target's profile (the default target until one is selected)."""
    return _CURRENT if _CURRENT is not None else load(DEFAULT)


def select(profile: Profile) -> None:
    """Make `profile` the current target (the CLI, once per command; a parser process as it starts)."""
    global _CURRENT
    _CURRENT = profile


@contextlib.contextmanager
def using(profile: Profile) -> Iterator[Profile]:
    """`profile` current inside the block, the one before it again after."""
    global _CURRENT
    before = _CURRENT
    _CURRENT = profile
    try:
        yield profile
    finally:
        _CURRENT = before
