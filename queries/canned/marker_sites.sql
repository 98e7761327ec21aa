-- HACK / TODO / FIXME / XXX sites of a version: every marker comment of VERSION, optionally of one kind and containing some words, with the parser names whose own code holds it.
-- :version  a version label, e.g. v0.32.0 (blank: the newest indexed version)
-- :kind     HACK, TODO, FIXME or XXX (blank: all)
-- :q        words to search for in the comment (full-text, the last word as a prefix; blank: all)
with at(version) as (
  select label from versions where status = 'complete' and case
    when trim(:version) = '' then ord = (select max(ord) from versions where status = 'complete')
    else label = tpindex_version(:version) end
)
select m.version, (select group_concat(name, ', ') from (select distinct c.name from parser_code c
         join versions pv on pv.id = c.version_id where pv.label = m.version and c.path = m.file
         and c.kind = 'tool' and c.shared = 0 order by c.name)) as tool_parsers,
       (select group_concat(name, ', ') from (select distinct c.name from parser_code c
         join versions pv on pv.id = c.version_id where pv.label = m.version and c.path = m.file
         and c.kind = 'reasoning' and c.shared = 0 order by c.name)) as reasoning_parser_names,
       m.kind, m.file, m.line, m.text, m.class, m.function
from markers_v m join at on at.version = m.version
where (trim(:kind) = '' or m.kind = upper(trim(:kind)))
  and (trim(:q) = '' or m.marker_id in (
    select rowid from markers_fts where markers_fts match '"' || replace(replace(trim(:q), char(0), ''), '"', '""') || '" *'))
order by m.file, m.line
