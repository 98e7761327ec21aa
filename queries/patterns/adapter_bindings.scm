; Module-level assignments from make_adapters(P): tuple targets (parenthesised or not) or one name.
(module
  (expression_statement
    (assignment
      left: (_) @targets
      right: (call
        function: [(identifier) (attribute)] @fn
        arguments: (argument_list . (_) @parser))) @binding)
  (#match? @fn "(^|[.])make_adapters$"))
