"""The facts the parse stage finds in one Rust file: plain data, no tree-sitter.

`FileFacts` is what the cache stores per git blob (as JSON, `to_json` / `from_json`); the classify,
coverage and record stages read these classes without importing the parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

# Bumped whenever the facts a file yields change shape or content, so cached rows of an older
# shape are never reused (the cache tag hashes this module's text, see ruleset.HASHED_MODULES).
FACTS_VERSION = 16


@dataclass
class VariantRef:
    """`Enum::Variant` named in a pattern, with the refs inside its payload (`Bool(BoolStore::U32)`)."""

    enum: str
    variant: str
    sub: list[VariantRef] | None = None  # None: no payload or a wildcard payload
    root: str = ""  # first segment of a longer path (`syn` in syn::Data::Union), else ""

    @staticmethod
    def from_dict(d: dict) -> VariantRef:
        sub = d.get("sub")
        return VariantRef(d["enum"], d["variant"], [VariantRef.from_dict(s) for s in sub] if sub else None,
                          d["root"])


@dataclass
class ArmFacts:
    pattern: str
    refs: list[VariantRef]
    catch_all: bool
    guard: bool
    panics: bool  # the arm's body is a panic-family call
    error_handling: bool  # Err(..)/None/Ok(..)/Some(..) arm
    line: int
    gated: bool = False  # the arm carries a #[cfg(..)] attribute: some builds compile it out
    # The arm's value is one of the names its pattern binds (`Data::F32s(v) => v`, `v.clone()`):
    # it hands back the payload of the one variant it names.
    returns_binding: bool = False


@dataclass
class SiteFacts:
    """One panic-family call and the syntax around it."""

    macro: str  # panic | unimplemented | todo | unreachable | assert | assert_eq | assert_ne | expect
    macro_path: str  # as written: panic, std::panic, core::panic
    line: int  # 1-based, where the macro's name starts
    column: int
    start_byte: int
    end_byte: int
    message: str
    message_segments: list[tuple[str, bool]]
    message_literal: bool  # the message came from a string literal (or the macro's default)
    # Where the call stands: match-arm | let-else | if-let-else | if-let | body (the whole body
    # of a function) | closure (the whole body of a closure) | guard (the body of a plain `if` /
    # `else` branch) | other
    context: str
    unconditional: bool  # the call is the whole body of that arm/else/branch (not behind an `if`)
    scrutinee: str = ""
    arm_index: int = -1
    arms: list[ArmFacts] = field(default_factory=list)
    function: str = ""
    impl: str = ""
    item_path: str = ""  # mod::impl::fn chain inside the file, for ids
    in_test: bool = False
    in_macro: str = ""  # name of the macro whose token tree holds the call ("" if none)
    # A guard: the `if`'s condition (of the `if` whose `else` it is, for an `else` branch), and
    # which branch the call is the body of: then | else; cfg for a statement a `#[cfg(..)]`
    # attribute gates, its condition the attribute.
    condition: str = ""
    branch: str = ""
    # A body: what the function is: trait-impl (a method of `impl Trait for T`), trait-default
    # (a trait's default method), method (of an inherent impl) or free; and the trait's name.
    fn_kind: str = ""
    fn_trait: str = ""
    # The comments written on the lines just before the call's statement, in its block
    # (`// Not supported in Burn`), joined by a space: what the author says of the branch.
    comment: str = ""


@dataclass
class EnumFacts:
    name: str
    variants: list[tuple[str, str | None]]  # (variant, payload type name of a 1-field tuple variant)
    line: int
    # The type names of every field of each variant, parallel to `variants` (`Infallible`, `!`,
    # `PhantomData`): whether a variant can hold a value at all.
    fields: list[list[str]] = field(default_factory=list)
    gated: list[str] = field(default_factory=list)  # variants under a #[cfg(..)] attribute


@dataclass
class MacroCall:
    """A macro invocation inside a function or a `macro_rules!` body: its name, line, and the
    dtype list it passes, read as the leading path of each element of its last top-level `[...]`
    argument, last segment (`[F64 => f64, DType::F32 => f32]` -> F64, F32). `dtypes` is None when there is no
    such list; `unreadable` when there is one whose elements do not start with an identifier
    (a metavariable, an expression). `lead` is the identifier its arguments open with
    (`float` in `m!(float(x), ..)`), which picks among a macro's rules; "" when they open with
    anything else or cannot be read."""

    name: str
    line: int
    dtypes: list[str] | None = None
    unreadable: bool = False
    lead: str = ""

    def to_json(self) -> dict:
        return {"name": self.name, "line": self.line, "dtypes": self.dtypes, "unreadable": self.unreadable,
                "lead": self.lead}

    @staticmethod
    def from_json(d: dict) -> MacroCall:
        return MacroCall(d["name"], d["line"], d["dtypes"], d["unreadable"], d["lead"])


@dataclass
class FnFacts:
    """A function item: where it is, the impl it belongs to (trait name when it implements an
    ops trait), and what its body calls by name and which macros it invokes."""

    name: str
    line: int
    end_line: int
    trait: str  # the `...Ops` trait of the impl holding it, else ""
    calls: list[str]
    macros: list[MacroCall]

    def to_json(self) -> dict:
        return {"name": self.name, "line": self.line, "end_line": self.end_line, "trait": self.trait,
                "calls": self.calls, "macros": [m.to_json() for m in self.macros]}

    @staticmethod
    def from_json(d: dict) -> FnFacts:
        macros = d["macros"]  # most functions invoke none: no comprehension for those
        return FnFacts(d["name"], d["line"], d["end_line"], d["trait"], d["calls"],
                       [MacroCall.from_json(m) for m in macros] if macros else [])


@dataclass
class MacroDefFacts:
    """A `macro_rules!` definition: the functions it calls and the macros it invokes, and its
    rules as (lead, first line, last line): `lead` the identifier the rule's matcher opens with
    (`float` in `(float($d:expr), ..) => ..`), "" when it opens with a metavariable or anything
    else (the rule may take any invocation)."""

    name: str
    line: int
    calls: list[str]
    macros: list[MacroCall]
    rules: list[tuple[str, int, int]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"name": self.name, "line": self.line, "calls": self.calls, "macros": [m.to_json() for m in self.macros],
                "rules": [list(r) for r in self.rules]}

    @staticmethod
    def from_json(d: dict) -> MacroDefFacts:
        return MacroDefFacts(d["name"], d["line"], d["calls"], [MacroCall.from_json(m) for m in d["macros"]],
                             [(r[0], r[1], r[2]) for r in d["rules"]])

    def rule_at(self, line: int) -> int:
        """The index of the one rule spanning `line`; -1 when none or several do."""
        at = [i for i, (_, first, last) in enumerate(self.rules) if first <= line <= last]
        return at[0] if len(at) == 1 else -1

    def rules_taking(self, lead: str) -> set[int]:
        """The rules an invocation opening with `lead` may take, tried in order: those whose
        matcher opens with that word, and those opening with no word that come before the last
        of them (after it, a rule opening with no word is reached only by an invocation no rule
        of that word takes)."""
        worded = [i for i, (w, _, _) in enumerate(self.rules) if w == lead]
        last = worded[-1] if worded else len(self.rules)
        return set(worded) | {i for i, (w, _, _) in enumerate(self.rules) if not w and i < last}


@dataclass
class TraitFacts:
    """A trait named `...Ops`: its methods and its header (generics and supertraits), from which
    the audit tells backend operation traits from others."""

    name: str
    line: int
    header: str
    methods: list[str]


@dataclass
class ImplFacts:
    """`impl ...Ops<..> for Type`: the trait, the type and the methods it defines."""

    trait: str
    type: str
    line: int
    methods: list[tuple[str, int]]  # (name, line)


@dataclass
class FileFacts:
    sites: list[SiteFacts]
    enums: list[EnumFacts]
    parse_errors: bool
    not_utf8: bool
    aliases: list[tuple[str, str]] = field(default_factory=list)  # (alias, target type name)
    traits: list[TraitFacts] = field(default_factory=list)
    impls: list[ImplFacts] = field(default_factory=list)
    functions: list[FnFacts] = field(default_factory=list)
    macro_defs: list[MacroDefFacts] = field(default_factory=list)
    skipped: str = ""  # why the file was not read (past a budget, nested too deep); "" when read
    # The type names the file writes before `::Variant`, `::{..}` or `::*` (`FuseArg::Input`):
    # which crates name an enum's variants, so build values of it or match on them.
    variant_uses: list[str] = field(default_factory=list)
    # (trait, type, method names) of each top-level `impl ...Ops for Type` (facts/impls.py): which
    # backends leave a trait's default method as it is.
    ops_impls: list[tuple[str, str, list[str]]] = field(default_factory=list)
    # (type, derive or parse trait) pairs (facts/inputs.py): which types are built from text.
    built_from: list[tuple[str, str]] = field(default_factory=list)
    # The names of the traits the file defines (`pub trait Recorder`): an impl of a trait no file of
    # the tree defines implements another library's protocol (serde's `Serializer`).
    trait_names: list[str] = field(default_factory=list)
    # (enum, variant) of the variants the file maps to another value before passing a value on
    # (facts/remaps.py): a crate that remaps a variant away never hands it further.
    remaps: list[tuple[str, str]] = field(default_factory=list)
    # Why part of the file was left unread (token trees past the shadow budget); "" when read whole.
    partial: str = ""
    # The file defines a procedural macro (`#[proc_macro_derive(..)]`): its crate is a proc-macro
    # crate, whose code runs while its users' crates compile.
    proc_macros: bool = False
    # The file names its `#[path = ".."]` attributes and `include!("..")` calls give (facts/includes.py).
    includes: list[str] = field(default_factory=list)

    def site_part(self) -> FileFacts:
        """What extract reads: the calls, enums and aliases, and how the file was read."""
        return FileFacts(self.sites, self.enums, self.parse_errors, self.not_utf8, self.aliases, skipped=self.skipped,
                         variant_uses=self.variant_uses, ops_impls=self.ops_impls, built_from=self.built_from,
                         trait_names=self.trait_names, remaps=self.remaps, partial=self.partial,
                         proc_macros=self.proc_macros, includes=self.includes)

    def code_part(self) -> FileFacts:
        """What only the coverage audit reads: ops traits, their impls, every function's calls and
        macro invocations, macro definitions. Kept in a cache row of its own, so that extract
        neither computes nor decodes it."""
        return FileFacts([], [], False, False, [], self.traits, self.impls, self.functions, self.macro_defs,
                         skipped=self.skipped)

    def to_json(self) -> dict:
        # A direct walk: the same dict as dataclasses.asdict, at a fraction of its cost.
        return {"sites": [_site_json(x) for x in self.sites],
                "enums": [{"name": e.name, "variants": [list(v) for v in e.variants], "line": e.line,
                           "fields": e.fields, "gated": e.gated} for e in self.enums],
                "parse_errors": self.parse_errors, "not_utf8": self.not_utf8,
                "aliases": [list(a) for a in self.aliases], "skipped": self.skipped,
                "traits": [dict(t.__dict__) for t in self.traits],
                "impls": [{"trait": i.trait, "type": i.type, "line": i.line, "methods": [list(m) for m in i.methods]}
                          for i in self.impls],
                "functions": [f.to_json() for f in self.functions],
                "macro_defs": [m.to_json() for m in self.macro_defs],
                "variant_uses": self.variant_uses,
                "ops_impls": [[t, typ, list(ms)] for t, typ, ms in self.ops_impls],
                "built_from": [list(b) for b in self.built_from],
                "trait_names": self.trait_names,
                "remaps": [list(r) for r in self.remaps], "partial": self.partial,
                "proc_macros": self.proc_macros, "includes": self.includes}

    @staticmethod
    def from_json(d: dict) -> FileFacts:
        sites = []
        for s in d["sites"]:
            s = dict(s)
            s["arms"] = [_filled(ArmFacts, _ARM_FIELDS, {**a, "refs": [VariantRef.from_dict(r) for r in a["refs"]]})
                         for a in s["arms"]]
            s["message_segments"] = [tuple(x) for x in s["message_segments"]]
            sites.append(_filled(SiteFacts, _SITE_FIELDS, s))
        enums = [EnumFacts(e["name"], [tuple(v) for v in e["variants"]], e["line"], e.get("fields", []),
                           e.get("gated", [])) for e in d["enums"]]
        aliases = [tuple(a) for a in d.get("aliases", [])]
        return FileFacts(sites, enums, d["parse_errors"], d["not_utf8"], aliases,
                         [TraitFacts(**t) for t in d.get("traits", [])],
                         [ImplFacts(i["trait"], i["type"], i["line"], [(m[0], m[1]) for m in i["methods"]])
                          for i in d.get("impls", [])],
                         [FnFacts.from_json(f) for f in d.get("functions", [])],
                         [MacroDefFacts.from_json(m) for m in d.get("macro_defs", [])],
                         d.get("skipped", ""), d.get("variant_uses", []),
                         [(t, typ, list(ms)) for t, typ, ms in d.get("ops_impls", [])],
                         [(t, n) for t, n in d.get("built_from", [])],
                         d.get("trait_names", []),
                         [(e, v) for e, v in d.get("remaps", [])], d.get("partial", ""),
                         d.get("proc_macros", False), d.get("includes", []))


_ARM_FIELDS = frozenset(f.name for f in fields(ArmFacts))
_SITE_FIELDS = frozenset(f.name for f in fields(SiteFacts))


def _filled(cls, names: frozenset[str], values: dict):
    """cls(**values) for a dict that names every field (to_json writes each one): the dict
    becomes the instance's own, which costs a fraction of the generated __init__ with keywords.
    A row with a field missing or one more is refused as that call would refuse it."""
    if values.keys() != names:
        raise TypeError(f"{cls.__name__} fields {sorted(values.keys() ^ names)} missing or unexpected")
    obj = object.__new__(cls)
    obj.__dict__ = values
    return obj


def _ref_json(r: VariantRef) -> dict:
    return {"enum": r.enum, "variant": r.variant,
            "sub": [_ref_json(x) for x in r.sub] if r.sub is not None else None, "root": r.root}


def _site_json(s: SiteFacts) -> dict:
    d = dict(s.__dict__)
    d["message_segments"] = [list(x) for x in s.message_segments]
    d["arms"] = [{**a.__dict__, "refs": [_ref_json(r) for r in a.refs]} for a in s.arms]
    return d
