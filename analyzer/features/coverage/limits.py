"""Storage limits of the operations view: a dtype a backend cannot hold at all. A creation
operation (`*from_data`, `*empty`, `*zeros`, `*ones`, `*full`, `*random`) panics on it and no
creation operation or cast of its kind makes it: none handles it, and none with no panic found
on it really produces it (`dtype_makes`: tch's `float_zeros` hands any float dtype to its kind
conversion, which takes Flex32; a creation that ignores the dtype makes only its crate's element
types). No tensor of it then ever exists on the backend: every operation of the dtype's kind
panics there, at the tensor's creation (cells `panics`, reason `cannot hold`). A creation that
rejects a dtype another creation makes keeps its own panicking cell.

The same holds for a storage of a dtype, a payload variant such as `Bool(U32)`: a creation operation
rejects it in a dispatch on the dtype (`DType::Bool(BoolStore::U32)`) or on the enum of its storages
(`BoolDType::U32`, an enum whose variants are the dtype's payloads). A collapsed column folds the
storages (`Bool`): the paths only such a storage reaches no longer make the column partial or
panicking; its part says `cannot hold`."""

from __future__ import annotations

import re

from analyzer.features.coverage.model import (
    CANNOT_HOLD, HANDLED, NA, NOT_IMPLEMENTED, PANICS, PARTIAL, Cell, Evidence, Group, Limit, Operation,
    base_variant, fold, label,
)

# burn's creation operations (a tensor from host data, an uninitialised one) and casts (another
# dtype's tensor made into this one), by their names in the ops traits.
_CREATES = re.compile(r"(?:^|_)(?:from_data|empty|zeros|ones|full|random)$")
_CASTS = re.compile(r"(?:^|_)cast$")


def storage_limits(cells: dict[tuple[str, str, str], Cell], kind_of, groups: list[Group] | None = None,
                   ops: dict[tuple[str, str], Operation] | None = None,
                   unfollowed: frozenset[tuple[str, str]] = frozenset(),
                   makes: dict[tuple[str, str], frozenset[str] | None] | None = None) -> list[Limit]:
    """The (crate, dtype) pairs a creation operation panics on and none makes (dtypes of a known
    kind only: a foreign enum's `*` is no one dtype), and the (crate, storage) pairs so
    (`Bool(U32)`), read from the storages each creation cell decides. With `ops`, a creation or
    cast of the dtype's kind with no panic found on it (no cell, or no part for the storage)
    makes it too, unless it is one of `unfollowed` (it hands the dtype to a trait default the
    audit does not read, where a panic may lie), or, with `makes` (`dtype_makes`), it does not
    produce the dtype: it maps the dtype itself and names others, or it takes no dtype it uses
    and the dtype is no element type of its crate."""
    rejected: dict[tuple[str, str], list] = {}
    held: set[tuple[str, str]] = set()
    storages = storage_enums(groups or [], cells)
    # (creates, casts) per operation name: asked once per name, not per cell
    roles = {op: (bool(_CREATES.search(op)), bool(_CASTS.search(op))) for op in {k[1] for k in cells}}
    for (crate, op, col), cell in cells.items():
        creates, casts = roles[op]
        if (not creates and not casts) or not kind_of(col):
            continue
        if "(" not in col:
            if cell.status in (HANDLED, PARTIAL):
                held.add((crate, col))
            elif cell.status == PANICS and creates:
                rejected.setdefault((crate, col), []).append((op, cell.sites[0]))
        for part, status in _storage_parts(cell, storages):
            if status in (HANDLED, PARTIAL):
                held.add((crate, part))
            elif status == PANICS and creates:
                site = next((e.site for e in cell.evidence if e.status == PANICS), None) or next(iter(cell.sites), None)
                if site is not None:
                    rejected.setdefault((crate, part), []).append((op, site))
    makers: dict[str, list[Operation]] = {}
    for (crate, op), operation in (ops or {}).items():
        if (_CREATES.search(op) or _CASTS.search(op)) and (crate, op) not in unfollowed:
            makers.setdefault(crate, []).append(operation)
    return [Limit(crate, col, by) for (crate, col), by in rejected.items()
            if (crate, col) not in held
            and not _made_unchecked(cells, makers.get(crate, ()), col, kind_of, storages, makes)]


