-- The upstream repository URL (or link template) the build stored, as written (no row: none stored).
select value from meta where key = 'upstream'
