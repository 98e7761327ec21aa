; Sentinels: the token strings a parser looks for or emits (<tool_call>, [TOOL_CALLS], <|python_tag|>, ...).
; These patterns only pick candidates cheaply (the predicates run inside the query walk); the rule that
; decides is in indexer/extract/sentinels.py. A bytes literal has a b prefix and never matches the
; `^[rRuU]{0,2}["']` predicates; f-strings only match (1b), (4) and the returns below, as patterns.

; (1) a literal whose text starts with a token (after optional whitespace): <name>, </name>, <|name|>, <name=,
; <｜name｜>, [NAME]; or that holds a non-ASCII symbol or punctuation character before any whitespace (｜, ▁:
; a piece of a special token, _DSML = "｜DSML｜"). One pattern, so each string node is tested once.
((string) @literal
  (#match? @literal "^[rRuU]{0,2}(\"\"\"|'''|\"|')(\\s*(</?([\\w|:-]|[^\\x00-\\x7f\\s])+[>=]|\\[/?[A-Za-z][A-Za-z0-9_]*\\])|[^\\s]*[\\u2000-\\u2bff\\u3000-\\u303f\\uff00-\\uffef])"))

; (1b) an f-string whose text starts with a token's opening (after optional whitespace): f"<tool_calls{self.suffix}>"
((string) @literal
  (#match? @literal "^([rR]?[fF]|[fF][rR])(\"\"\"|'''|\"|')\\s*[<\\[]"))

; (2) the pattern argument of re.compile / re.search / ... (or the `regex` module): tokens inside it
((call
   function: (attribute object: (identifier) @_module attribute: (identifier) @_function)
   arguments: (argument_list . (string) @regex))
  (#any-of? @_module "re" "regex")
  (#any-of? @_function "compile" "match" "search" "fullmatch" "findall" "finditer" "sub" "subn" "split")
  (#match? @regex "^[rRuU]{0,2}[\"']")
  (#match? @regex "[<\\[]"))
((call
   function: (attribute object: (identifier) @_module attribute: (identifier) @_function)
   arguments: (argument_list . (concatenated_string (string) @regex)))
  (#any-of? @_module "re" "regex")
  (#any-of? @_function "compile" "match" "search" "fullmatch" "findall" "finditer" "sub" "subn" "split"))

; (3) a string assigned to a regex-named target: x_regex = r"...", self.tag_pattern = r"...", TOOL_RE = ...
((assignment
   left: (identifier) @_target
   right: [(string) @regex (concatenated_string (string) @regex)])
  (#match? @_target "(?i)(regex|pattern|_re)$"))
((assignment
   left: (attribute attribute: (identifier) @_target)
   right: [(string) @regex (concatenated_string (string) @regex)])
  (#match? @_target "(?i)(regex|pattern|_re)$"))

; (4) a string assigned to a token-named target (a word of the name is token, start, end, begin, open, close, sep,
; prefix, suffix, marker, delimiter, bot, eot or eom): module constants, class attributes, self.x
((assignment
   left: (identifier) @attribute
   right: (string) @value)
  (#match? @attribute "(?i)(^|_)(token|start|end|begin|open|close|sep|separator|prefix|suffix|marker|delimiter|bot|eot|eom)(_|$)")
  (#match? @value "^[rRuUfF]{0,2}[\"']"))
((assignment
   left: (attribute object: (identifier) @_self attribute: (identifier) @attribute)
   right: (string) @value)
  (#eq? @_self "self")
  (#match? @attribute "(?i)(^|_)(token|start|end|begin|open|close|sep|separator|prefix|suffix|marker|delimiter|bot|eot|eom)(_|$)")
  (#match? @value "^[rRuUfF]{0,2}[\"']"))

; a property or method of such a name returning a string: `def bot_token(self): return "functools"`
((function_definition
   name: (identifier) @attribute
   body: (block (return_statement (string) @value)))
  (#match? @attribute "(?i)(^|_)(token|start|end|begin|open|close|sep|separator|prefix|suffix|marker|delimiter|bot|eot|eom)(_|$)")
  (#match? @value "^[rRuUfF]{0,2}[\"']"))

; (5) a name assigned from a tokens object, not a literal: _TOOL_CALLS = SpecialTokens.tool_calls.value
; (kept as written, how = reference: the token itself lives outside the tree)
((assignment
   left: [(identifier) @attribute (attribute object: (identifier) attribute: (identifier) @attribute)]
   right: (attribute) @reference)
  (#match? @reference "^[A-Za-z_][A-Za-z0-9_]*[Tt]okens?[.]"))
; a property or method returning one: `def start_token(self): return SpecialTokens.begin_think`
((function_definition
   name: (identifier) @attribute
   body: (block (return_statement (attribute) @reference)))
  (#match? @reference "^[A-Za-z_][A-Za-z0-9_]*[Tt]okens?[.]"))