def _made_unchecked(cells: dict[tuple[str, str, str], Cell], makers, col: str, kind_of,
                    storages: dict[str, str], makes: dict[tuple[str, str], frozenset[str] | None] | None) -> bool:
    """Whether a creation or cast of the dtype's kind takes it with no panic found: no cell of
    the operation decides the dtype (its column; for a storage, `Bool(U32)`, a part of the
    dtype's column or the storage's column in the enum of storages, `BoolDType::U32`)."""
    kind = kind_of(col)
    base = base_variant(col)
    columns = [col]
    names = {label(base)}
    if "(" in col:
        sub = col.split("(", 1)[1].rstrip(")")
        columns += [base] + [f"{enum}::{sub}" for enum, owner in storages.items() if owner == base]
        names.add(sub)
    for operation in makers:
        if operation.kind and kind and operation.kind != kind:
            continue
        made = makes.get((operation.crate, operation.name)) if makes is not None else None
        if made is not None and not names & made:
            continue
        decided = False
        for column in columns:
            cell = cells.get((operation.crate, operation.name, column))
            if cell is not None and (column != base or col == base or col in cell.parts):
                decided = True
                break
        if not decided:
            return True
    return False


# A parameter's type that is a dtype (`dtype: FloatDType`, `DType`), and a variant of such an enum
# written in a body (`FloatDType::F16 =>`, `DType::Flex32`).
_DTYPE_TYPE = re.compile(r"^&?\s*(?:\w+::)*\w*DType$")
_DTYPE_VARIANT = re.compile(r"\b\w*DType::(\w+)")


def dtype_makes(ops: dict[tuple[str, str], Operation], read_files,
                code=()) -> dict[tuple[str, str], frozenset[str] | None] | None:
    """Which dtypes each creation or cast operation can produce when no cell of it decides one,
    read from its function: one that uses a dtype parameter and names no variant of a dtype enum
    passes it on (`dtype.into_kind()`) and makes any (None); one that names variants
    (`FloatDType::F32 => ..`) maps the dtype itself and makes those; one that takes no dtype
    parameter, or does not use it (`_dtype`), makes the backend's element type whatever is asked:
    the dtypes of the Rust types its crate implements an element trait for (`impl FloatElement
    for flex32 {}`), from `code`'s (path, crate, facts). An operation whose function is not found
    at its line is absent (taken to make any). None without `read_files`: every such operation is
    taken to make any dtype."""
    if read_files is None:
        return None
    wanted = {key: o for key, o in ops.items() if _CREATES.search(o.name) or _CASTS.search(o.name)}
    lines: dict[str, dict[int, tuple[str, str]]] = {}
    for (crate, name), o in wanted.items():
        lines.setdefault(o.path, {})[o.line] = (crate, name)
    # Each function's own lines (its facts' end line), parsed alone: a whole ops file is many
    # times the few creation functions in it.
    ends = {(path, f.line): f.end_line for path, _, facts in code if path in lines for f in facts.functions}
    texts = read_files(sorted(lines))
    out: dict[tuple[str, str], frozenset[str] | None] = {}
    own: set[tuple[str, str]] = set()  # operations that make their crate's element type
    for path, at in lines.items():
        source = texts.get(path, b"").split(b"\n")
        for start, key in at.items():
            end = ends.get((path, start))
            if end is None:
                continue
            found = next(_functions(b"\n".join(source[start - 1:end]), {1: key}), None)
            if found is None:
                continue
            _, params, body = found
            if any(re.search(rf"\b{re.escape(p)}\b", body) for p in params):
                out[key] = frozenset(_DTYPE_VARIANT.findall(body)) or None
            else:
                own.add(key)
    roots = {o.crate: o.path.split("/src/", 1)[0] for key, o in wanted.items() if key in own and "/src/" in o.path}
    if roots:
        elements, declaring = _element_dtypes(code, roots, read_files)
        for key in own:
            # A crate with no element types of its own (fusion, autodiff) makes those of the
            # backend it wraps, which it does not say: any.
            out[key] = elements.get((key[0], wanted[key].kind), frozenset()) if key[0] in declaring else None
    return out


