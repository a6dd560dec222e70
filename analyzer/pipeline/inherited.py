"""Which backends inherit a trait's default method: the crates whose impl of the trait leaves the
method out. A default whose whole body panics is one record, hit by each of them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from analyzer.decisions.rules import is_test_path
from analyzer.facts.model import FileFacts, SiteFacts
from analyzer.profiles import current


class Implementors:
    """The impls of each ops trait in a tree, by crate, test code left out."""

    def __init__(self, files: Iterable[tuple[str, str, FileFacts]]):
        self._by_trait: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
        for path, crate, facts in files:
            if facts.ops_impls and not is_test_path(path):
                for trait, _type, methods in facts.ops_impls:
                    self._by_trait[trait].append((crate, set(methods)))

    def inheriting(self, site: SiteFacts) -> list[str] | None:
        """The crates (sorted) whose impl of the trait lacks the default method `site` is the
        whole body of; None when the site is not a trait's default method, or the trait is no
        ops trait (`...Ops`), whose impls are not read."""
        if site.context != "body" or site.fn_kind != "trait-default" or not site.fn_trait:
            return None
        if not site.fn_trait.endswith(current().code.ops_trait_suffix):
            return None
        return sorted({crate for crate, methods in self._by_trait.get(site.fn_trait, ())
                       if site.function not in methods})
