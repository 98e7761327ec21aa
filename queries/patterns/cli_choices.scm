; The hard-coded era: parser.add_argument("--tool-call-parser", ..., choices=["mistral", "hermes"])
(call
  arguments: (argument_list
    . (string) @flag
    (keyword_argument name: (identifier) @kw value: [(list) (tuple)] @choices))
  (#match? @flag "^[\"']--(tool-call|reasoning)-parser[\"']$")
  (#eq? @kw "choices")) @call
