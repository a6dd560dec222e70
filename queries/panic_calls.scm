; Every call that can refuse: a panic-family macro, plain or path-qualified (std::panic!,
; core::panic!), an assertion macro, and a method call of `expect`. `unreachable!` is captured too
; so the audit can say why it is never a record; an assertion without a message and an `expect`
; not handed a string literal are passed over when the site's facts are read.
(macro_invocation
  macro: [
    (identifier) @name
    (scoped_identifier name: (identifier) @name)
  ]
  (#any-of? @name "panic" "unimplemented" "todo" "unreachable" "assert" "assert_eq" "assert_ne")) @call
(call_expression
  function: (field_expression field: (field_identifier) @name)
  (#eq? @name "expect")) @call
