-- Plants by version: the known workaround patterns (such as priming prev_tool_call_arr with one empty-arguments entry) found in each version, newest first, with the parser names whose own code holds them.
-- :version  a version label, e.g. v0.32.0 (blank: every indexed version)
select p.version, (select group_concat(name, ', ') from (select distinct c.name from parser_code c
         join versions pv on pv.id = c.version_id where pv.label = p.version and c.path = p.file
         and c.kind = 'tool' and c.shared = 0 order by c.name)) as tool_parsers,
       (select group_concat(name, ', ') from (select distinct c.name from parser_code c
         join versions pv on pv.id = c.version_id where pv.label = p.version and c.path = p.file
         and c.kind = 'reasoning' and c.shared = 0 order by c.name)) as reasoning_parser_names,
       p.plant, p.file, p.line, p.text, p.class, p.function
from plants_v p
where trim(:version) = '' or p.version = tpindex_version(:version)
order by p.version_ord desc, p.plant, p.file, p.line
