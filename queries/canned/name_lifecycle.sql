-- Lifecycle of NAME: the first and last version that register it, when it moved onto the unified parser engine, the versions where its real file changed, and the version that removed it.
-- :name  a registered parser name, e.g. hermes
-- One row per kind (tool, reasoning, engine). Among the indexed versions only: removed_in is the first
-- indexed version after the last one that has the name.
select l.kind, l.name, l.first_version, l.last_version, l.versions_present, l.became_unified,
  l.real_file_changed_in, l.removed_in
from lifecycle l
where l.name = trim(:name)
order by l.kind
