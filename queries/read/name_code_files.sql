-- The files of a parser name's code (one kind) at each version: path, blob, whether a shared framework file.
select version, file, blob_id, shared from parser_code_v where kind = :kind and name = :name
