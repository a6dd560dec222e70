"""Tree-sitter queries and rule data for burn-errors (data files, loaded by analyzer.parse)."""
