-- Classes defining a method: every class of VERSION that defines METHOD itself (e.g. extract_tool_calls_streaming), so overrides it.
-- :method   a method name, e.g. extract_tool_calls_streaming
-- :version  a version label, e.g. v0.32.0 (blank: the newest indexed version)
with at(version) as (
  select label from versions where status = 'complete' and case
    when trim(:version) = '' then ord = (select max(ord) from versions where status = 'complete')
    else label = tpindex_version(:version) end
)
select m.version, m.class, m.method, m.file, m.line, m.end_line - m.line + 1 as lines
from methods_v m join at on at.version = m.version
where m.method = trim(:method)
order by m.file, m.line
