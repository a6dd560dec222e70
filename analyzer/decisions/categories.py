"""The categories a record can have: one entry each, holding everything the tool says about it
(its background tag, its wording in prompts and pages, its SARIF rule). Adding a category is an
entry here and its id in `CategoryId`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

# The closed sets of the record schema (pydantic checks them); kept beside the registry, which a
# test holds them equal to.
CategoryId = Literal["dtype-dispatch", "unsupported-mode", "unsupported-op"]
BackgroundTag = Literal["unsupported-dtype", "unsupported-op-backend"]


@dataclass(frozen=True)
class Category:
    """One category of record.

    `background_tag` is the record's `backgroundTag` (and a tag); `kind` describes the site to an
    annotator; `rejected` names what reaches the panic (`dtypes`, `values`); `sarif_*` are the
    SARIF rule's name and texts, whose id is `burn-errors/<id>`."""

    id: str
    background_tag: str
    kind: str
    rejected: str
    sarif_name: str
    sarif_short: str
    sarif_full: str
    sarif_help: str


CATEGORY_LIST: tuple[Category, ...] = (
    Category(
        id="dtype-dispatch",
        background_tag="unsupported-dtype",
        kind="a match on a dtype that panics for some dtypes",
        rejected="dtypes",
        sarif_name="UnsupportedDtypePanic",
        sarif_short="A match on a dtype panics for dtypes it does not support.",
        sarif_full=("A match arm that dispatches on a tensor's dtype ends in panic!, unimplemented! or todo! "
                    "for the dtypes it does not handle: a user who calls this operation with one of them "
                    "gets a panic instead of an error they can handle."),
        sarif_help=("Handle the dtype (add an arm, or cast to a supported dtype first), or document the "
                    "restriction where users see it. The panicking dtypes are listed in the result."),
    ),
    Category(
        id="unsupported-mode",
        background_tag="unsupported-op-backend",
        kind="a match on a mode or setting that panics for some values",
        rejected="values",
        sarif_name="UnsupportedModePanic",
        sarif_short="A match panics for a mode, variant or setting that is not supported.",
        sarif_full=("A match arm rejects a variant or a setting (an interpolation mode, a reduction, a "
                    "quantization scheme...) with panic!, unimplemented! or todo!: a user who picks it "
                    "gets a panic at run time."),
        sarif_help=("Support the variant, reject it earlier with an error the caller can handle, or "
                    "document which backends support it."),
    ),
    Category(
        id="unsupported-op",
        background_tag="unsupported-op-backend",
        kind="a function (a backend's, an importer's or a build's operation) whose whole body panics",
        rejected="calls",
        sarif_name="UnsupportedOperationPanic",
        sarif_short="An operation is not implemented: its whole body panics.",
        sarif_full=("A function whose whole body is unimplemented!, todo! or a panic! saying it is not "
                    "supported (a backend's ops-trait method, an importer's or a build's stub): every user "
                    "who calls this operation there gets a panic at run time."),
        sarif_help=("Implement the operation, return an error the caller can handle, or document which "
                    "backends and builds provide it."),
    ),
)
CATEGORIES: dict[str, Category] = {c.id: c for c in CATEGORY_LIST}
DTYPE = "dtype-dispatch"
MODE = "unsupported-mode"
OP = "unsupported-op"
BACKGROUND_TAG: dict[str, str] = {c.id: c.background_tag for c in CATEGORY_LIST}

assert set(get_args(CategoryId)) == set(CATEGORIES), "CategoryId must list the registry's ids"
assert set(get_args(BackgroundTag)) == set(BACKGROUND_TAG.values()), "BackgroundTag must list the registry's tags"


def by_background_tag(tag: str) -> Category | None:
    """The first category whose background tag this is (a record without `analysis` says only its
    tag)."""
    return next((c for c in CATEGORY_LIST if c.background_tag == tag), None)
