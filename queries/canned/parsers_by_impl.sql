-- Parsers of a version by implementation: every registered name of VERSION, grouped by how it is implemented, with its registered and real files.
-- :version  a version label, e.g. v0.32.0 (blank: the newest indexed version)
-- :impl     only this implementation: standalone, unified, name-check, dispatch or unresolved (blank: all)
with at(version) as (
  select label from versions where status = 'complete' and case
    when trim(:version) = '' then ord = (select max(ord) from versions where status = 'complete')
    else label = tpindex_version(:version) end
)
select p.version, p.impl, p.kind, p.name, p.real_class, p.real_file, p.real_line, p.reg_class, p.reg_file,
  p.reg_line, p.adapter, p.alias_of, p.reason
from parser_map_v p join at on at.version = p.version
where trim(:impl) = '' or p.impl = lower(trim(:impl))
order by case p.impl when 'standalone' then 0 when 'unified' then 1 when 'name-check' then 2
  when 'dispatch' then 3 else 4 end, p.kind, p.name