# The dtype of each Rust element type a backend may be instantiated with.
_RUST_DTYPES = {"f64": "F64", "f32": "F32", "flex32": "Flex32", "f16": "F16", "bf16": "BF16", "i64": "I64",
                "i32": "I32", "i16": "I16", "i8": "I8", "u64": "U64", "u32": "U32", "u16": "U16", "u8": "U8",
                "bool": "Bool"}
_ELEMENT_IMPL = re.compile(rb"\bimpl(?:<[^>{]*>)?\s+(?:\w+::)*(\w*Element)\s+for\s+(?:\w+::)*(\w+)")
_KIND_WORDS = {"float": "Float", "int": "Int", "bool": "Bool"}


def _element_dtypes(code, roots: dict[str, str],
                    read_files) -> tuple[dict[tuple[str, str], frozenset[str]], set[str]]:
    """Per (crate, kind), the dtypes of the Rust types the crate implements an element trait for,
    and the crates that declare any: a trait of the kind when the crate has one (`IntElement`),
    else any (`TchElement`). Read from the crate's files with code facts and its `src/element.rs`
    (or `src/element/mod.rs`), where burn's backends declare them: a file with no panic and no
    enum has no facts."""
    paths = {path: crate for path, crate, _ in code if crate in roots}
    for crate, root in roots.items():
        for name in ("element.rs", "element/mod.rs"):
            paths.setdefault(f"{root}/src/{name}", crate)
    impls: dict[str, list[tuple[str, str]]] = {}
    for path, text in read_files(sorted(paths)).items():
        for m in _ELEMENT_IMPL.finditer(text or b""):
            dtype = _RUST_DTYPES.get(m.group(2).decode())
            if dtype:
                impls.setdefault(paths[path], []).append((m.group(1).decode(), dtype))
    out: dict[tuple[str, str], frozenset[str]] = {}
    for crate, found in impls.items():
        for kind, word in _KIND_WORDS.items():
            own = [d for trait, d in found if word in trait]
            out[(crate, kind)] = frozenset(own or [d for _, d in found])
    return out, set(impls)


def _functions(source: bytes, at: dict[int, tuple[str, str]]):
    """(line, names of its dtype parameters, body text) of the functions starting on the lines of
    `at` (1-based) in `source`."""
    from tree_sitter import Parser

    from analyzer.facts.syntax import LANGUAGE

    if not source:
        return
    stack = [Parser(LANGUAGE).parse(source).root_node]
    while stack:
        n = stack.pop()
        if n.type == "function_item" and n.start_point[0] + 1 in at:
            params, body = n.child_by_field_name("parameters"), n.child_by_field_name("body")
            names = []
            for p in params.named_children if params is not None else ():
                pattern, type_ = p.child_by_field_name("pattern"), p.child_by_field_name("type")
                if pattern is None or type_ is None or pattern.text is None or type_.text is None:
                    continue
                name = pattern.text.decode("utf-8", "replace").removeprefix("mut ").strip()
                typed = _DTYPE_TYPE.match(type_.text.decode("utf-8", "replace"))
                if name.isidentifier() and not name.startswith("_") and typed:
                    names.append(name)
            text = body.text.decode("utf-8", "replace") if body is not None and body.text else ""
            yield n.start_point[0] + 1, names, text
            continue
        stack.extend(n.named_children)


