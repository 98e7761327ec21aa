-- Where each case of the behaviour atlas comes from, per (version, name, case): its source, origin, raw output and
-- what it must give (:names a JSON list of names, or null for every name).
select v.label as version, m.name, m.case_id, coalesce(c.source, 'none') as source, c.origin, c.text, c.expected,
       c.reasoning_parser, c.note, v.ord as version_ord
from atlas_map m join versions v on v.id = m.version_id and v.status = 'complete'
left join atlas_cases c on c.key = m.case_key
where m.kind = :kind and (:names is null or m.name in (select value from json_each(:names)))
order by v.ord, m.name
