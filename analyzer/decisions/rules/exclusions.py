"""The exclusions: rules that leave a call out, whatever category a later rule would give it."""

from __future__ import annotations

import re

from analyzer.decisions.call import Call
from analyzer.decisions.data import rule_data
from analyzer.decisions.catalog import canonical_dtype
from analyzer.decisions.reach import _kind, leaves_kind_gap, mixes_kinds
from analyzer.decisions.rules.base import is_test_path, unimplemented_macro
from analyzer.decisions.rules.wording import author_words
from analyzer.decisions.rules.mode import input_kinds, runtime_input
from analyzer.facts.model import VariantRef


# --- exclusions checked before any category ---------------------------------------------------

def in_test_code(c: Call) -> bool:
    return c.site.in_test or is_test_path(c.path, c.profile)


# The macros a procedural macro writes its output with: the code inside them runs in the crate that
# uses the macro, when that crate's program runs.
_EMITTED = ("quote", "quote_spanned", "parse_quote", "parse_quote_spanned")


def compile_time(c: Call) -> bool:
    """In a proc-macro crate: one of the tree's files defines a procedural macro's entry point in
    it (`#[proc_macro_derive(Module)]`), or the target names it (`audience.compile_time`: a
    kernel macro's crate). Its panics fire while the crate using the macro compiles (a derive on
    the wrong item), met by whoever writes that code and fixed there, never by a user running a
    model."""
    if c.crate in c.profile.audience.compile_time:
        return True
    return c.crate in c.catalog.proc_macro_crates and c.site.in_macro not in _EMITTED


def not_in_arm(c: Call) -> bool:
    return c.arm is None


def conditional(c: Call) -> bool:
    return not c.site.unconditional


def accessor(c: Call) -> bool:
    """An accessor: beside the panic there is one arm, naming one variant and handing back what
    it binds (`if let Data::F32s(v) = self { v } else { panic!(..) }`). Its callers know the
    variant already; the panic states that expectation, no user choice selects it."""
    arm, others = c.arm, c.others
    if arm is None or not arm.catch_all or len(others) != 1 or runtime_input(c):
        return False
    o = others[0]
    shaped = (o.returns_binding and not (o.catch_all or o.guard or o.error_handling or o.gated)
              and len(o.refs) == 1 and o.refs[0].sub is None)
    # "only float32 values are supported" rejects the dtypes a user's file may hold (R12's wording).
    return shaped and not (c.says_unsupported and c.names_a_dtype)


def kernel_only_dtype(c: Call) -> bool:
    """An explicit arm whose every variant, down its payload (`ElemType::Float(FloatKind::TF32)`),
    is an element type only kernels hold (the target's `audience.kernel_dtypes`: an index type, a
    compute-only format): no user's tensor has that dtype, so no user's choice takes the arm."""
    arm = c.arm
    kernel = c.profile.audience.kernel_dtypes
    if arm is None or arm.catch_all or not arm.refs or not kernel:
        return False
    leaves: list[str] = []
    stack = list(arm.refs)
    while stack:
        r = stack.pop()
        if r.sub:
            stack.extend(r.sub)
        else:
            leaves.append(r.variant)
    return all(v in kernel for v in leaves)


def error_handling(c: Call) -> bool:
    arm, others = c.body, c.others
    if runtime_input(c):
        return False  # `_ =>` beside `Some(X::Static(..))` also takes `Some(X::Runtime(..))`
    # `Some(ClipInput::Runtime(_)) => panic!(..)` takes one inner variant of a value that is there:
    # a dispatch on the inner enum, judged by the rules below, not the None / Err case.
    if arm.error_handling and not (_VALUE_ARM.match(arm.pattern) and _names_inner(arm.refs)):
        # `None => todo!("support unsqueezing a tensor without static shape")`: the missing value
        # is a form the code does not handle yet (a shape known only at run time, no adapter for
        # the chosen graphics API), a refusal about support rather than error handling.
        return not (arm.pattern.lstrip("&").strip() in _MISSING and _refuses_missing(c))
    # (The `else` of a let-else or if-let-else is a catch-all beside its one written pattern, so
    # `let Some(Values::Int64s(v)) = x else { panic!("values must be int64") }` reads as below.)
    # `_ =>` beside `Some(..)` / `Ok(..)` arms only is the None / Err case (R7), unless those
    # arms name variants of an inner enum: then the catch-all also takes every other inner
    # variant, a dispatch on the inner enum (R12). When two or more variants of a dtype enum are
    # named it rejects dtypes, whatever its message (Step 2); otherwise only a message saying the
    # rest is not supported makes it one.
    if arm.catch_all and others and all(o.error_handling for o in others):
        inner = [o for o in others if _names_inner(o.refs)]
        # A `Some(x)` arm takes every inner value: then the catch-all is the None case alone.
        whole = [o for o in others if o not in inner and _VALUE_ARM.match(o.pattern)]
        if not inner:
            return not _refuses_missing(c)
        if whole:
            return True
        inner_refs = {(r.enum, r.variant) for o in inner for r in o.refs if r.variant not in _OPTION_RESULT}
        inner_enums = {e for e, _ in inner_refs}
        dtype_inner = bool(inner_enums & c.dtype_enums) or c.foreign in inner_enums
        # Two or more inner variants are a dispatch.
        # A single one is a lookup that expects that value: its catch-all is the None case unless
        # the message says the rest is unsupported, or names the dtype it wanted.
        dispatch = dtype_inner and (len(inner_refs) >= 2 or c.names_a_dtype)
        return not (dispatch or c.says_unsupported)
    return False


