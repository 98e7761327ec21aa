-- Classes setting an attribute: every class of VERSION that assigns the class attribute ATTRIBUTE in its body (e.g. supports_required_and_named = False), with the value written.
-- :attribute  a class attribute name, e.g. supports_required_and_named (blank: every attribute)
-- :version    a version label, e.g. v0.32.0 (blank: the newest indexed version)
with at(version) as (
  select label from versions where status = 'complete' and case
    when trim(:version) = '' then ord = (select max(ord) from versions where status = 'complete')
    else label = tpindex_version(:version) end
)
select a.version, a.class, a.attribute, a.value, a.file, a.line
from class_attrs_v a join at on at.version = a.version
where trim(:attribute) = '' or a.attribute = trim(:attribute)
order by a.attribute, a.file, a.line
