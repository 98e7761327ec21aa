; Registry forms vLLM has used (DESIGN.md section 2).

; @Manager.register_module("a") / (["a", "b"]) / (name=...) on a class
(decorated_definition
  (decorator
    (call
      function: (attribute object: (_) @manager attribute: (identifier) @method)
      arguments: (argument_list) @args)) @decorator
  definition: (class_definition name: (identifier) @class)
  (#eq? @method "register_module")) @decorated

; Manager.register_module("a", module=Cls) / Manager.register_lazy_module(name=..., module_path=..., class_name=...)
(expression_statement
  (call
    function: (attribute object: (_) @manager attribute: (identifier) @method)
    arguments: (argument_list) @args) @call
  (#match? @method "^register_(lazy_)?module$"))

; _TOOL_PARSERS_TO_REGISTER = {"name": ("module_file", "ClassName"), ...} (and the reasoning / unified dicts)
(assignment
  left: (identifier) @dict_name
  right: (dictionary) @dict
  (#match? @dict_name "_TO_REGISTER$"))

; f"vllm.tool_parsers.{file_name}": the package a lazy dict's module files live in
((string (string_start) @fstart (string_content) @prefix (interpolation)) @template
  (#match? @fstart "^[fF]")
  (#match? @prefix "^[A-Za-z_][A-Za-z0-9_.]*[.]$"))
