-- Every parser_map row of a version, by name.
select * from parser_map_v where version = :version order by name
