; Branches that compare a requested parser name: `if tool_parser_name == "x":`, `elif ... in (...)`,
; set intersections, constants holding the name. The branch body is searched for the class it picks.
(if_statement condition: (_) @cond consequence: (block) @body) @branch
(elif_clause condition: (_) @cond consequence: (block) @body) @branch

; Module-level constants that may hold a name: KIMI_K3 = "kimi_k3", NAMES = ("a", "b")
(module (expression_statement
  (assignment left: (identifier) @const right: [(string) (tuple) (list) (set)] @value)))

; Class-based dispatch: a method unified_parser_cls() that returns the real parser class
(class_definition
  name: (identifier) @owner
  body: (block [
    (function_definition name: (identifier) @method body: (block) @method_body)
    (decorated_definition definition: (function_definition name: (identifier) @method body: (block) @method_body))
  ])
  (#eq? @method "unified_parser_cls"))
