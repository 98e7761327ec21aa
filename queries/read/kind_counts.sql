-- How many distinct parser names each kind has over every indexed version: tool, reasoning, then the others.
select kind, count(distinct name) as names from parser_map_v group by kind
order by case kind when 'tool' then 0 when 'reasoning' then 1 else 2 end, kind
