-- The behaviour atlas's cells of every name at two versions (:a, :b), for `diff A B`.
select version, kind, name, case_id, mode, status, detail
from atlas_v
where version in (:a, :b)
