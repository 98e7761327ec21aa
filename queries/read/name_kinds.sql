-- The kinds (tool, reasoning, engine) a parser name is registered as in any indexed version.
select distinct kind from parser_map where name = :name
