-- Names added, removed or moved between A and B: the parser names one version registers and the other does not, and the names whose real file, implementation or registered class changed.
-- :a  the older version, e.g. v0.31.0
-- :b  the newer version, e.g. v0.32.0
-- change is one of: added, removed, moved (the real file changed), impl changed (same file, another
-- kind of implementation), re-registered (same real file, another registered module or class). Real files
-- link to their line at A and at B.
with va(version) as (
  select label from versions where status = 'complete' and label = tpindex_version(:a)
), vb(version) as (
  select label from versions where status = 'complete' and label = tpindex_version(:b)
), ma as (
  select * from parser_map_v where version = (select version from va)
), mb as (
  select * from parser_map_v where version = (select version from vb)
), names as (
  select kind, name from ma union select kind, name from mb
), changes as (
  select case
      when a.name is null then 'added'
      when b.name is null then 'removed'
      when coalesce(a.real_file, '') != coalesce(b.real_file, '') then 'moved'
      when a.impl != b.impl then 'impl changed'
      when coalesce(a.reg_module, '') != coalesce(b.reg_module, '')
        or coalesce(a.reg_class, '') != coalesce(b.reg_class, '') then 're-registered'
    end as change,
    n.kind, n.name, a.impl as impl_a, b.impl as impl_b, a.real_file as real_file_a, b.real_file as real_file_b,
    (select version from va) as a, (select version from vb) as b, a.real_line as real_line_a,
    b.real_line as real_line_b, a.real_class as real_class_a, b.real_class as real_class_b
  from names n
  left join ma a on a.kind = n.kind and a.name = n.name
  left join mb b on b.kind = n.kind and b.name = n.name
)
select * from changes where change is not null and exists (select 1 from va) and exists (select 1 from vb)
union all
select 'not indexed: ' || trim(:a), null, null, null, null, null, null, null, null, null, null, null, null
  where trim(:a) != '' and not exists (select 1 from va)
union all
select 'not indexed: ' || trim(:b), null, null, null, null, null, null, null, null, null, null, null, null
  where trim(:b) != '' and not exists (select 1 from vb)
order by 1, 2, 3
