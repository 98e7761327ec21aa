; Every import statement, wherever it stands (module level, functions, `if TYPE_CHECKING:`).
(import_statement) @import
(import_from_statement) @import_from
(future_import_statement) @import_future
