-- Reasoning parsers of a version: every reasoning parser name of VERSION with its real file, and the tool parsers registered under the same name or implemented by the same class.
-- :version  a version label, e.g. v0.32.0 (blank: the newest indexed version)
with at(version) as (
  select label from versions where status = 'complete' and case
    when trim(:version) = '' then ord = (select max(ord) from versions where status = 'complete')
    else label = tpindex_version(:version) end
)
select p.version, p.kind, p.name, p.impl, p.real_class, p.real_file, p.real_line, p.reg_file, p.reg_line, p.adapter,
  p.alias_of,
  (select group_concat(name, ', ') from (
     select t.name from parser_map_v t
     where t.version = p.version and t.kind = 'tool'
       and (t.name = p.name or (t.real_class = p.real_class and t.real_file = p.real_file))
     order by t.name)) as tool_parsers,
  p.reason
from parser_map_v p join at on at.version = p.version
where p.kind = 'reasoning'
order by p.name
