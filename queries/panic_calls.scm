; Every call of a panic-family macro, plain or path-qualified (std::panic!, core::panic!).
; `unreachable!` is captured too so the audit can say why it is never a record.
(macro_invocation
  macro: [
    (identifier) @name
    (scoped_identifier name: (identifier) @name)
  ]
  (#any-of? @name "panic" "unimplemented" "todo" "unreachable")) @call
