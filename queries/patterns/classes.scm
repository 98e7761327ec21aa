; Every class definition, nested in classes or functions included.
(class_definition name: (identifier) @name) @class
