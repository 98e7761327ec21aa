-- The behaviour atlas's cells of one kind of parser (:names a JSON list of names, or null for every name), in
-- version order: one row per (version, name, case, mode); a case no source could make has one row, mode null.
select version, name, case_id, mode, status, detail, version_ord
from atlas_v
where kind = :kind and (:names is null or name in (select value from json_each(:names)))
order by version_ord, name
