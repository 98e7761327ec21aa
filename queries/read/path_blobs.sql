-- The blob of a path at each complete version that holds it, in version order.
select v.label, u.blob_id from files f join versions v on v.id = f.version_id
join units u on u.id = f.unit_id where f.path = :path and v.status = 'complete' order by v.ord
