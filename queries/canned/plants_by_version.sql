-- Plants by version: the known workaround patterns (such as priming prev_tool_call_arr with one empty-arguments entry) found in each version, newest first.
-- :version  a version label, e.g. v0.32.0 (blank: every indexed version)
select p.version, p.plant, p.file, p.line, p.text, p.class, p.function
from plants_v p
where trim(:version) = '' or p.version = tpindex_version(:version)
order by p.version_ord desc, p.plant, p.file, p.line
