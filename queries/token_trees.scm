; Token trees that can hold code tree-sitter does not parse: macro_rules! transcribers and the
; arguments of macro calls (quote!, burn's dispatch macros). They are re-parsed as Rust.
(macro_rule right: (token_tree) @body)
(macro_invocation macro: (_) @macro (token_tree) @body)
