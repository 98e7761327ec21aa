; Every `self.NAME` of a parser's code: what each method binds on the instance and what it reads
; (indexer/extract/self_attrs.py tells the two apart and keeps the bindings that stand).

((attribute object: (identifier) @_self attribute: (identifier) @attr) @use
  (#eq? @_self "self"))

; Every class and function: which method each use is in, found by where the definitions start and end
[(class_definition) (function_definition)] @def
