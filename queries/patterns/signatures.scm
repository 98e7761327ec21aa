; The parser contract's surface (extract/signatures.py): every function definition, with its parameters as
; written, and every assignment or annotation a class body makes (its attributes and their defaults).
(function_definition name: (identifier) @name parameters: (parameters) @params) @function

(class_definition
  body: (block (expression_statement (assignment left: (identifier) @attr) @assign)))
