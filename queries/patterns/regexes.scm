; Regular expressions of a parser's code: the pattern argument of re.compile / re.search / ... (or of the
; `regex` module), and a string assigned to a regex-named target (x_regex = r"...", TOOL_RE = ...). The
; pattern's value, its flags and the name it is assigned to are read in indexer/extract/regexes.py.

((call
   function: (attribute object: (identifier) @_module attribute: (identifier) @function)
   arguments: (argument_list . [(string) (concatenated_string) (parenthesized_expression (concatenated_string))] @pattern))
  (#any-of? @_module "re" "regex")
  (#any-of? @function "compile" "match" "search" "fullmatch" "findall" "finditer" "sub" "subn" "split"))

((assignment
   left: [(identifier) @target (attribute attribute: (identifier) @target)]
   right: [(string) (concatenated_string) (parenthesized_expression (concatenated_string))] @assigned)
  (#match? @target "(?i)(regex|pattern|_re)$"))