def storage_enums(groups: list[Group], cells: dict[tuple[str, str, str], Cell]) -> dict[str, str]:
    """Enums whose variants are the storages of one dtype (`BoolDType` -> `Bool`): their variants
    are exactly the payloads that dtype's cells name (`Bool(Native)`, `Bool(U8)`, `Bool(U32)`)."""
    payloads: dict[str, set[str]] = {}
    named = {p for c in cells.values() for p in (c.decided or [e.dtype for e in c.evidence])}  # Cell.parts' keys
    for col in {d for g in groups for d in g.dtypes} | named:
        if "(" in col and "::" not in col.split("(", 1)[0]:
            payloads.setdefault(base_variant(col), set()).add(col.split("(", 1)[1].rstrip(")"))
    out = {}
    for g in groups:
        variants = {label(d) for d in g.dtypes}
        owner = [base for base, names in payloads.items() if names == variants]
        if len(owner) == 1 and g.dtypes and "::" in g.dtypes[0]:
            out[g.enum] = owner[0]
    return out


def _storage_parts(cell: Cell, storages: dict[str, str]) -> list[tuple[str, str]]:
    """(storage, status) for each storage the cell decides: `Bool(U32)` of a payload part, or of
    a column of the storages' enum (`BoolDType::U32`)."""
    if cell.enum in storages:
        base = storages[cell.enum]
        return [(f"{base}({label(part)})", status) for part, status in cell.parts.items()]
    if cell.status == NA:
        return []
    return [(part, status) for part, status in cell.parts.items() if "(" in part]


def apply_limits(cells: dict[tuple[str, str, str], Cell], limits: list[Limit],
                 ops: dict[tuple[str, str], Operation], groups: list[Group], kind_of) -> None:
    """Every operation of a held-nowhere dtype's kind panics on it (the creation operations that
    reject it keep their own cells); cells of another kind stay n/a."""
    by_crate: dict[str, list[Limit]] = {}
    for lim in limits:
        by_crate.setdefault(lim.crate, []).append(lim)
    enum_of = {d: g.enum for g in groups for d in g.dtypes}
    columns = set(enum_of)
    for (crate, op), operation in ops.items():
        for lim in by_crate.get(crate, ()):
            if any(op == name for name, _ in lim.rejected_by):
                continue
            if lim.dtype not in columns:  # a storage folded into its dtype's column (`Bool`)
                _fold_out(cells.get((crate, op, base_variant(lim.dtype))), lim.dtype)
                continue
            key = (crate, op, lim.dtype)
            cell = cells.get(key)
            kind = kind_of(lim.dtype)
            if (cell is not None and cell.status == NA) or (operation.kind and kind and kind != operation.kind):
                continue
            site = lim.rejected_by[0][1]
            if cell is None:
                cells[key] = Cell(crate, op, lim.dtype, PANICS, [site], enum_of.get(lim.dtype, ""),
                                  [Evidence(lim.dtype, PANICS, site)], reason=CANNOT_HOLD)
            elif cell.reason != NOT_IMPLEMENTED:
                cell.status = PANICS
                cell.reason = CANNOT_HOLD
                cell.sites = [site] + [s for s in cell.sites if s.record_id != site.record_id]


def _fold_out(cell: Cell | None, storage: str) -> None:
    """A collapsed cell without the paths only a storage the backend cannot hold reaches: the
    other storages decide it; the storage's part says `cannot hold`."""
    if cell is None or storage not in cell.parts or cell.status == NA or cell.reason == NOT_IMPLEMENTED:
        return
    parts = cell.parts
    others = {k: v for k, v in parts.items() if k != storage and v != CANNOT_HOLD}
    if not others:
        return
    cell.status = fold(list(others.values()))
    ways: dict[str, list[str]] = {}
    for dtype, st in others.items():
        ways.setdefault(st, []).append(label(dtype))
    cell.reason = "; ".join(f"{st}: {', '.join(ds)}" for st, ds in ways.items()) if cell.status == PARTIAL else ""
    cell.decided = {k: others.get(k, CANNOT_HOLD) for k in parts}
    gone = {e.site.record_id for e in cell.evidence if e.dtype == storage} - {
        e.site.record_id for e in cell.evidence if e.dtype != storage}
    cell.sites = [s for s in cell.sites if s.record_id not in gone] + [s for s in cell.sites if s.record_id in gone]
