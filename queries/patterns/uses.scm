; Uses (indexer/extract/uses.py): the places where a module-level name written in code is no read of it at
; run time: an annotation, a class's base list (the resolution order follows bases). A name found in the
; file's bytes inside one of these is not a use; the other cases (an attribute after a dot, a parameter's
; or a keyword argument's name, an assignment's target) are read from the name's parent node.
(type) @annotation
(class_definition superclasses: (argument_list) @bases)
