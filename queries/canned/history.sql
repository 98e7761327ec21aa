-- NAME across versions: how the name was implemented in every indexed version, consecutive versions with the same registration, real class, wrapper and code collapsed into one row (as tpindex which --all).
-- :name  a registered parser name, e.g. hermes
-- A gap between two rows of one kind means the name was absent in between. code_changed: the real file is
-- the previous row's, but the name's own code changed. The real file links to its line in the last
-- version of the row.
with vs as (
  select label, ord, row_number() over (order by ord) as rn from versions where status = 'complete'
), m as (
  select p.*, vs.rn from parser_map_v p join vs on vs.label = p.version where p.name = trim(:name)
), g as (
  select m.*, rn - row_number() over (
    partition by kind, impl, reg_file, reg_class, real_file, real_class, adapter, wrapper_class, reason, code_sig
    order by rn) as grp
  from m
), spans as (
  select kind, grp, impl, reg_file, reg_class, real_file, real_class, adapter, wrapper_class, reason, code_sig,
         min(rn) as rn1, max(rn) as rn2, count(*) as n
  from g group by kind, grp, impl, reg_file, reg_class, real_file, real_class, adapter, wrapper_class, reason, code_sig
), ordered as (
  select s.*, lag(real_file) over (partition by kind order by rn1) as prev_file,
         lag(code_sig) over (partition by kind order by rn1) as prev_sig,
         lag(impl) over (partition by kind order by rn1) as prev_impl
  from spans s
)
select s.kind, (select label from vs where vs.rn = s.rn1) as first_version,
  (select label from vs where vs.rn = s.rn2) as last_version, s.n as versions, s.impl, s.real_class,
  s.real_file, (select real_line from m where m.kind = s.kind and m.rn = s.rn2) as real_line,
  s.reg_class, s.reg_file, s.adapter, s.wrapper_class, s.reason,
  case when s.prev_file = s.real_file and s.prev_impl = s.impl and s.prev_sig != s.code_sig then 1 else 0 end
    as code_changed
from ordered s
order by s.kind, s.rn1
