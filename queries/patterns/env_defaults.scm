; Environment defaults (indexer/extract/env_defaults.py decides): the names a module like vllm/envs.py
; gives, with their default.

; (1) declared under `if TYPE_CHECKING:` with a default: `VLLM_X: bool = True`
((if_statement
   condition: [(identifier) (attribute)] @_condition
   consequence: (block (expression_statement (assignment left: (identifier) @name type: (_) right: (_) @value) @declared)))
  (#match? @_condition "(^|[.])TYPE_CHECKING$"))

; (2) an entry of a dict whose value is a lambda: `"VLLM_X": lambda: os.getenv("VLLM_X", "1") == "1"`
((pair key: (string) @name value: (lambda body: (_) @value)) @entry
  (#match? @value "(getenv|environ)"))
