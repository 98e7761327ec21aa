; Plant: a workaround that primes the streaming state with one empty-arguments entry,
;   <anything>.prev_tool_call_arr = [{"arguments": {}}]   (or a bare prev_tool_call_arr = ...)
; Every file in queries/plants/ is one plant; the file name is the plant's name. Capture the whole
; statement as @plant.
((assignment
   left: (_) @target
   right: (list . (dictionary . (pair key: (string) @key value: (dictionary) @value) .) .)) @plant
  (#match? @target "(^|[.])prev_tool_call_arr$")
  (#match? @key "^[\"']arguments[\"']$")
  (#match? @value "^[{][ \t]*[}]$"))
