"""The dtype catalog: the dtype enums of the analysed tree, read from its enum definitions and
aliases, and the one spelling dtype names are compared in."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from analyzer.decisions.data import rule_data
from analyzer.facts.model import FileFacts, SiteFacts, VariantRef
from analyzer.profiles import Profile

_SPELLED = re.compile(r"^(b?float|u?int|f|i|u|bf)(\d+)s?$")
# A number type in canonical spelling: f32, bf16, i64, u8.
_CANONICAL = re.compile(r"^(?:f|bf|i|u)(?:8|16|32|64|128)$")


def canonical_dtype(name: str) -> str:
    """A dtype variant name in one spelling: F32, Float32 and Float32s are all `f32`; Bools is
    `bool`. Names that are not dtype-shaped come back lower-cased."""
    low = name.lower()
    m = _SPELLED.match(low)
    if m:
        prefix = {"float": "f", "bfloat": "bf", "int": "i", "uint": "u"}.get(m.group(1), m.group(1))
        return f"{prefix}{m.group(2)}"
    return low[:-1] if low in ("bools", "strings") else low



# ---------------------------------------------------------------------------------------------
# The dtype catalog


@dataclass
class DtypeEnum:
    name: str
    variants: list[tuple[str, str | None]]
    crate: str
    path: str
    fields: list[list[str]] = field(default_factory=list)  # field type names, parallel to variants
    gated: list[str] = field(default_factory=list)  # variants under #[cfg(..)]


@dataclass
class DtypeCatalog:
    """The dtype enums of the analyzed tree: enums named like a dtype (DType, FloatDType), the
    enums their variants carry (DType::Bool(BoolStore)), aliases of those (BoolDType), and
    per-dtype definitions whose every variant is a dtype name (a storage enum `Tensor::F32(..)`).
    It also keeps every enum of the tree, to resolve the enum a match names and to tell which of
    its variants can hold a value."""

    # Dtype enums by name. For a name made a dtype enum by its variants, only the definitions
    # that qualify are listed: two enums of one name, one with a `Tensor` variant, are two enums.
    enums: dict[str, list[DtypeEnum]] = field(default_factory=dict)
    # Every enum name defined in each crate, dtype or not: a crate's own `Kind` is not tch's.
    local: dict[str, set[str]] = field(default_factory=dict)
    # Variant names of the enums named like a dtype (F32, BF16, I64 ...), canonical spelling.
    dtype_names: set[str] = field(default_factory=set)
    # The crates of the tree, as paths name them (burn_std), to tell `syn::Data` from ours.
    crates: set[str] = field(default_factory=set)
    # Names that are dtype enums whatever their definition: named like a dtype, a dtype's payload
    # enum, or an alias of one.
    named: set[str] = field(default_factory=set)
    # Every enum of the tree by name, dtype or not.
    every: dict[str, list[DtypeEnum]] = field(default_factory=dict)
    # Per type name, the crates whose files name its variants (`FuseArg::Input`).
    users: dict[str, set[str]] = field(default_factory=dict)
    # (crate, type) of the types built from a user's text: an enum deriving a parser
    # (`EnumString`), a type implementing `FromStr` or `TryFrom<&str>`.
    from_input: set[tuple[str, str]] = field(default_factory=set)
    # The names of the traits the tree defines; None when unknown (a catalog built without them).
    traits: set[str] | None = None
    # Per crate, the (enum, variant) pairs its files map to another value before passing a value
    # on (`Precision::Bool => self.bool_precision, _ => precision`).
    remapped: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    # Per ops trait (`...Ops`), the crate and the methods of each impl of it outside test code;
    # None when unknown (a catalog built without them).
    implementors: dict[str, list[tuple[str, frozenset[str]]]] | None = None
    # The proc-macro crates: those with a file defining a procedural macro's entry point.
    proc_macro_crates: set[str] = field(default_factory=set)

    def names(self, ref: VariantRef) -> bool:
        """The ref's enum name is a dtype enum somewhere in the tree and its path does not start
        at a crate outside the tree (`syn::Data::Union` is not a tree's `Data`)."""
        return ref.enum in self.enums and not self.outside(ref.root)

    def is_dtype(self, name: str, variants: set[str], path: str, crate: str) -> bool:
        """Whether `name`, as a match at `path` naming `variants` of it sees it, is a dtype enum:
        a name made a dtype enum by its variants counts only where it resolves to a definition
        whose every variant is a dtype (R6, at every commit)."""
        if name not in self.enums:
            return False
        if name in self.named:
            return True
        d = self.resolve(name, variants, path, crate)
        return d is None or any(d is q for q in self.enums[name])

    def resolve(self, name: str, variants: set[str], path: str, crate: str) -> DtypeEnum | None:
        """The definition of `name` a match at `path` naming `variants` of it means: among the
        definitions holding every named variant, the one of the same file, else of the same
        crate, else the largest. None when the tree defines no enum of that name."""
        defs = self.every.get(name)
        if not defs:
            return None
        fitting = [d for d in defs if variants <= {v for v, _ in d.variants}] or defs
        for near in ([d for d in fitting if d.path == path], [d for d in fitting if d.crate == crate]):
            if near:
                return max(near, key=lambda d: (len(d.variants), d.path))
        return max(fitting, key=lambda d: (len(d.variants), d.path))

    def outside(self, root: str) -> bool:
        if root in ("", "crate", "self", "super", "Self") or root.startswith(("_", "$")):
            return False
        return root not in self.crates

    def is_defined_anywhere(self, name: str) -> bool:
        return name in self.every  # build() files every enum of `local` under its name there

    def uninhabited(self, d: DtypeEnum, variant: str) -> bool:
        """A variant no value can take: a field of type `Infallible`, `!` or an empty enum of
        the tree."""
        for (v, _), types in zip(d.variants, d.fields):
            if v == variant:
                return any(t in ("Infallible", "!") or self._empty_enum(t) for t in types)
        return False

    def _empty_enum(self, name: str) -> bool:
        defs = self.every.get(name, [])
        return bool(defs) and all(not d.variants for d in defs)

    def named_outside(self, name: str, crate: str) -> bool:
        """Some file of another crate names a variant of `name`."""
        return bool(self.users.get(name, set()) - {crate})

    @staticmethod
    def build(files: Iterable[tuple[str, str, FileFacts]], profile: Profile) -> DtypeCatalog:
        """The catalog of a tree from (path, crate, facts) of each of its files: their enums,
        plain type aliases, the type names written before `::Variant`, the (type, derive or parse
        trait) pairs, the traits defined, the (enum, variant) pairs remapped and the ops-trait
        impls. A catalog built from no files at all is `DtypeCatalog()`, whose traits and impls
        are unknown rather than none."""
        files = list(files)
        defs = [(path, crate, e) for path, crate, f in files for e in f.enums]
        aliases = [(path, crate, a, t) for path, crate, f in files for a, t in f.aliases]
        uses = [(crate, f.variant_uses) for _, crate, f in files]
        built = [(crate, f.built_from) for _, crate, f in files]
        traits = {t for _, _, f in files for t in f.trait_names}
        remaps = [(crate, f.remaps) for _, crate, f in files]
        impls = [(path, crate, f.ops_impls) for path, crate, f in files]
        enum_name = rule_data().enum_name
        rules = rule_data()
        by_name: dict[str, list[DtypeEnum]] = {}
        local: dict[str, set[str]] = {}
        for path, crate, e in defs:
            by_name.setdefault(e.name, []).append(DtypeEnum(e.name, e.variants, crate, path, e.fields, e.gated))
            local.setdefault(crate, set()).add(e.name)
        named = {n for n in by_name if enum_name.match(n)}
        dtype_names = {canonical_dtype(v) for n in named for d in by_name[n] for v, _ in d.variants}
        # Payload enums of dtype variants belong to the catalog too (DType::Bool(BoolStore)), when
        # their variants name dtypes: a quantization strategy a dtype variant carries
        # (QFloat(Strategy) with PerTensorAffine.. variants) is a setting, not a dtype enum.
        frontier = list(named)
        while frontier:
            n = frontier.pop()
            for d in by_name[n]:
                for _, payload in d.variants:
                    if (payload and payload in by_name and payload not in named
                            and _names_dtypes(by_name[payload], dtype_names, rules.payload_share)):
                        named.add(payload)
                        frontier.append(payload)
        enums = {n: by_name[n] for n in named}
        for n, ds in by_name.items():
            if n in named:
                continue
            qualifying = [d for d in ds if len(names := {canonical_dtype(v) for v, _ in d.variants}) >= rules.all_min
                          and names <= dtype_names]
            if qualifying:
                enums[n] = qualifying
        for _path, _crate, alias, target in aliases:
            if target in enums and alias not in enums:
                enums[alias] = [DtypeEnum(alias, d.variants, d.crate, d.path, d.fields, d.gated) for d in enums[target]]
                named.add(alias)
        # Types a derive macro generates from a dtype enum of the tree, with its variants
        # (cubecl's `#[derive(CubeType)]` on `enum Scalar { F32(..), .. }` makes `ScalarExpand`).
        for suffix in rules.derived_suffixes:
            for target in list(enums):
                derived = target + suffix
                if derived not in enums and derived not in by_name:
                    enums[derived] = [DtypeEnum(derived, d.variants, d.crate, d.path, d.fields, d.gated)
                                      for d in enums[target]]
                    if target in named:
                        named.add(derived)
        crates = {c.replace("-", "_") for _, c, _ in defs} | {c.replace("-", "_") for _, c, _, _ in aliases}
        derives = set(rule_data().input_derives)
        from_input = {(crate, typ) for crate, pairs in built for typ, how in pairs if how in derives}
        return DtypeCatalog(dict(sorted(enums.items())), local, dtype_names, crates, named, by_name,
                            _users(uses), from_input, traits, _remapped(remaps), _implementors(impls, profile),
                            {crate for _, crate, f in files if f.proc_macros})

    def inheriting(self, site: SiteFacts, profile: Profile) -> list[str] | None:
        """The crates (sorted) whose impl of the trait lacks the default method `site` is the
        whole body of; None when the site is not a trait's default method, or the trait is no
        ops trait (`...Ops`), whose impls are not read."""
        if self.implementors is None or site.context != "body" or site.fn_kind != "trait-default" \
                or not site.fn_trait or not site.fn_trait.endswith(profile.code.ops_trait_suffix):
            return None
        return sorted({crate for crate, methods in self.implementors.get(site.fn_trait, ())
                       if site.function not in methods})

    def implemented(self, trait: str) -> bool:
        """Some impl of the ops trait outside test code is known."""
        return bool(self.implementors and self.implementors.get(trait))

    def foreign_trait(self, name: str) -> bool:
        """No file of the tree defines a trait of that name: another library's (serde's
        `Serializer`, or an alias of it). A trait a macro of the tree generates from one of its
        traits (`#[cube]` on `trait ViewOperations` makes `ViewOperationsExpand`) is the tree's.
        False when the tree's traits are unknown."""
        # A leading `_` or `$` is a macro's metavariable (`impl $tr for $ty` re-parsed as `_tr`):
        # the trait is whatever the macro is called with, so unknown.
        if self.traits is None or not name or name.startswith(("_", "$")) or name in self.traits:
            return False
        return not any(name.endswith(suffix) and name[:-len(suffix)] in self.traits
                       for suffix in rule_data().derived_suffixes)

    def defines(self, crate: str, name: str) -> bool:
        return name in self.local.get(crate, ())

    def __contains__(self, name: str) -> bool:
        return name in self.enums

    def definition(self, name: str, crate: str) -> DtypeEnum | None:
        defs = self.enums.get(name)
        if not defs:
            return None
        same = [d for d in defs if d.crate == crate]
        if same:
            return same[0]
        return max(defs, key=lambda d: (len(d.variants), d.path))

    def expand(self, name: str, crate: str, _seen: frozenset = frozenset()) -> list[str]:
        """Variant names of `name`, payload enums expanded: F32, ..., Bool(Native), Bool(U8), QFloat."""
        d = self.definition(name, crate)
        if d is None or name in _seen:
            return []
        out: list[str] = []
        for v, payload in d.variants:
            subs = self.expand(payload, crate, _seen | {name}) if payload and payload in self else []
            out.extend(f"{v}({s})" for s in subs) if subs else out.append(v)
        return out

    def to_json(self) -> dict:
        return {n: [{"crate": d.crate, "path": d.path, "variants": [v for v, _ in d.variants]}
                    for d in defs] for n, defs in self.enums.items()}


def _remapped(remaps: list[tuple[str, list[tuple[str, str]]]]) -> dict[str, set[tuple[str, str]]]:
    """Per crate, the (enum, variant) pairs its files remap."""
    out: dict[str, set[tuple[str, str]]] = {}
    for crate, pairs in remaps:
        if pairs:
            out.setdefault(crate, set()).update(pairs)
    return out


def _implementors(impls: list[tuple[str, str, list[tuple[str, str, list[str]]]]], profile: Profile
                  ) -> dict[str, list[tuple[str, frozenset[str]]]]:
    test_path = profile.test_path
    by_trait: dict[str, list[tuple[str, frozenset[str]]]] = {}
    for path, crate, found in impls:
        if found and not test_path.search(path):
            for trait, _type, methods in found:
                by_trait.setdefault(trait, []).append((crate, frozenset(methods)))
    return by_trait


def _users(uses: list[tuple[str, list[str]]]) -> dict[str, set[str]]:
    """Per type name, the crates of the files that name its variants."""
    users: dict[str, set[str]] = {}
    for crate, written in uses:
        for name in written:
            users.setdefault(name, set()).add(crate)
    return users


def _names_dtypes(defs: list[DtypeEnum], dtype_names: set[str], share: float) -> bool:
    """Some definition of a payload enum has at least `share` of its variants named as dtypes
    (BoolStore: Native, U8, U32): in canonical spelling, a variant name of the dtype-named enums
    or a width-suffixed number type (U32 where the dtype enum lists no U32)."""
    def is_dtype(v: str) -> bool:
        name = canonical_dtype(v)
        return name in dtype_names or _CANONICAL.match(name) is not None
    return any(d.variants and sum(is_dtype(v) for v, _ in d.variants) >= share * len(d.variants)
               for d in defs)

