; Request settings: assignments to a field of the request, `request.skip_special_tokens = False`. The
; extractor keeps those inside an `adjust_request` method (indexer/extract/request_settings.py).
((assignment
   left: (attribute object: (identifier) @_object attribute: (identifier) @field)
   right: (_) @value) @setting
  (#eq? @_object "request"))
