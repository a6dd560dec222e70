"""The rules of the classifier, in the order it walks them: each one entry of RULE_ORDER."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from analyzer.decisions.call import Call, scrutinee_is_dtype, scrutinee_is_foreign_kind
from analyzer.decisions.catalog import canonical_dtype
from analyzer.decisions.categories import DTYPE, MODE, OP
from analyzer.decisions.data import patterns, rule_data
from analyzer.decisions.reach import kind_fixed_catch_all, leaves_kind_gap, mixes_kinds, unreachable
from analyzer.facts.model import VariantRef
from analyzer.profiles import current

def is_test_path(path: str) -> bool:
    """A file of the target's test code (its profile's `tests.paths`)."""
    return bool(current().test_path.search(path))


# The positions a call can stand in (SiteFacts.context); a rule names those it applies to.
ARM_POSITIONS = ("match-arm", "let-else", "if-let-else", "if-let")
BODY, CLOSURE, GUARD = ("body",), ("closure",), ("guard",)
EVERY_POSITION = (*ARM_POSITIONS, *BODY, *CLOSURE, *GUARD, "other")


@dataclass(frozen=True)
class Rule:
    """One rule of the classifier, its one entry in the registry.

    `decides` is a category (the rule makes the call a record of it) or `none` (the rule leaves
    the call out); `checks` says what it checks (the audit's `why`) and `example` shows a call it
    fires on; `positions` are the SiteFacts contexts it applies to; `reads` names the keys of
    queries/classifier.toml it reads (`target.KEY`: a key of the target profile's [dtypes]); its
    rule-test file under tests/rules/ is named after its id (`dtype/scrutinee` ->
    `dtype-scrutinee.toml`)."""

    id: str
    decides: str
    checks: str
    example: str
    applies: Callable[[Call], bool]
    positions: tuple[str, ...] = EVERY_POSITION
    reads: tuple[str, ...] = ()
    # An exclusion whose decision still says which dtypes the match's arms handle: no user
    # reaches the panic, but the coverage audit reads what the function does with each dtype.
    keeps_dtypes: bool = False

    @property
    def test(self) -> str:
        return self.id.replace("/", "-") + ".toml"


NONE = "none"


# --- exclusions checked before any category ---------------------------------------------------

def _in_test_code(c: Call) -> bool:
    return c.site.in_test or is_test_path(c.path)


def _compile_time(c: Call) -> bool:
    """In a proc-macro crate whose input is kernel source (the target's `audience.compile_time`):
    the panic fires while the kernel's crate compiles, met by the kernel's author, never by a
    user running a model."""
    return c.crate in current().audience.compile_time


def _not_in_arm(c: Call) -> bool:
    return c.arm is None


def _conditional(c: Call) -> bool:
    return not c.site.unconditional


def _accessor(c: Call) -> bool:
    """An accessor: beside the panic there is one arm, naming one variant and handing back what
    it binds (`if let Data::F32s(v) = self { v } else { panic!(..) }`). Its callers know the
    variant already; the panic states that expectation, no user choice selects it."""
    arm, others = c.arm, c.others
    if arm is None or not arm.catch_all or len(others) != 1:
        return False
    o = others[0]
    shaped = (o.returns_binding and not (o.catch_all or o.guard or o.error_handling or o.gated)
              and len(o.refs) == 1 and o.refs[0].sub is None)
    # "only float32 values are supported" rejects the dtypes a user's file may hold (R12's wording).
    return shaped and not (c.says_unsupported and c.names_a_dtype)


def _kernel_only_dtype(c: Call) -> bool:
    """An explicit arm whose every variant, down its payload (`ElemType::Float(FloatKind::TF32)`),
    is an element type only kernels hold (the target's `audience.kernel_dtypes`: an index type, a
    compute-only format): no user's tensor has that dtype, so no user's choice takes the arm."""
    arm = c.arm
    kernel = current().audience.kernel_dtypes
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


def _error_handling(c: Call) -> bool:
    arm, others = c.body, c.others
    # `Some(ClipInput::Runtime(_)) => panic!(..)` takes one inner variant of a value that is there:
    # a dispatch on the inner enum, judged by the rules below, not the None / Err case.
    if arm.error_handling and not (_VALUE_ARM.match(arm.pattern) and _names_inner(arm.refs)):
        return True
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
        if not inner or whole:
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
_VALUE_ARM = re.compile(r"^&?\s*(?:\w+::)*(?:Some|Ok)\b")


def _names_inner(refs: list[VariantRef]) -> bool:
    return any(r.variant not in _OPTION_RESULT for r in refs)


# --- dtype-dispatch ---------------------------------------------------------------------------

def _dtype_validation(c: Call) -> bool:
    """The arm checks what the caller passed against what the call requires (`"Data type mismatch
    (lhs: {:?}, rhs: {:?})"`, `"Invalid cast types"`, `"Expected float data type, got {value:?}"`):
    misuse, not a dtype the library lacks. An arm that says the dtype is unsupported, or an
    unimplemented!/todo!, is left to the dtype rules; so is a catch-all left a dtype of the kind
    its arms dispatch over (`F32`/`F64` arms, `F16` left): a dtype missing, not a mismatch."""
    if _mode_macro(c) or c.says_unsupported or leaves_kind_gap(c) or mixes_kinds(c):
        return False
    pats, message = patterns(), c.site.message
    # "must be int64" after `Some(Values::Int64s(..))` arms is R12's lookup of the one dtype an
    # importer reads where a model may hold others: a record, judged by the dtype rules.
    required = c.body.catch_all and not any(o.error_handling for o in c.others)
    return (pats.validation.search(message) is not None
            or (required and pats.required.search(message) is not None))


def _dtype_scrutinee(c: Call) -> bool:
    return scrutinee_is_dtype(c.site.scrutinee)


# An arm whose pattern is one binding (`dtype`, `ref elem_type`, `x @ ..`), its guard after ` if `.
_BINDING_ARM = re.compile(r"^&?\s*(?:ref\s+)?(?:mut\s+)?([a-z_][A-Za-z0-9_]*)(?:\s*@[^|]*?)?(?:\s+if\s+(.*))?$", re.S)


def _dtype_arm_bindings(c: Call) -> bool:
    """An arm binds the scrutinee to a name that says it is a dtype (`dtype if ..`, `elem_type
    =>`), or guards its binding with a dtype-kind predicate (`x if x.is_float()`): the match
    dispatches on a dtype, whatever the scrutinee is called."""
    ident = patterns().scrutinee_ident
    predicate = rule_data()["dtype"]["binding_predicate"]
    for a in c.arms:
        m = _BINDING_ARM.match(a.pattern)
        if m is None or m.group(1) == "_":
            continue
        name, guard = m.group(1), m.group(2) or ""
        if ident.match(name):
            return True
        if guard and re.search(rf"\b{re.escape(name)}\s*\.\s*(?:{predicate})\s*\(\s*\)", guard):
            return True
    return False


def _dtype_arm_variants(c: Call) -> bool:
    return bool(c.dtype_enums)


def _dtype_foreign_kind(c: Call) -> bool:
    return scrutinee_is_foreign_kind(c.site.scrutinee, c.arms, c.crate, c.catalog)


def _dtype_foreign_variants(c: Call) -> bool:
    return c.foreign is not None


def _dtype_element_formats(c: Call) -> bool:
    """The arms name pixel/element formats with a bit depth per channel (`Rgb8`, `L16`,
    `Rgba32F`) of one enum: each arm maps a format to per-dtype values."""
    return c.element_format_enum is not None


def _dtype_guard(c: Call) -> bool:
    """A guard whose condition tests a dtype (`x.dtype() != DType::F32`, `dtype.is_int()`, a
    `DType::` variant) and whose call says the dtype is not supported."""
    return _guard_says_unsupported(c) and _condition_tests_dtype(c)


def _condition_tests_dtype(c: Call) -> bool:
    cond = c.site.condition
    if scrutinee_is_dtype(cond):
        return True
    predicate = rule_data()["dtype"]["binding_predicate"]
    if re.search(rf"\.\s*(?:{predicate})\s*\(\s*\)", cond):
        return True
    pats, kinds = patterns(), current().dtype_kinds
    for enum, variant in re.findall(r"\b([A-Z][A-Za-z0-9]*)\s*::\s*([A-Z][A-Za-z0-9]*)", cond):
        if pats.enum_name.match(enum) or (pats.kind_enum.match(enum) and variant.lower() in kinds):
            return True
    return False


def _guard_says_unsupported(c: Call) -> bool:
    return _mode_macro(c) or c.says_unsupported


# --- exclusions checked before the unsupported-mode rules ---------------------------------------

def _internal_state(c: Call) -> bool:
    """The panicking arm rejects a variant of an enum that describes the program's own context
    or state (an autotune run's context, a code-generation stage): values the library makes
    itself, never a setting a user chooses (R8)."""
    internal = patterns().internal_enum
    refs = c.body.refs if not c.body.catch_all else [r for o in c.others for r in o.refs]
    enums = {r.enum for r in refs}
    return bool(enums) and all(internal.search(e) for e in enums)


def _own_form(c: Call) -> bool:
    """The panicking arm rejects variants of an enum its own crate defines and no other crate
    names a variant of, none of whose variants is a dtype: a form the crate builds and reads
    itself (a code generator's argument kinds, a fusion engine's handles), whose values no user
    chooses. An enum with a dtype variant carries a user's data (a value read from a file), and
    so does one built from text (a derived or implemented parser: an op type read from a model)."""
    refs = c.body.refs if not c.body.catch_all else [r for o in c.others for r in o.refs]
    if not refs:
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


def _inferred_output(c: Call) -> bool:
    """A catch-all over the kinds of a node's output (`match &self.output { Type::Tensor(..) =>
    .., Type::Shape(..) => .., _ => panic!("only supports Tensor or Shape outputs") }`): the
    output's kind comes from the importer's own type inference, not from the model a user
    brings, so the kinds left are ones it never infers there (R20). A dtype dispatch on the
    output stays (the dtype rules come first): an output's dtype follows its inputs'."""
    if not c.body.catch_all or not c.others or not any(o.refs for o in c.others):
        return False
    output = patterns().inferred_output
    return any(output.match(tok) for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", c.site.scrutinee))


def _foreign_protocol(c: Call) -> bool:
    """A stub method of an impl of a trait no file of the tree defines (serde's `Serializer`, a
    kernel library's view trait): the other library calls it with the forms the tree hands it, its
    own data, so no user's choice of operation reaches the stub. The tree's own traits (a backend's
    ops trait, a recorder) stay: their methods are the operations users call."""
    if c.site.fn_kind != "trait-impl" or not c.catalog.foreign_trait(c.site.fn_trait):
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


def _node_kind_else(c: Call) -> bool:
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
    kinds = current().dtype_kind_patterns
    words = re.findall(r"[A-Z][a-z]*\d*|\d+", m.group(1).split("::")[-1])
    return not any(rx.match(w) for w in words for _, rx in kinds)


def _input_count(c: Call) -> bool:
    """A guard on how many inputs or outputs a node was given (`if node.inputs.len() != 1 {
    panic!("Flatten: multiple inputs are not supported") }`, or an assertion of the count): the
    operation's definition fixes the count, so only a malformed node fails it, whatever the
    message calls it."""
    m = patterns().input_count.search(c.site.condition) if c.site.branch in ("then", "assert") else None
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


def _overridden_default(c: Call) -> bool:
    """A trait's default method whose whole body is the call, in an ops trait every backend of the
    tree implements with a method of its own (`fn int_scatter_nd(..) { unimplemented!() }` that
    each impl overrides): no backend a user picks runs the default."""
    inheriting = c.catalog.inheriting(c.site)
    return inheriting == [] and c.catalog.implemented(c.site.fn_trait)


def _kernel_author_stub(c: Call) -> bool:
    """A function's whole body in a crate kernels are written against (the target's
    `audience.kernel_api`): a slot of the kernel language a type leaves empty (a tensor-map view
    that cannot be read, a type with no constant form). The kernel's author picks the type and
    meets the stub when writing the kernel; no dtype or setting a model's user picks selects it."""
    return c.crate in current().audience.kernel_api


# --- unsupported-mode -----------------------------------------------------------------------------

def _assertion_refuses(c: Call) -> bool:
    """An assertion with a message (analyzer/facts/sites.py reads no other) that says what its
    condition checks is not supported: the condition is the guard, the message names the setting."""
    return c.site.branch == "assert" and c.says_unsupported


def _expect_refuses(c: Call) -> bool:
    """`.expect(msg)` whose message says what it needed is not supported there (a platform with no
    blocking reader, a runtime input where a constant is read): the Option or Result it unwraps
    is the test, None or Err the refused case."""
    return c.site.branch == "expect" and c.says_unsupported


def _mode_macro(c: Call) -> bool:
    return c.site.macro in rule_data()["mode"]["macros"]


def _mode_message(c: Call) -> bool:
    return c.says_unsupported


# A condition that holds no value of the program's input: a call of an associated function with no
# arguments (`DeviceHandle::<S>::is_blocking()`, `!Backend::supports_sync()`) or a `cfg!(..)`.
_BUILD_PREDICATE = re.compile(r"!?\s*(?:cfg\s*!\s*\([^()]*\)"
                              r"|[A-Z]\w*(?:\s*::\s*(?:<[^()]*?>|\w+))*\s*::\s*[a-z_]\w*\s*\(\s*\))")


def _build_guard(c: Call) -> bool:
    """A guard whose condition asks only the build or the platform (an associated predicate with
    no arguments, a `cfg!`) and whose call says what cannot be done there (`if
    Handle::is_blocking() { panic!("Can't use `all_reduce` with a blocking device handle") }`):
    the user picked that platform or build, and the operation is not available on it. "Can't"
    on a guard that tests a value states misuse (R17); a test of no value states a limit."""
    pats, message = patterns(), c.site.message
    if pats.transient_state.search(message):
        return False
    # A statement compiled only when a feature is left out (`#[cfg(not(feature = "std"))]
    # panic!("Attempting to run benchmark in a no-std environment")`) runs exactly in the builds
    # that lack the feature: whatever its wording, it says the operation needs it.
    if c.site.branch == "cfg" and _FEATURE_LEFT_OUT.match(c.site.condition):
        return True
    return bool(_BUILD_PREDICATE.fullmatch(c.site.condition.strip())) and bool(pats.variant_cannot.search(message))


_FEATURE_LEFT_OUT = re.compile(r"#\s*\[\s*cfg\s*\(\s*not\s*\(\s*feature\s*=")


# --- unsupported-op -------------------------------------------------------------------------------

def _build_gate(c: Call) -> bool:
    """A statement a `#[cfg(..)]` attribute compiles in only for the builds that lack a feature or
    a capability, and that says so (`#[cfg(not(target_has_atomic = "32"))] panic!("Can't use
    deformable convolution backwards pass without atomics")`): in those builds it is what the
    operation does, so the operation is not there."""
    return c.site.branch == "cfg" and (_mode_macro(c) or c.says_unsupported or _build_guard(c))


def _op_macro(c: Call) -> bool:
    return c.site.macro in rule_data()["mode"]["macros"]


def _op_message(c: Call) -> bool:
    """The message says the operation is not supported; a function's name says which operation,
    as an explicit arm names its variant, so "can't <verb>" counts too (`Can't differentiate ..`)."""
    pats, message = patterns(), c.site.message
    return c.says_unsupported or (bool(pats.variant_cannot.search(message))
                                  and not pats.transient_state.search(message))


# The rules in the order the classifier walks them (the order docs/classifier-rubric.md gives).
# An exclusion that applies ends the walk; consecutive rules of one category all get their say,
# and the category of the first that fired decides once the walk leaves that group.
RULE_ORDER: tuple[Rule, ...] = (
    Rule("exclude/test-code", NONE, "in tests/, benches/, a #[cfg(test)] module or a #[test] function",
         "`#[test] fn f() { match x { _ => panic!() } }`", _in_test_code),
    Rule("exclude/unreachable", NONE, "unreachable! states an impossibility, not a missing feature; "
         "so does a catch-all arm no value can reach (after every variant of an enum of the tree, or of a "
         "declared non-exhaustive foreign one)",
         "`_ => unreachable!()`; `_ => panic!()` after arms for every variant but `Never(Infallible)`", unreachable,
         reads=("target.foreign_non_exhaustive",)),
    Rule("exclude/compile-time", NONE,
         "in a proc-macro crate whose input is kernel source: it fires while a kernel's crate compiles",
         "`_ => panic!(\"unsupported pattern in match\")` in the `#[cube]` macro's crate", _compile_time,
         reads=("target.compile_time",)),
    Rule("exclude/not-in-arm", NONE,
         "not the body of a match arm, let-else, if-let, plain if/else branch, nor a function's whole body",
         "`fn f(n: usize) { check(n); panic!(\"no\") }`", _not_in_arm, (*ARM_POSITIONS, "other")),
    Rule("exclude/conditional", NONE, "inside the arm or branch, but behind a condition",
         "`A => { for x in y { panic!() } }`", _conditional, (*ARM_POSITIONS, *GUARD)),
    Rule("exclude/error-handling", NONE, "the arm handles Err/None/Ok/Some (error handling)",
         "`Err(e) => panic!(\"{e}\")`", _error_handling, ARM_POSITIONS),
    Rule("exclude/accessor", NONE,
         "an accessor: one other arm, naming one variant and handing back its payload",
         "`if let Data::F32s(v) = self { v } else { panic!(\"not f32\") }`", _accessor, ARM_POSITIONS),
    Rule("exclude/kernel-only-dtype", NONE,
         "an explicit arm naming only element types no user's tensor holds (a kernel's index type)",
         "`ElemType::Index => panic!(\"Index not supported in NCCL\")`", _kernel_only_dtype, ARM_POSITIONS,
         ("target.kernel_dtypes",)),
    Rule("exclude/dtype-validation", NONE,
         "a dtype arm whose message states a mismatch, an invalid value or the dtype it expected, not missing support "
         "(a catch-all its arms leave a dtype of the kind they dispatch over stays a record)",
         "`(DType::F32, DType::F64) => panic!(\"data type mismatch\")`; `_ => panic!(\"expected float, got {:?}\")`",
         _dtype_validation, ARM_POSITIONS,
         ("dtype.validation", "dtype.required", "mode.unsupported", "mode.macros", "target.kinds")),
    Rule("exclude/kind-fixed-catch-all", NONE,
         "the catch-all of a dtype match whose arms take every dtype of the one kind the code around it allows "
         "(the tensor of an ops method of that kind), or whose dtypes left its crate remaps away",
         "`fn int_abs(t: IntTensor) { match t.dtype() { DType::I64 => .., /* every int */ _ => panic!() } }`",
         kind_fixed_catch_all, ARM_POSITIONS,
         ("target.kinds", "kind_fixed.outside_value"), keeps_dtypes=True),
    Rule("dtype/scrutinee", DTYPE,
         "the match scrutinee is a dtype (x.dtype(), data.dtype, src_dtype, a tuple holding one)",
         "`match x.dtype() { DType::F32 => .., _ => panic!() }`", _dtype_scrutinee, ARM_POSITIONS,
         ("dtype.scrutinee_ident",)),
    Rule("dtype/arm-bindings", DTYPE,
         "an arm binds the scrutinee to a dtype name (dtype, elem_type) or guards it with x.is_float()-like predicates",
         "`match &self.to { dtype if dtype.is_int() => panic!(), .. }`", _dtype_arm_bindings, ("match-arm",),
         ("dtype.scrutinee_ident", "dtype.binding_predicate")),
    Rule("dtype/arm-variants", DTYPE, "the arms name variants of a dtype enum found in the tree",
         "`DType::F16 => panic!(\"no f16\")`", _dtype_arm_variants, ARM_POSITIONS,
         ("dtype.enum_name", "dtype.payload_share", "dtype.all_min", "dtype.derived_suffixes")),
    Rule("dtype/foreign-kind", DTYPE, "a tch kind() match on tch::Kind variants",
         "`match t.kind() { Kind::Float => .., _ => panic!() }`", _dtype_foreign_kind, ARM_POSITIONS,
         ("target.foreign_kind_method", "target.foreign_kind_enum")),
    Rule("dtype/foreign-variants", DTYPE,
         "arms name variants of a dtype enum from outside the tree (cubecl FloatKind, ElemType)",
         "`FloatKind::F16 => .., FloatKind::BF16 => .., _ => panic!()`", _dtype_foreign_variants, ARM_POSITIONS,
         ("dtype.foreign_like_min", "target.foreign_enums", "dtype.enum_name")),
    Rule("dtype/element-formats", DTYPE,
         "arms name pixel/element formats with a bit depth (an image colour type: L8, Rgb16, Rgba32F)",
         "`L8 => .., Rgb16 => .., Rgba32F => .., _ => panic!()`", _dtype_element_formats, ARM_POSITIONS,
         ("dtype.element_format", "dtype.element_format_min")),
    Rule("dtype/mixed-kinds", DTYPE,
         "the catch-all of a tuple match whose arms pair each variant with itself, over variants of two dtype kinds: "
         "the pairs left mix a quantized and a plain tensor",
         "`(Float(a), Float(b)) => .., (QFloat(a), QFloat(b)) => .., _ => panic!(\"type mismatch\")`",
         mixes_kinds, ("match-arm",), ("target.kinds", "dtype.mixed_kinds")),
    Rule("dtype/guard-condition", DTYPE,
         "a plain if whose condition tests a dtype rejects it as not supported (or with unimplemented!/todo!)",
         "`if x.dtype().is_int() { panic!(\"int matmul is not supported\") }`", _dtype_guard, GUARD,
         ("dtype.scrutinee_ident", "dtype.binding_predicate", "dtype.enum_name", "mode.macros", "mode.unsupported")),
    Rule("exclude/internal-state", NONE,
         "the arm rejects a variant of an internal context/state enum, which no user setting selects",
         "`RunContext::Replay(_) => panic!(\"not supported while ..\")`", _internal_state, ARM_POSITIONS,
         ("mode.internal_enum",)),
    Rule("exclude/own-form", NONE,
         "the arm rejects variants of an enum only its own crate names, with no dtype variant and no parser "
         "from text (EnumString, FromStr): a form the crate builds itself",
         "`FuseArg::Input(p) => read(p), _ => panic!(\"Not supported\")`", _own_form, ARM_POSITIONS,
         ("own_form.input_derives",)),
    Rule("exclude/inferred-output", NONE,
         "a catch-all over the kinds of a node's output, which the importer's own type inference gave it",
         "`match &self.output { Type::Tensor(t) => .., _ => panic!(\"only supports Tensor outputs\") }`",
         _inferred_output, ARM_POSITIONS, ("mode.inferred_output",)),
    Rule("exclude/foreign-protocol", NONE,
         "a method of an impl of a trait no file of the tree defines (another library's protocol) whose whole "
         "body is the call", "`impl serde::Serializer for Ser { fn serialize_map(..) { unimplemented!() } }`",
         _foreign_protocol, BODY, ("dtype.derived_suffixes",)),
    Rule("exclude/overridden-default", NONE,
         "a trait's default method whose whole body is the call, which every impl of the ops trait in the tree "
         "overrides", "`trait IntTensorOps { fn int_scatter_nd(..) { unimplemented!() } }` with every backend "
         "defining `int_scatter_nd`", _overridden_default, BODY),
    Rule("exclude/node-kind-else", NONE,
         "the else of an if chain that tests which kind of IR node a value is by its type: a form the compiler builds",
         "`if t.is_op::<YieldOp>(ctx) { .. } else { panic!(\"Unsupported terminator\") }`", _node_kind_else, GUARD),
    Rule("exclude/kernel-author-stub", NONE,
         "a function's whole body in a crate kernels are written against (the kernel language, its library, its IR)",
         "`fn __expand_read_method(&self, s: &Scope, i: I) -> E { unimplemented!(\"Can't read\") }`",
         _kernel_author_stub, BODY, ("target.kernel_api",)),
    Rule("exclude/input-count", NONE,
         "a plain if on how many inputs or outputs a node was given: the operation fixes the count, so a node "
         "failing it is malformed",
         "`if node.inputs.len() != 1 { panic!(\"multiple inputs are not supported\") }`", _input_count, GUARD,
         ("count.condition",)),
    Rule("op/build-gate", OP,
         "a statement compiled in only for builds that lack a feature or capability says the operation is not there",
         "`#[cfg(not(feature = \"std\"))] panic!(\"Attempting to run benchmark in a no-std environment\")`",
         _build_gate, GUARD, ("mode.macros", "mode.unsupported", "mode.variant_cannot", "mode.transient_state")),
    Rule("op/unimplemented-body", OP, "a function or closure whose whole body is unimplemented!/todo!",
         "`fn q_slice(t: T, r: R) -> T { unimplemented!() }`", _op_macro, (*BODY, *CLOSURE), ("mode.macros",)),
    Rule("op/unsupported-message", OP,
         "a function or closure whose whole body is a panic saying the operation is not supported (or can't be done)",
         "`fn rfft(t: T) -> T { panic!(\"rfft is not supported by this backend\") }`", _op_message, (*BODY, *CLOSURE),
         ("mode.unsupported", "mode.variant_cannot", "mode.transient_state")),
    Rule("mode/assertion", MODE,
         "an assertion (assert!, assert_eq!, assert_ne!) whose message says the setting its condition checks is "
         "not supported: the condition is the guard",
         "`assert!(!options.ceil_mode, \"Candle does not support ceil mode\")`", _assertion_refuses, GUARD,
         ("mode.unsupported", "mode.variant_cannot", "mode.transient_state")),
    Rule("mode/expect", MODE,
         ".expect(msg) whose message says what it needed is not supported there: the Option or Result it "
         "unwraps is the guard",
         "`read_sync(data).expect(\"This operation is not supported until this backend has a blocking reader\")`",
         _expect_refuses, GUARD, ("mode.unsupported", "mode.variant_cannot", "mode.transient_state")),
    Rule("mode/unimplemented-macro", MODE,
         "unimplemented!/todo! in an arm of a non-dtype match, or behind a plain if",
         "`PadMode::Reflect => unimplemented!()`", _mode_macro, (*ARM_POSITIONS, *GUARD), ("mode.macros",)),
    Rule("mode/unsupported-message", MODE, "the message says the variant or setting is not supported",
         "`InterpolateMode::Bicubic => panic!(\"bicubic is not supported\")`; "
         "`if ceil_mode { panic!(\"ceil_mode is not supported\") }`", _mode_message, (*ARM_POSITIONS, *GUARD),
         ("mode.unsupported", "mode.variant_cannot", "mode.transient_state")),
    Rule("mode/build-guard", MODE,
         "a guard whose condition asks only the build or platform says what cannot be done there, or a statement "
         "compiled only when a feature is left out",
         "`if Handle::is_blocking() { panic!(\"Can't use `all_reduce` with a blocking handle\") }`",
         _build_guard, GUARD, ("mode.variant_cannot", "mode.transient_state")),
    Rule("exclude/internal-expectation", NONE, "the message states an internal expectation or misuse, "
         "not a missing feature", "`_ => panic!(\"Malformed list of entries\")`; "
         "`if a.len() != b.len() { panic!(\"lengths differ\") }`", lambda c: True,
         (*ARM_POSITIONS, *BODY, *CLOSURE, *GUARD)),
)
RULES = {r.id: r.checks for r in RULE_ORDER}
EXCLUSIONS = {r.id: r.checks for r in RULE_ORDER if r.decides == NONE}
