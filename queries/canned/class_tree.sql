-- Class tree: every ancestor and every descendant of a class in one version.
-- :version  a version label, e.g. v0.32.0 (blank: the newest indexed version)
-- :class    a class, bare (Hermes2ProToolParser) or module-qualified (vllm.tool_parsers.hermes_tool_parser.Hermes2ProToolParser)
-- A base written through a package that re-exports it (from vllm.tool_parsers import ToolParser) is followed
-- to the module that defines it; an adapter made by make_adapters(XParser) has XParser as its parent. Bases
-- outside the version (typing.Generic) are listed with no file.
with recursive
  at(version) as (
    select label from versions where status = 'complete' and case
      when trim(:version) = '' then ord = (select max(ord) from versions where status = 'complete')
      else label = tpindex_version(:version) end
  ),
  cls(full, module, class, file, line) as materialized (
    select module || '.' || class, module, class, file, line from classes_v where version = (select version from at)
    union all  -- adapters made by make_adapters(XParser) stand for classes too
    select vf.module || '.' || a.adapter, vf.module, a.adapter, a.file, a.line
    from adapter_bindings_v a join version_files vf on vf.version = a.version and vf.file = a.file
    where a.version = (select version from at)
  ),
  edge(child, parent) as materialized (
    select h.module || '.' || h.class,
           coalesce(
             (select c.full from cls c where c.full = h.base),
             (select i.module || '.' || i.name from imports_v i
               where i.version = (select version from at) and i.importer = h.base_module and i.name is not null and i.star = 0
                 and coalesce(i.alias, i.name) = substr(h.base, length(h.base_module) + 2)
               order by i.type_checking limit 1),
             h.base, h.base_written)
    from class_hierarchy h where h.version = (select version from at)
    union
    select vf.module || '.' || a.adapter, coalesce(a.parser, a.parser_written)
    from adapter_bindings_v a join version_files vf on vf.version = a.version and vf.file = a.file
    where a.version = (select version from at)
  ),
  target(full) as (
    select full from cls where class = trim(:class) or full = trim(:class)
  ),
  up(full, depth) as (
    select full, 0 from target
    union
    select e.parent, u.depth + 1 from edge e join up u on e.child = u.full where u.depth < 64
  ),
  down(full, depth) as (
    select full, 0 from target
    union
    select e.child, d.depth + 1 from edge e join down d on e.parent = d.full where d.depth < 64
  ),
  tree(relation, depth, full) as (
    select 'ancestor', min(depth), full from up where depth > 0 group by full
    union all
    select 'self', 0, full from target
    union all
    select 'descendant', min(depth), full from down where depth > 0 group by full
  )
select t.relation, t.depth, coalesce(c.class, t.full) as class, c.module, c.file, c.line,
  (select version from at) as version
from tree t left join cls c on c.full = t.full
order by case t.relation when 'ancestor' then 0 when 'self' then 1 else 2 end,
         case t.relation when 'ancestor' then -t.depth else t.depth end, t.full
