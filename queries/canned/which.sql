-- Which file implements NAME at VERSION: the registration, every hop (re-export, class, base, adapter, name check) and the class that really implements the parser, each with its file and line.
-- :name     a registered parser name, e.g. hermes
-- :version  a version label, e.g. v0.32.0 (blank: the newest indexed version)
-- One row per hop, for each kind the name is registered as (tool, reasoning, engine). impl says how the
-- name is implemented: standalone (its own class), unified (a stub over an adapter made from a parser
-- class in vllm/parser/), name-check (the manager picks the class by comparing the name), dispatch (the
-- hard-coded era) or unresolved (see note). The row marked real is the class whose code does the parsing; a
-- wrapper hop is a class the parser manager composes around it that only hands extraction on. The note
-- says what else an operator needs: inherited methods, streaming that returns None, selector stubs; an init
-- hop is an overriding __init__ that rebinds what the real class's parsing methods read.
with at(version) as (
  select label from versions where status = 'complete' and case
    when trim(:version) = '' then ord = (select max(ord) from versions where status = 'complete')
    else label = tpindex_version(:version) end
)
select p.version, p.kind, p.name, p.impl, h.step, h.hop, h.class, h.file, h.line,
  case when h.class = p.real_class and h.file = p.real_file and h.line = p.real_line then 'real' end as real,
  case when h.hop = 'init' then 'Its __init__ (lines ' || h.line || '-' || h.end_line || ') rebinds ' ||
    replace(h.detail, ' ', ', ') || ', which the real class''s parsing methods read: part of the logic.'
  when coalesce(h.step, 0) = 0 then nullif(rtrim(
    case when p.impl = 'unresolved' then 'unresolved: ' || coalesce(p.reason, '?') || '. ' else '' end ||
    case when p.stub then 'The registered file is a stub (no methods of its own). ' else '' end ||
    case when p.reexport then 'The registered module only re-exports the class. ' else '' end ||
    case when p.alias_of is not null then 'Same class as: ' || p.alias_of || '. ' else '' end ||
    case when p.parent_class is not null then 'Subclasses the parser ' || p.parent_class || '. ' else '' end ||
    coalesce((select group_concat(upper(substr(j.value, 1, 1)) || substr(j.value, 2), '. ') || '.'
              from json_each(coalesce(p.notes, '[]')) j), ''),
    ' '), '') end as note
from parser_map_v p
join at on at.version = p.version
left join parser_hops_v h on h.version = p.version and h.kind = p.kind and h.name = p.name
where p.name = trim(:name)
order by p.kind, h.step
