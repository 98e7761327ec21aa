-- Files importing an adapter at a version: every import of a ...ParserToolAdapter or ...ParserReasoningAdapter class, and the module it is imported from.
-- :version  a version label, e.g. v0.32.0 (blank: the newest indexed version)
with at(version) as (
  select label from versions where status = 'complete' and case
    when trim(:version) = '' then ord = (select max(ord) from versions where status = 'complete')
    else label = tpindex_version(:version) end
)
select i.version, i.file, i.line, i.name as adapter, i.module as imported_from, i.alias, i.role
from adapter_imports i join at on at.version = i.version
order by i.file, i.line
