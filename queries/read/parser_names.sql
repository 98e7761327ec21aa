-- Every parser name registered in any indexed version, by name.
select distinct name from parser_map order by name
