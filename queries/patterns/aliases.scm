; Module-level name aliases: `KimiK2ReasoningParser = KimiK2ParserReasoningAdapter`, `X = mod.Y`
(module (expression_statement
  (assignment left: (identifier) @name right: [(identifier) (attribute)] @value) @alias))
