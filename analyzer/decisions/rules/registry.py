"""The rule registry: every rule of the classifier, one entry each, in the order it walks them."""

from __future__ import annotations

from analyzer.decisions.categories import DTYPE, MODE, OP
from analyzer.decisions.reach import kind_fixed_catch_all, mixes_kinds, unreachable
from analyzer.decisions.rules import dtype, exclusions, mode, op, wording
from analyzer.decisions.rules.base import ARM_POSITIONS, BODY, CLOSURE, GUARD, NONE, Rule, unimplemented_macro

# The rule data of the messages that say a thing is not supported or cannot be done (or not yet).
_REFUSAL_WORDS = ("mode.unsupported", "mode.variant_cannot", "mode.transient_state")

# The rules in the order the classifier walks them (the order docs/classifier-rubric.md gives).
# An exclusion that applies ends the walk; consecutive rules of one category all get their say,
# and the category of the first that fired decides once the walk leaves that group.
RULE_ORDER: tuple[Rule, ...] = (
    Rule("exclude/test-code", NONE, "in tests/, benches/, examples/, a #[cfg(test)] module or a #[test] function",
         "`#[test] fn f() { match x { _ => panic!() } }`", exclusions.in_test_code),
    Rule("exclude/unreachable", NONE, "unreachable! states an impossibility, not a missing feature; "
         "so does a catch-all arm no value can reach (after every variant of an enum of the tree, or of a "
         "declared non-exhaustive foreign one)",
         "`_ => unreachable!()`; `_ => panic!()` after arms for every variant but `Never(Infallible)`", unreachable,
         reads=("target.foreign_non_exhaustive",)),
    Rule("exclude/compile-time", NONE,
         "in a proc-macro crate (a file of it defines a #[proc_macro..] entry point, or the target names it), "
         "outside the code it emits (quote!): it fires while the crate using the macro compiles",
         "`_ => panic!(\"Only structs can be derived\")` in the crate of `#[derive(Module)]`", exclusions.compile_time,
         reads=("target.compile_time",)),
    Rule("exclude/not-in-arm", NONE,
         "not the body of a match arm, let-else, if-let, plain if/else branch, nor a function's whole body",
         "`fn f(n: usize) { check(n); panic!(\"no\") }`", exclusions.not_in_arm, (*ARM_POSITIONS, "other")),
    Rule("exclude/conditional", NONE, "inside the arm or branch, but behind a condition",
         "`A => { for x in y { panic!() } }`", exclusions.conditional, (*ARM_POSITIONS, *GUARD)),
    Rule("exclude/error-handling", NONE, "the arm handles Err/None/Ok/Some (error handling)",
         "`Err(e) => panic!(\"{e}\")`", exclusions.error_handling, ARM_POSITIONS),
    Rule("exclude/accessor", NONE,
         "an accessor: one other arm, naming one variant and handing back its payload",
         "`if let Data::F32s(v) = self { v } else { panic!(\"not f32\") }`", exclusions.accessor, ARM_POSITIONS),
    Rule("exclude/kernel-only-dtype", NONE,
         "an explicit arm naming only element types no user's tensor holds (a kernel's index type)",
         "`ElemType::Index => panic!(\"Index not supported in NCCL\")`", exclusions.kernel_only_dtype, ARM_POSITIONS,
         ("target.kernel_dtypes",)),
    Rule("exclude/dtype-validation", NONE,
         "a dtype arm whose message states a mismatch, an invalid value or the dtype it expected, not missing support "
         "(a catch-all its arms leave a dtype of the kind they dispatch over stays a record)",
         "`(DType::F32, DType::F64) => panic!(\"data type mismatch\")`; `_ => panic!(\"expected float, got {:?}\")`",
         exclusions.dtype_validation, ARM_POSITIONS,
         ("dtype.validation", "dtype.required", "mode.unsupported", "mode.macros", "target.kinds")),
    Rule("exclude/stated-expectation", NONE,
         "the message says what should hold or should have happened: an expectation of the program's own "
         "values, not a choice refused (unless it also says the thing is not supported)",
         "`unimplemented!(\"This should never be called\")`; `_ => panic!(\"Bool should be converted first\")`",
         wording.stated_expectation, (*ARM_POSITIONS, *BODY, *CLOSURE, *GUARD),
         ("mode.expectation", "mode.unsupported")),
    Rule("exclude/kind-fixed-catch-all", NONE,
         "the catch-all of a dtype match whose arms take every dtype of the one kind the code around it allows "
         "(the tensor of an ops method of that kind), or whose dtypes left its crate remaps away",
         "`fn int_abs(t: IntTensor) { match t.dtype() { DType::I64 => .., /* every int */ _ => panic!() } }`",
         kind_fixed_catch_all, ARM_POSITIONS,
         ("target.kinds", "kind_fixed.outside_value"), keeps_dtypes=True),
    Rule("exclude/internal-element-kind", NONE,
         "an arm of a match on another library's dtype enum rejecting only kinds no dtype of the target's primary "
         "enum names (a compiler's TF32, FP8), or a catch-all after every primary dtype of the one kind named",
         "`FloatKind::TF32 => panic!(\"Not a valid DType for tensors.\")` converting cubecl's kinds back to DType",
         exclusions.internal_element_kind, ARM_POSITIONS,
         ("target.primary_enum", "target.kinds", "element_kind.conversion_fn")),
    Rule("dtype/scrutinee", DTYPE,
         "the match scrutinee is a dtype (x.dtype(), data.dtype, src_dtype, a tuple holding one)",
         "`match x.dtype() { DType::F32 => .., _ => panic!() }`", dtype.scrutinee, ARM_POSITIONS,
         ("dtype.scrutinee_ident",)),
    Rule("dtype/arm-bindings", DTYPE,
         "an arm binds the scrutinee to a dtype name (dtype, elem_type) or guards it with x.is_float()-like predicates",
         "`match &self.to { dtype if dtype.is_int() => panic!(), .. }`", dtype.arm_bindings, ("match-arm",),
         ("dtype.scrutinee_ident", "dtype.binding_predicate")),
    Rule("dtype/arm-variants", DTYPE, "the arms name variants of a dtype enum found in the tree",
         "`DType::F16 => panic!(\"no f16\")`", dtype.arm_variants, ARM_POSITIONS,
         ("dtype.enum_name", "dtype.payload_share", "dtype.all_min", "dtype.derived_suffixes")),
    Rule("dtype/foreign-kind", DTYPE, "a tch kind() match on tch::Kind variants",
         "`match t.kind() { Kind::Float => .., _ => panic!() }`", dtype.foreign_kind, ARM_POSITIONS,
         ("target.foreign_kind_method", "target.foreign_kind_enum")),
    Rule("dtype/foreign-variants", DTYPE,
         "arms name variants of a dtype enum from outside the tree (cubecl FloatKind, ElemType)",
         "`FloatKind::F16 => .., FloatKind::BF16 => .., _ => panic!()`", dtype.foreign_variants, ARM_POSITIONS,
         ("dtype.foreign_like_min", "target.foreign_enums", "dtype.enum_name")),
    Rule("dtype/element-formats", DTYPE,
         "arms name pixel/element formats with a bit depth (an image colour type: L8, Rgb16, Rgba32F)",
         "`L8 => .., Rgb16 => .., Rgba32F => .., _ => panic!()`", dtype.element_formats, ARM_POSITIONS,
         ("dtype.element_format", "dtype.element_format_min")),
    Rule("dtype/mixed-kinds", DTYPE,
         "the catch-all of a tuple match whose arms pair each variant with itself, over variants of two dtype kinds: "
         "the pairs left mix a quantized and a plain tensor",
         "`(Float(a), Float(b)) => .., (QFloat(a), QFloat(b)) => .., _ => panic!(\"type mismatch\")`",
         mixes_kinds, ("match-arm",), ("target.kinds", "dtype.mixed_kinds")),
    Rule("dtype/guard-condition", DTYPE,
         "a plain if whose condition tests a dtype rejects it as not supported (or with unimplemented!/todo!)",
         "`if x.dtype().is_int() { panic!(\"int matmul is not supported\") }`", dtype.guard_condition, GUARD,
         ("dtype.scrutinee_ident", "dtype.binding_predicate", "dtype.enum_name", "mode.macros", "mode.unsupported")),
    Rule("exclude/misuse", NONE,
         "the message says the call mixed devices or backends, or asked a training-only capability of a device "
         "or tensor without it",
         "`_ => panic!(\"Autodiff is not enabled on this device\")`", exclusions.misuse,
         (*ARM_POSITIONS, *BODY, *CLOSURE, *GUARD), ("device.misuse",)),
    Rule("exclude/internal-state", NONE,
         "the arm rejects a variant of an internal context/state enum, which no user setting selects",
         "`RunContext::Replay(_) => panic!(\"not supported while ..\")`", exclusions.internal_state, ARM_POSITIONS,
         ("mode.internal_enum",)),
    Rule("exclude/own-form", NONE,
         "the arm rejects variants of an enum only its own crate names, with no dtype variant and no parser "
         "from text (EnumString, FromStr): a form the crate builds itself",
         "`FuseArg::Input(p) => read(p), _ => panic!(\"Not supported\")`", exclusions.own_form, ARM_POSITIONS,
         ("own_form.input_derives",)),
    Rule("exclude/kernel-language-form", NONE,
         "in a crate kernels are written against, the match names only that crate family's own non-dtype enums, "
         "or no enum (a rank, a type's size): a form of the kernel language a kernel's author writes",
         "`Type::Opaque(_) => panic!(\"Can't get size of opaque type\")` in the kernel IR's crate",
         exclusions.kernel_language_form, ARM_POSITIONS, ("target.kernel_api",)),
    Rule("exclude/inferred-output", NONE,
         "a catch-all over the kinds of a node's output, which the importer's own type inference gave it",
         "`match &self.output { Type::Tensor(t) => .., _ => panic!(\"only supports Tensor outputs\") }`",
         exclusions.inferred_output, ARM_POSITIONS, ("mode.inferred_output",)),
    Rule("exclude/foreign-protocol", NONE,
         "a method of an impl of a trait no file of the tree defines (another library's protocol) whose whole "
         "body is the call; not the deserializing half of a data protocol (serde's Deserializer), which fills a "
         "user's types from their file",
         "`impl serde::Serializer for Ser { fn serialize_map(..) { unimplemented!() } }`",
         exclusions.foreign_protocol, BODY, ("dtype.derived_suffixes",)),
    Rule("exclude/overridden-default", NONE,
         "a trait's default method whose whole body is the call, which every impl of the ops trait in the tree "
         "overrides", "`trait IntTensorOps { fn int_scatter_nd(..) { unimplemented!() } }` with every backend "
         "defining `int_scatter_nd`", exclusions.overridden_default, BODY),
    Rule("exclude/node-kind-else", NONE,
         "the else of an if chain that tests which kind of IR node a value is by its type: a form the compiler builds",
         "`if t.is_op::<YieldOp>(ctx) { .. } else { panic!(\"Unsupported terminator\") }`",
         exclusions.node_kind_else, GUARD),
    Rule("exclude/kernel-author-stub", NONE,
         "a function's whole body in a crate kernels are written against (the kernel language, its library, its IR)",
         "`fn __expand_read_method(&self, s: &Scope, i: I) -> E { unimplemented!(\"Can't read\") }`",
         exclusions.kernel_author_stub, BODY, ("target.kernel_api",)),
    Rule("exclude/kernel-constant", NONE,
         "in a crate kernels are written against, the message demands a value known when the kernel is expanded: "
         "a rule of the kernel language its author breaks",
         "`index.constant().expect(\"Index must be constant\")` in the kernel language's crate",
         wording.kernel_constant, (*ARM_POSITIONS, *BODY, *CLOSURE, *GUARD),
         ("target.kernel_api", "mode.kernel_constant")),
    Rule("exclude/input-count", NONE,
         "a plain if on how many inputs or outputs a node was given: the operation fixes the count, so a node "
         "failing it is malformed",
         "`if node.inputs.len() != 1 { panic!(\"multiple inputs are not supported\") }`", exclusions.input_count, GUARD,
         ("count.condition",)),
    Rule("op/build-gate", OP,
         "a statement compiled in only for builds that lack a feature or capability says the operation is not there",
         "`#[cfg(not(feature = \"std\"))] panic!(\"Attempting to run benchmark in a no-std environment\")`",
         op.build_gate, GUARD, ("mode.macros", "mode.unsupported", "mode.variant_cannot", "mode.transient_state")),
    Rule("op/unimplemented-body", OP, "a function or closure whose whole body is unimplemented!/todo!",
         "`fn q_slice(t: T, r: R) -> T { unimplemented!() }`", unimplemented_macro, (*BODY, *CLOSURE),
         ("mode.macros",)),
    Rule("op/unsupported-message", OP,
         "a function or closure whose whole body is a panic saying the operation is not supported (or can't be done)",
         "`fn rfft(t: T) -> T { panic!(\"rfft is not supported by this backend\") }`",
         op.unsupported_message, (*BODY, *CLOSURE),
         _REFUSAL_WORDS),
    Rule("mode/runtime-input", MODE,
         "the arm takes the runtime variant of an input-kind enum (a value the model computes, beside a "
         "constant one), explicitly or as the catch-all beside arms naming only the enum's other variants",
         "`Some(SliceInput::Static(s)) => s, _ => panic!(\"Steps must be Static\")`", mode.runtime_input,
         ARM_POSITIONS, ("mode.runtime_variant",)),
    Rule("mode/input-kinds", MODE,
         "the catch-all of a match on the kinds of two or more operands at once, with two or more arms: they take "
         "the combinations of input kinds a valid model feeds the operator, the catch-all refuses the rest",
         "`(ArgType::ScalarNative(_), ArgType::ScalarNative(_)) => .., _ => panic!(\"requires tensor or scalar "
         "inputs\")` on `(&lhs.ty, &rhs.ty)`", mode.input_kinds, ("match-arm",),
         ("mode.operand_kind",)),
    Rule("mode/assertion", MODE,
         "an assertion (assert!, assert_eq!, assert_ne!) whose message says the setting its condition checks is "
         "not supported: the condition is the guard",
         "`assert!(!options.ceil_mode, \"Candle does not support ceil mode\")`", mode.assertion, GUARD,
         _REFUSAL_WORDS),
    Rule("mode/expect", MODE,
         ".expect(msg) whose message says what it needed is not supported there: the Option or Result it "
         "unwraps is the guard",
         "`read_sync(data).expect(\"This operation is not supported until this backend has a blocking reader\")`",
         mode.expect, GUARD, _REFUSAL_WORDS),
    Rule("mode/unimplemented-macro", MODE,
         "unimplemented!/todo! in an arm of a non-dtype match, or behind a plain if",
         "`PadMode::Reflect => unimplemented!()`", unimplemented_macro, (*ARM_POSITIONS, *GUARD), ("mode.macros",)),
    Rule("mode/unsupported-message", MODE, "the message says the variant or setting is not supported",
         "`InterpolateMode::Bicubic => panic!(\"bicubic is not supported\")`; "
         "`if ceil_mode { panic!(\"ceil_mode is not supported\") }`",
         mode.unsupported_message, (*ARM_POSITIONS, *GUARD),
         _REFUSAL_WORDS),
    Rule("mode/build-guard", MODE,
         "a guard whose condition asks only the build or platform says what cannot be done there, or a statement "
         "compiled only when a feature is left out",
         "`if Handle::is_blocking() { panic!(\"Can't use `all_reduce` with a blocking handle\") }`",
         mode.build_guard, GUARD, ("mode.variant_cannot", "mode.transient_state")),
    Rule("exclude/internal-expectation", NONE, "the message states an internal expectation or misuse, "
         "not a missing feature", "`_ => panic!(\"Malformed list of entries\")`; "
         "`if a.len() != b.len() { panic!(\"lengths differ\") }`", lambda c: True,
         (*ARM_POSITIONS, *BODY, *CLOSURE, *GUARD)),
)
RULES = {r.id: r.checks for r in RULE_ORDER}
EXCLUSIONS = {r.id: r.checks for r in RULE_ORDER if r.decides == NONE}
