-- Every (kind, name, complete version) row of the parser matrix: how it is implemented, its real file and
-- that file's blob; :kind '' for every kind, :prefix '' for every name (else the names starting with it).
select p.kind, p.name, v.label as version, p.impl, p.real_file, p.real_class, p.real_line, p.adapter, p.reason,
       p.code_sig, (select u.blob_id from files f join units u on u.id = f.unit_id
        where f.version_id = p.version_id and f.path = p.real_file) as real_blob
from parser_map p join versions v on v.id = p.version_id and v.status = 'complete'
where (:kind = '' or p.kind = :kind) and (:prefix = '' or substr(p.name, 1, length(:prefix)) = :prefix)
