; The nodes the coverage audit reads the dtype paths of a function from
; (analyzer/features/coverage/paths.py): its calls and macro calls, and the matches whose arms may
; decide which dtypes reach them, and the lets that may rebind what such a match reads.
(call_expression) @call
(macro_invocation) @macro
(match_expression) @match
(let_declaration) @let
