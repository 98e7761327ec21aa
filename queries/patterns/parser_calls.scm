; Calls vLLM's own code makes on parser objects (extract/parser_calls.py): a parser class called to construct
; one (`self.tool_parser(tokenizer)`, `tool_parser_cls(tokenizer, request.tools)`), a method called on one
; (`tool_parser.extract_tool_calls(text, request=request)`); the extractor tells them apart. And
; `super().method(...)` calls: what a class hands its base.
(call
  function: [(identifier) (attribute)] @callee
  arguments: (argument_list) @args
  (#match? @callee "(tool|reasoning)_parser")) @call

(call
  function: (attribute
    object: (call function: (identifier) @super)
    attribute: (identifier) @method)
  arguments: (argument_list) @args
  (#eq? @super "super")) @call
