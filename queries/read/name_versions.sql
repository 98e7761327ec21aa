-- The versions that register a parser name (as :kind, or as any kind when :kind is null), in version order.
select distinct version from parser_map_v where name = :name and (:kind is null or kind = :kind) order by version_ord
