-- A parser name's parser_map rows of one kind, one per version that registers it.
select * from parser_map_v where kind = :kind and name = :name