_OPTION_RESULT = {"Some", "None", "Ok", "Err"}
# The arm of a value that is not there (the `else` of `if let Some(..)` is one too).
_MISSING = {"None"}


def _refuses_missing(c: Call) -> bool:
    """The author's words for a missing value say it is not supported, or a todo!/unimplemented!
    says what is left to write (`todo!("support unsqueezing a tensor without shape")`): the
    value's absence is a form of the input (a shape known only at run time) the code lacks. A bare
    `todo!()` on a stream that ended says nothing of support."""
    words = author_words(c)
    if not words:
        return False
    return unimplemented_macro(c) or rule_data().unsupported.search(words) is not None
_VALUE_ARM = re.compile(r"^&?\s*(?:\w+::)*(?:Some|Ok)\b")


def _names_inner(refs: list[VariantRef]) -> bool:
    return any(r.variant not in _OPTION_RESULT for r in refs)


def dtype_validation(c: Call) -> bool:
    """The arm checks what the caller passed against what the call requires (`"Data type mismatch
    (lhs: {:?}, rhs: {:?})"`, `"Invalid cast types"`, `"Expected float data type, got {value:?}"`):
    misuse, not a dtype the library lacks. An arm that says the dtype is unsupported, or an
    unimplemented!/todo!, is left to the dtype rules; so is a catch-all left a dtype of the kind
    its arms dispatch over (`F32`/`F64` arms, `F16` left): a dtype missing, not a mismatch."""
    if (unimplemented_macro(c) or c.says_unsupported or leaves_kind_gap(c) or mixes_kinds(c) or runtime_input(c)
            or input_kinds(c)):
        return False
    pats, message = rule_data(), c.site.message
    # "must be int64" after `Some(Values::Int64s(..))` arms is R12's lookup of the one dtype an
    # importer reads where a model may hold others: a record, judged by the dtype rules.
    required = c.body.catch_all and not any(o.error_handling for o in c.others)
    return (pats.validation.search(message) is not None
            or (required and pats.required.search(message) is not None))


# --- exclusions checked before the unsupported-mode rules ---------------------------------------

def internal_state(c: Call) -> bool:
    """The panicking arm rejects a variant of an enum that describes the program's own context
    or state (an autotune run's context, a code-generation stage): values the library makes
    itself, never a setting a user chooses (R8)."""
    internal = rule_data().internal_enum
    refs = c.body.refs if not c.body.catch_all else [r for o in c.others for r in o.refs]
    enums = {r.enum for r in refs}
    return bool(enums) and all(internal.search(e) for e in enums)


def own_form(c: Call) -> bool:
    """The panicking arm rejects variants of an enum its own crate defines and no other crate
    names a variant of, none of whose variants is a dtype: a form the crate builds and reads
    itself (a code generator's argument kinds, a fusion engine's handles), whose values no user
    chooses. An enum with a dtype variant carries a user's data (a value read from a file), and
    so does one built from text (a derived or implemented parser: an op type read from a model)."""
    refs = c.body.refs if not c.body.catch_all else [r for o in c.others for r in o.refs]
    if not refs or runtime_input(c):  # the model, not the crate, picks a runtime form
        return False
    catalog = c.catalog
    for r in refs:
        if r.enum == "Self" or catalog.outside(r.root):
            return False
        d = catalog.resolve(r.enum, c.named_variants.get(r.enum, set()), c.path, c.crate)
        if d is None or d.crate != c.crate or catalog.named_outside(r.enum, c.crate):
            return False
        if (d.crate, d.name) in catalog.from_input:
            return False  # parsed from a model file or a config: the user's input picks the variant
        if any(canonical_dtype(v) in catalog.dtype_names for v, _ in d.variants):
            return False
    return True


