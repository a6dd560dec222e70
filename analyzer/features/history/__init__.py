"""The history of the records across revisions: the core of `burn-errors history`.

It extracts at each revision in turn (by default the repository's release tags in version order,
then `--to`), links the records of each pair of neighbouring revisions, and follows every site
from the revision it was first seen at to the one where it disappeared:

- a **lineage** is one site over time: first seen at, each revision where its content changed
  (the fields `analysis.contentHash` is made of: message, category, macro, scrutinee, arm pattern,
  handled and rejected dtypes), each revision where it moved to another file, and the revision
  where it disappeared, with what the disappearance looks like:
  - `fixed`: a dtype it rejected is handled by the same operation at that revision
    (`dtype-handled`), or its function is still in its file and still matches on the same
    expression, without the panicking arm (`arm-removed`);
  - `removed-from-tree`: its file (`file-gone`) or its function (`function-gone`) is gone;
  - `rewritten`: the function is still there but no longer matches on that expression
    (`match-gone`): the site went away with the code around it, not evidently as a fix.
- a **cell flip** is a (backend, operation, dtype) cell that `coverage --repo` shows at two
  neighbouring revisions (the operations matrix, blank included) whose status differs, as `diff`
  defines it (analyzer/features/diff.py `flips_shown`): `fixed` (it panicked and is handled or
  blank now), `improved` (it panics less, still partly), `regressed` (it panics more), `changed`
  (otherwise). A dependency's cells are those of its records.

Which record of one revision continues which record of the previous one is decided in one place,
`follow._link` (the lineage seam). Memory stays bounded: only the previous revision's record lines
and table of shown cells (history/cells.py) are alive at a time, and each lineage keeps small `State` summaries, not
records. Every revision reads its files through the shared per-blob cache, so each one parses only
the blobs the revisions before it did not have; a revision analysed before is one results-cache row.

Modules: `revisions` (which revisions, in which order), `model` (what a history holds, as the
sinks render it), `cells` (what is kept of a revision's coverage), `follow` (records and cells followed from one
revision to the next), `run`
(analysing each revision and folding it in).
"""
