; Class sets: assignments to an attribute of a class object that happen when a class is created
; (indexer/extract/class_sets.py decides which are): `cls.X = value` in `__init_subclass__` or in a function a
; class is decorated with, `Cls.X = value` after a class body, and `setattr(obj, "X", value)` in the same places.
; `self.X = ...` (an instance attribute, set when an object is made) is left out here.

((assignment
   left: (attribute object: (identifier) @object attribute: (identifier) @attribute)
   right: (_) @value) @set
  (#not-eq? @object "self"))

((call
   function: (identifier) @_setattr
   arguments: (argument_list . (identifier) @object . (string) @name . (_) @value .)) @set
  (#eq? @_setattr "setattr")
  (#not-eq? @object "self"))