def kernel_language_form(c: Call) -> bool:
    """In a crate kernels are written against (the target's `audience.kernel_api`), the match names
    variants only of enums those crates define, none a dtype enum, or no enum at all: a form of the
    kernel language (an opaque or semantic type, a fragment's role, a constant's minifloat kind, a
    tensor-map load's rank) a kernel's author writes. A user's setting handed in from elsewhere (a
    quantization scheme's value) stays."""
    kernel = c.profile.audience.kernel_api
    if c.crate not in kernel or c.dtype_enums:
        return False
    # An arm over no enum at all (`match rank { 1 => .., _ => panic!("only 1D-5D loads") }`, a
    # type's size) matches a number the kernel's own layout or types fix.
    refs = [r for a in c.arms for r in a.refs]
    for r in refs:
        d = c.catalog.resolve(r.enum, c.named_variants.get(r.enum, set()), c.path, c.crate)
        if d is None or d.crate not in kernel:
            return False
    return True


def inferred_output(c: Call) -> bool:
    """A catch-all over the kinds of a node's output (`match &self.output { Type::Tensor(..) =>
    .., Type::Shape(..) => .., _ => panic!("only supports Tensor or Shape outputs") }`): the
    output's kind comes from the importer's own type inference, not from the model a user
    brings, so the kinds left are ones it never infers there (R20). A dtype dispatch on the
    output stays (the dtype rules come first): an output's dtype follows its inputs'."""
    if not c.body.catch_all or not c.others or not any(o.refs for o in c.others):
        return False
    output = rule_data().inferred_output
    return any(output.match(tok) for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", c.site.scrutinee))


def foreign_protocol(c: Call) -> bool:
    """A stub method of an impl of a trait no file of the tree defines (serde's `Serializer`, a
    kernel library's view trait): the other library calls it with the forms the tree hands it, its
    own data, so no user's choice of operation reaches the stub. The tree's own traits (a backend's
    ops trait, a recorder) stay: their methods are the operations users call; so does the
    deserializing half of a data protocol (`protocol.reads_input`: serde's `Deserializer`), which
    a reader of a user's config or model file runs on the user's own types."""
    if c.site.fn_kind != "trait-impl" or not c.catalog.foreign_trait(c.site.fn_trait):
        return False
    # The deserializing half of a data protocol fills the caller's type from input, and the caller
    # is a reader of a user's file: its stubs refuse the field types the user wrote.
    if rule_data().reads_input.search(c.site.fn_trait):
        return False
    # A path through a crate of the tree (`burn_common::device::Device`, `crate::Device`) names
    # a trait the tree re-exports as its own: its users reach it through the tree.
    root = _trait_root(c.site.impl)
    return root == "" or c.catalog.outside(root)


def _trait_root(impl_header: str) -> str:
    """The first segment of the trait's path in an impl header, "" for a bare name:
    `impl<'de> serde::Deserializer<'de> for D` -> serde."""
    head = impl_header.removeprefix("impl").lstrip()
    if head.startswith("<"):  # the impl's own generics
        depth = 0
        for i, ch in enumerate(head):
            depth += {"<": 1, ">": -1}.get(ch, 0)
            if depth == 0:
                head = head[i + 1:]
                break
    path = head.split(" for ", 1)[0].split("<", 1)[0].strip().removeprefix("::")
    return path.split("::", 1)[0].strip() if "::" in path else ""


# A type test with a turbofish ending the condition: `term.impls::<dyn Exit>(ctx)`, `op.is::<Yield>()`.
_TYPE_TEST = re.compile(r"\.\s*(?:is\w*|impls)\s*::\s*<\s*(?:dyn\s+)?((?:\w+::)*\w+)[^<>]*>\s*\([^()]*\)\s*$")


def node_kind_else(c: Call) -> bool:
    """The `else` of an if chain that asks which kind of node a value is by its type
    (`if term.is_op::<YieldOp>(ctx) { .. } else if term.impls::<dyn Exit>(ctx) { .. } else {
    panic!("Unsupported terminator") }`): the nodes are the compiler's own intermediate forms,
    built by its earlier passes, and the panic states which forms those passes make. A type named
    like a dtype (`Float16x2`) is an element type a user's tensor has: judged as any guard."""
    if c.site.branch != "else":
        return False
    cond = c.site.condition
    m = None if "&&" in cond or "||" in cond else _TYPE_TEST.search(cond)
    if m is None:
        return False
    kinds = c.profile.dtype_kind_patterns
    words = re.findall(r"[A-Z][a-z]*\d*|\d+", m.group(1).split("::")[-1])
    return not any(rx.match(w) for w in words for _, rx in kinds)


def input_count(c: Call) -> bool:
    """A guard on how many inputs or outputs a node was given (`if node.inputs.len() != 1 {
    panic!("Flatten: multiple inputs are not supported") }`, or an assertion of the count): the
    operation's definition fixes the count, so only a malformed node fails it, whatever the
    message calls it."""
    m = rule_data().input_count.search(c.site.condition) if c.site.branch in ("then", "assert") else None
    if m is None:
        return False
    op, n = m.group(1), int(m.group(2))
    if c.site.branch == "assert":  # an assertion's condition is what must hold: it refuses the rest
        op = _NEGATED[op]
    # `> n` / `>= n` rejects inputs past the first n (or n - 1): an optional trailing input when
    # more than one is allowed.
    allowed = n if op == ">" else n - 1 if op == ">=" else 0
    return allowed <= 1


_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def overridden_default(c: Call) -> bool:
    """A trait's default method whose whole body is the call, in an ops trait every backend of the
    tree implements with a method of its own (`fn int_scatter_nd(..) { unimplemented!() }` that
    each impl overrides): no backend a user picks runs the default."""
    inheriting = c.catalog.inheriting(c.site, c.profile)
    return inheriting == [] and c.catalog.implemented(c.site.fn_trait)


def kernel_author_stub(c: Call) -> bool:
    """A function's whole body in a crate kernels are written against (the target's
    `audience.kernel_api`): a slot of the kernel language a type leaves empty (a tensor-map view
    that cannot be read, a type with no constant form). The kernel's author picks the type and
    meets the stub when writing the kernel; no dtype or setting a model's user picks selects it."""
    return c.crate in c.profile.audience.kernel_api


def misuse(c: Call) -> bool:
    """The message says the call mixed devices or backends, or asked a training-only capability of
    a device or tensor without it (`device.misuse`): the API forbids that combination, so the
    user meets a misuse, not a setting the library lacks."""
    return rule_data().misuse.search(c.site.message) is not None


def internal_element_kind(c: Call) -> bool:
    """An arm of a match on a dtype enum from outside the tree (a compiler's element kinds) that
    rejects only kinds no dtype of the target's primary enum names (`FloatKind::TF32`, the FP8
    kinds): converted back to the tree's dtype, no user's tensor has them, so no user choice takes
    the arm. A catch-all counts when the arms before it take every primary dtype of the one kind
    they name (`F16`, `BF16`, `F32`, `F64`, `Flex32` arms, then `_`): only such kinds are left."""
    enum = c.foreign
    arm = c.arm
    if enum is None or arm is None or not _converts_to_tree_dtype(c):
        return False
    primary = _primary_dtypes(c)
    if not primary:
        return False
    if not arm.catch_all:
        leaves = [r.variant for r in _leaves(arm.refs) if r.enum == enum]
        return bool(leaves) and all(canonical_dtype(v) not in primary for v in leaves)
    if arm.gated or any(o.gated or o.guard or o.catch_all for o in c.others):
        return False
    named = {r.variant for o in c.others for r in _leaves(o.refs) if r.enum == enum}
    canon = {canonical_dtype(v) for v in named}
    kinds = {_kind(v, c.profile) for v in named}
    if not named or not canon <= set(primary) or len(kinds) != 1 or None in kinds:
        return False
    kind = kinds.pop()
    return all(name in canon for name, variant in primary.items() if _kind(variant, c.profile) == kind)


# `impl From<ElemType> for FuseType`, `impl<T> TryFrom<kind::Elem> for crate::DType`: the target type.
_FROM_IMPL = re.compile(r"^impl(?:\s*<.*?>)?\s+(?:[\w:]*::)?(?:Try)?From\s*<.*>\s+for\s+(?:[\w:]*::)?(\w+)")


def _converts_to_tree_dtype(c: Call) -> bool:
    """The function converts a value into a dtype enum of the tree: `From`/`TryFrom` for one, or
    a function named as a conversion (`element_kind.conversion_fn`). A match on another library's
    kinds elsewhere (a quantization parameter the user's scheme holds) reads a user's choice."""
    m = _FROM_IMPL.match(c.site.impl)
    if m is not None and c.site.function in ("from", "try_from"):
        return m.group(1) in c.catalog
    return rule_data().conversion_fn.search(c.site.function) is not None


def _primary_dtypes(c: Call) -> dict[str, str]:
    """Canonical name -> variant of each dtype of the target's primary dtype enum in the tree."""
    enum = c.profile.dtypes.primary_enum
    if enum not in c.catalog:
        return {}
    return {canonical_dtype(v.split("(")[0]): v.split("(")[0] for v in c.catalog.expand(enum, c.crate)}


def _leaves(refs: list[VariantRef]) -> list[VariantRef]:
    """The innermost refs of each pattern (`ElemType::Float(FloatKind::TF32)` -> FloatKind::TF32)."""
    out: list[VariantRef] = []
    stack = list(refs)
    while stack:
        r = stack.pop()
        if r.sub:
            stack.extend(r.sub)
        else:
            out.append(r)
    return out
