"""The one place that names the default target. Edit PINNED_SHA to move the pin."""

from typing import Final

DEFAULT_REPO_URL = "https://github.com/tracel-ai/burn"
DEFAULT_REPO_NAME = "tracel-ai/burn"
PINNED_SHA = "d16f7ba2ed0d41408189384044cc886fb4c8f957"

SCHEMA_VERSION: Final = 2
# Lines of source shown on each side of the panic line in `sourceCode`.
WINDOW_RADIUS = 18
# The three macros a site can be; `unreachable!` is seen (for the audit) but never a record.
PANIC_MACROS = ("panic", "unimplemented", "todo")

# What `diff --fail-on` accepts; `any` is added, changed or removed (a move never fails). Kept
# here so the CLI does not import the diff engine to list them.
FAIL_ON = ("added", "changed", "removed", "any", "none")

# -- coverage audit: what makes a backend operation (burn's conventions, as data) ---------------
# A trait named `...Ops` (analyzer.facts.code.OPS_TRAIT_SUFFIX) is a backend operations trait when its
# header (generics or supertraits) names this trait: `FloatTensorOps<B: Backend>`,
# `BoolVisionOps: Backend`. Its methods, as each backend crate implements them, are the rows.
BACKEND_TRAIT = "Backend"
# The tensor kind an operation takes, from the start of its trait's name: burn's typed tensor API
# routes float dtypes only to float ops, int to int, bool to bool, quantized to q ops; module and
# activation ops take float tensors. A trait matching none takes any dtype.
OPS_TRAIT_KINDS = (("Float", "float"), ("Int", "int"), ("Bool", "bool"), ("Q", "quantized"),
                   ("Module", "float"), ("Activation", "float"))
# A dtype's kind from its variant name (burn's DType, FloatDType, IntDType; tch's Kind). A variant
# matching none (an enum's catch-all `*`, a complex type) is of no known kind: never n/a.
DTYPE_KINDS = (("float", r"F\d+|BF\d+|Flex\d+|Half|Float|Double|BFloat16|Float8\w*"),
               ("int", r"[IU]\d+|Int\d*|Uint\d+|UInt\d+"),
               ("bool", r"Bool"),
               ("quantized", r"Q\w+"))
