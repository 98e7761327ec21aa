; Every class definition, nested in classes or functions included.
; requires: \bclass\b
(class_definition name: (identifier) @name) @class
