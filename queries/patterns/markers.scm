; Comments (never strings, so a TODO in a docstring is not a marker); the HACK/TODO/FIXME/XXX word
; test is applied to the captured text.
((comment) @comment
  (#match? @comment "(^|[^A-Za-z0-9_])(HACK|TODO|FIXME|XXX)([^A-Za-z0-9_]|$)"))
