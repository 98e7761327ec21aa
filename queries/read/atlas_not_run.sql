-- The (version, name) pairs of one kind registered but never run by the behaviour atlas, in version order.
select p.version, p.name from parser_map_v p
join versions v on v.label = p.version
where p.kind = :kind and (:names is null or p.name in (select value from json_each(:names)))
  and not exists (select 1 from atlas_map m where m.version_id = v.id and m.kind = p.kind and m.name = p.name)
order by p.version_ord, p.name
