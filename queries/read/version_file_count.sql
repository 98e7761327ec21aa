-- How many files a version's scope holds.
select file_count from versions where label = :version
