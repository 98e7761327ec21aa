"""The SQLite store: the tables, the views that hide blob ids, and reading (plain sqlite3). Creating and
migrating the schema is the build's (store/schema.py, through sqlite-utils).

Facts are computed once per unique blob and located once per (blob, path) pair, a "unit" (the path
decides the module, and so how relative imports and registered modules resolve). Each version maps
paths to units. Views join them so that a person writes `where version = 'v0.32.0'`.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..core.problems import Problem

SCHEMA_VERSION = 15
OLDEST_MIGRATED = 1  # the oldest schema a build migrates (store/schema.py: a named step from each version on)
SQLITE_MAGIC = b"SQLite format 3\0"  # the first 16 bytes of every SQLite database file


class StoreError(Problem):
    """A database that cannot be used as it is."""


class BadSchemaVersion(StoreError):
    """meta.schema_version is not a number: the file is damaged (check reports it)."""


TABLES = """
create table if not exists meta (key text primary key, value text);
create table if not exists versions (
    id integer primary key,
    label text not null unique,
    ref text not null,
    commit_id text not null,
    source text not null,
    origin text,                   -- the repository path, package index or directory read
    ord integer,
    status text not null default 'building',
    registry text,
    file_count integer,
    scope text,
    extractor text,
    indexed_at text
);
create table if not exists blobs (
    id text primary key,
    size integer not null,
    extractor text not null,
    status text not null,
    error_count integer not null default 0,
    first_error_line integer,
    error text,
    facts blob,
    depth integer                  -- how deeply it was extracted (scope.RECORDED / MODULE / FULL)
);
create table if not exists units (
    id integer primary key,
    blob_id text not null references blobs(id),
    path text not null,
    module text,
    extractor text not null,
    unique (blob_id, path)
);
create index if not exists units_module on units(module);
create table if not exists files (
    version_id integer not null references versions(id) on delete cascade,
    path text not null,
    unit_id integer not null references units(id),
    primary key (version_id, path)
) without rowid;
create index if not exists files_unit on files(unit_id);
create table if not exists registrations (
    unit_id integer not null references units(id), kind text not null, name text not null,
    module text, class text, form text not null, line integer, registry text);
create table if not exists imports (
    unit_id integer not null references units(id), line integer, module text, name text, alias text,
    level integer, star integer, type_checking integer, in_function text, in_class text);
create table if not exists classes (
    unit_id integer not null references units(id), qualname text not null, name text, module text,
    line integer, end_line integer, decorators text, nested_in text, no_methods integer, streaming text);
create table if not exists bases (
    unit_id integer not null references units(id), class text not null, pos integer,
    written text, resolved text, base_module text, keyword text);
create table if not exists methods (
    unit_id integer not null references units(id), class text not null, name text, line integer,
    end_line integer, body text, calls_super integer, delegates text);
create table if not exists class_attrs (
    unit_id integer not null references units(id), class text not null, name text, value text, line integer,
    value_kind text, resolved text);
create table if not exists markers (
    id integer primary key, unit_id integer not null references units(id), kind text, line integer,
    text text, class text, function text);
create table if not exists plants (
    unit_id integer not null references units(id), plant text, line integer, text text, class text,
    function text);
create table if not exists adapter_bindings (
    unit_id integer not null references units(id), adapter text, pos integer, parser_written text,
    parser text, line integer);
create table if not exists aliases (
    unit_id integer not null references units(id), name text, written text, resolved text, line integer);
create table if not exists parser_map (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null,            -- tool | reasoning | unified
    name text not null,
    registry_file text, registry_line integer,  -- where the name is registered (or listed)
    reg_module text, reg_class text,
    reg_file text, reg_line integer,  -- the registered module's file, and the registered class's line in it
    form text,
    impl text not null,            -- standalone | unified | name-check | dispatch | unresolved
    real_class text, real_module text, real_file text, real_line integer,
    adapter text,                  -- the adapter class the registered class reaches, if any
    alias_of text,                 -- other names registered to the same class in this version, comma-separated
    stub integer,                  -- the registered file defines no method of its own
    reexport integer,              -- the registered module only re-exports a class defined elsewhere
    parent_class text, parent_file text,  -- the parser class the real class subclasses, when it is a parser
    reason text,                   -- why a chain could not be followed (impl = unresolved)
    streaming text,                -- the streaming method as resolved: code | returns-none | raises-not-implemented | abstract | absent
    streaming_class text, streaming_file text, streaming_line integer,  -- the class whose streaming method runs
    streaming_from text,           -- the other names whose registered class that is, comma-separated (else null)
    wrapper_class text, wrapper_file text, wrapper_line integer,  -- a composed class that only delegates
    notes text,                    -- JSON list of notes on where the logic is (inherited methods, stubs, wrappers)
    code_sig text,                 -- digest of the (path, blob) pairs holding the name's own code
    primary key (version_id, kind, name)
);
create table if not exists parser_hops (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null, name text not null, step integer not null,
    hop text not null,             -- registered | reexport | base | adapter | binding | name-check | dispatch | init | real
    class text, module text, file text, line integer,
    end_line integer,              -- init: the last line of the __init__
    detail text,                   -- init: the attributes it rebinds that the parsing methods read, space-separated
    primary key (version_id, kind, name, step)
);
create table if not exists name_checks (
    unit_id integer not null references units(id), kind text, name text, class text, module text,
    line integer, via text, owner text, tested text);
create table if not exists parser_methods (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null, name text not null,
    role text not null,            -- registered | engine | wrapper: whose resolution order
    method text not null,
    defining_class text, module text, file text, line integer, end_line integer,
    body text,                     -- code | returns-none | raises-not-implemented | abstract | absent
    own integer,                   -- defined by the role's class itself (not inherited)
    calls_super integer, delegates text,
    primary key (version_id, kind, name, role, method)
) without rowid;
create table if not exists parser_attrs (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null, name text not null, role text not null, attribute text not null,
    value text,                    -- the value in vLLM's default configuration, as written
    defining_class text, file text, line integer, own integer,
    set_by text,                   -- what set it at class creation (X.__init_subclass__, decorator f, ...); null: the class body
    condition text,                -- when it differs: the guard and the flags' defaults, the other values
    primary key (version_id, kind, name, role, attribute)
) without rowid;
create table if not exists parser_overridden (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null, name text not null, role text not null,
    class text not null, attribute text not null,  -- a class of the role's resolution order and an attribute it defines
    by_class text, by_file text, by_line integer,  -- the more derived class whose definition the name uses
    by_method text,                -- __init__: a binding in by_class's __init__ (it hides the class's __init__
                                   -- binding too); null: a class attribute, property or method of by_class
    primary key (version_id, kind, name, role, class, attribute)
) without rowid;
create table if not exists sentinels (
    unit_id integer not null references units(id), class text, function text,
    attribute text,                -- the name the literal is assigned to (blank: a bare literal)
    value text, how text,          -- attribute | literal | regex (a token inside a regular expression)
    line integer, non_ascii text);
create table if not exists request_settings (
    unit_id integer not null references units(id), class text, function text, field text, value text,
    line integer, guard text);
create table if not exists template_renders (  -- what a chat template renders for one tool call (extract/templates.py)
    blob_id text primary key,      -- the template's content
    call text,                     -- the call markup: what the tool-call turn renders beyond a plain reply's turn
    reply text,                    -- the plain reply's part in the same place
    error text,                    -- why it does not render (read as text only)
    notes text                     -- JSON list
) without rowid;
create table if not exists doc_pages (  -- the documentation pages' reading (extract/docpages.py), once per blob
    blob_id text not null,
    kind text not null,            -- tool (tool_calling.md: its sections) | reasoning (reasoning_outputs.md: its table)
    reader integer not null,       -- the reading's version (extract/docpages.py READER): another is read again
    facts text not null,           -- JSON (extract/docpages.py facts)
    primary key (blob_id, kind)
) without rowid;
create table if not exists version_scopes (  -- the scope's patterns a version was indexed with (build/scopes.py)
    version_id integer primary key references versions(id) on delete cascade,
    patterns text not null         -- their digest: another (a path the scope gained) re-indexes the version
);
create table if not exists regexes (
    unit_id integer not null references units(id), class text, function text,
    attribute text,                -- the name it is assigned to (blank: used in place)
    pattern text, flags text,      -- flags: DOTALL|MULTILINE ..., '' none passed, null unknown (an assigned pattern)
    how text,                      -- compile | search | ... (the function called) | assigned
    line integer);
create table if not exists self_attrs (  -- what each method of a parser's code binds on the instance and reads
    unit_id integer not null references units(id), class text, method text, attribute text,
    how text,                      -- binds (assigned, standing after the method's super() call) | reads
    line integer);
create table if not exists class_sets (
    unit_id integer not null references units(id),
    via text,                      -- init_subclass | decorator | after_body (extract/class_sets.py)
    owner text,                    -- the class defining the hook, the decorator function, or the class as written
    object text, attribute text, value text, value_kind text,
    guard text,                    -- JSON condition tree (extract/expr.py), references resolved
    guard_text text, params text, target text, line integer);
create table if not exists env_defaults (
    unit_id integer not null references units(id), name text,
    how text,                      -- environment (a lambda of the module's table) | declared (under TYPE_CHECKING)
    value text,                    -- the default configuration's value as a Python literal; null: not readable
    variable text, written text, line integer);
-- The parser contract (issue 28): functions' and methods' signatures as written and class attributes
-- (extract/signatures.py), and the calls vLLM's code makes on parser objects (extract/parser_calls.py).
create table if not exists signatures (
    unit_id integer not null references units(id),
    kind text not null,            -- function | method | attribute
    class text, name text not null, line integer, end_line integer,
    params text,                   -- JSON [[name, kind, annotation, default], ...] (functions and methods)
    returns text, decorators text, is_async integer,
    annotation text, value text);  -- attributes
create table if not exists parser_calls (
    unit_id integer not null references units(id),
    kind text not null,            -- tool | reasoning (a call on a parser object or class) | super
    method text not null,          -- __init__ for a construction
    callee text, positional integer, keywords text, star integer, dstar integer, args text,
    line integer, class text, function text);
create table if not exists parser_code (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null, name text not null, path text not null,
    roles text not null,           -- why the file holds the name's code: registered, real, engine, wrapper, base, helper
    shared integer not null,       -- a framework file (its classes are no name's own): reported once in diffs
    pieces text,                   -- JSON [[part, what, qualname], ...]: the definitions of the file that run for the name
    primary key (version_id, kind, name, path)
) without rowid;
create table if not exists uses (
    unit_id integer not null references units(id),
    what text not null,            -- class | method | function | name | import
    qualname text not null, line integer, end_line integer,
    digest text,                   -- of its code (blank and comment-only lines left out); an import's, of what it imports
    names text);                   -- the module-level definitions and imports its code names, space-separated
-- The whole tree (build --tree): every path of a version, the definitions of every module under vllm/,
-- and the identifiers each text file uses (tree_words), for `where` and `check-doc`.
create table if not exists tree_paths (id integer primary key, path text not null unique);
create table if not exists tree_blobs (
    id integer primary key,
    blob_id text not null unique,  -- git blob id, as blobs.id
    defs text,                     -- extractor id of its rows in definitions (modules under vllm/), else null
    words integer                  -- 1: its identifiers are in tree_words (rowid = this id)
);
create table if not exists tree_files (
    version_id integer not null references versions(id) on delete cascade,
    path_id integer not null references tree_paths(id),
    blob_key integer not null references tree_blobs(id),
    primary key (version_id, path_id)
) without rowid;
create index if not exists tree_files_blob on tree_files(blob_key);
create table if not exists version_trees (
    version_id integer primary key references versions(id) on delete cascade,
    files integer, modules integer);
create table if not exists definitions (
    blob_key integer not null references tree_blobs(id),
    kind text not null,            -- class | function | method | name
    name text not null, qualname text not null, line integer, end_line integer);
create index if not exists definitions_name on definitions(name);
create index if not exists definitions_blob on definitions(blob_key);
-- History from a clone (build --repo; indexer/commits.py): every commit in the history of an indexed git
-- version once. Between those versions and their common base (meta history_base) with parents and the
-- parsed in-scope paths each touched; at and below the base listed only (parents null): every indexed
-- version's history holds them.
create table if not exists commits (
    id integer primary key,
    sha text not null unique,
    parents text,                  -- the parents' ids, space-separated, first parent first (null: below the base)
    date text,                     -- author date, ISO 8601 with its offset
    author text,
    subject text,
    pr integer                     -- the pull request its subject names: "... (#N)", "Merge pull request #N ..."
);
create index if not exists commits_pr on commits(pr) where pr is not null;
create table if not exists commit_files (
    commit_id integer not null references commits(id),
    path text not null,            -- a parsed in-scope path (Python under vllm/) the commit touched
    added integer, removed integer,  -- lines, against the first parent (null: a binary file)
    own integer,                   -- a merge: 1 when the file differs from every parent too (its own change)
    primary key (commit_id, path)
) without rowid;
create index if not exists commit_files_path on commit_files(path);
create table if not exists history_tips (sha text primary key) without rowid;  -- the commits walked so far
"""

# The behaviour atlas (issue 44; indexer/replay/atlas.py writes it, indexer/answers/atlas.py reads it): every
# parser name at every version run on cases made from that version's own files. Cells are stored by what
# determines them (the case, the name's code closure, the serving code), so a version whose name has the same
# code reads the cells an earlier version ran; atlas_map says which cells each (version, name, case) reads.
ATLAS_TABLES = """
create table if not exists atlas_cases (
    key text primary key,          -- digest of what makes the case (its source and the calls it holds)
    case_id text not null,         -- single | parallel | no-args | nested | unicode | content-before | ...
    source text not null,          -- template | test | docs | writer
    origin text,                   -- the file (and line) the case comes from
    text text,                     -- the raw model output (a template's: filled in by the run that renders it)
    expected text,                 -- JSON {calls, content, reasoning} the output must give; null: unknown
    tools text,                    -- JSON: the request's tools
    reasoning_parser text,         -- the reasoning parser composed with the tool parser, if any
    note text                      -- why the case is not its first source's (a template that cannot express it)
) without rowid;
create table if not exists atlas_cells (
    key text not null,             -- a run key of atlas_map (core_key or serving_key)
    mode text not null,            -- nonstream | stream:token | stream:char | serving-full | serving-stream
    status text not null,          -- ok | wrong | error | not-applicable
    detail text,                   -- what differs, the error, or why not applicable (one line)
    result text,                   -- JSON: the mode's calls, content, reasoning, finish_reason, errors
    transient integer not null default 0,  -- a timeout or a killed worker: run again next time
    primary key (key, mode)
) without rowid;
create table if not exists atlas_map (
    version_id integer not null references versions(id) on delete cascade,
    kind text not null, name text not null, case_id text not null,
    case_key text,                 -- atlas_cases.key (null: no case could be made; status says why)
    core_key text,                 -- the cells of nonstream and stream modes: case + code closure
    serving_key text,              -- the cells of serving modes: core + serving code
    status text,                   -- not-applicable when no case could be made (detail: why), else null
    detail text,
    primary key (version_id, kind, name, case_id)
) without rowid;
create index if not exists atlas_map_name on atlas_map(kind, name);
create table if not exists atlas_literals (  -- the model-output literals of test files and documentation pages
    blob_id text not null,         -- the file's content
    line integer not null,
    value text not null,           -- a string the test writes (folded: answers/atlas_literals.py), a code block
    negative integer not null default 0  -- a name around it says the parser must not read it whole
);
create index if not exists atlas_literals_blob on atlas_literals(blob_id);
create table if not exists atlas_read (  -- the blobs whose literals atlas_literals holds, read by which reader
    blob_id text primary key, format integer not null
) without rowid;
"""

FACT_TABLES = (
    "registrations",
    "imports",
    "classes",
    "bases",
    "methods",
    "class_attrs",
    "markers",
    "plants",
    "adapter_bindings",
    "aliases",
    "name_checks",
    "sentinels",
    "request_settings",
    "regexes",
    "self_attrs",
    "class_sets",
    "env_defaults",
    "signatures",
    "parser_calls",
    "uses",
)

INDEXES = "\n".join(f"create index if not exists {t}_unit on {t}(unit_id);" for t in FACT_TABLES)

FTS = """
create virtual table if not exists markers_fts using fts5(text, content='markers', content_rowid='id');
create trigger if not exists markers_ai after insert on markers begin
  insert into markers_fts(rowid, text) values (new.id, new.text);
end;
create trigger if not exists markers_ad after delete on markers begin
  insert into markers_fts(markers_fts, rowid, text) values ('delete', old.id, old.text);
end;
-- Identifiers per file of the tree (contentless, no positions): "does this file mention X". An upper-case
-- letter is written as $ + its lower case (extract/words.py encode_words), so matching is case-sensitive.
create virtual table if not exists tree_words using fts5(words, content='', detail='none',
  tokenize="ascii tokenchars '_$'");
"""

# Per parser name: its first and last version, when it became unified, the versions where its real file or its
# code changed, where it was removed. The window runs over every name unless `one` filters it (lifecycle_of).
LIFECYCLE = """
        with present as (
            select p.kind, p.name, v.label, v.ord, p.impl, p.real_file, p.code_sig,
                   lag(p.real_file) over w as prev_file, lag(v.ord) over w as prev_ord,
                   lag(p.code_sig) over w as prev_sig
            from parser_map p join versions v on v.id = p.version_id and v.status = 'complete'{one}
            window w as (partition by p.kind, p.name order by v.ord)
        ), spans as (
            select kind, name, min(ord) as first_ord, max(ord) as last_ord, count(*) as n from present
            group by kind, name
        )
        select s.kind, s.name,
            (select label from present p where p.kind = s.kind and p.name = s.name and p.ord = s.first_ord)
                as first_version,
            (select label from present p where p.kind = s.kind and p.name = s.name and p.ord = s.last_ord)
                as last_version,
            (select label from present p where p.kind = s.kind and p.name = s.name and p.impl = 'unified'
                order by p.ord limit 1) as became_unified,
            (select group_concat(label, ', ') from (select label from present p where p.kind = s.kind
                and p.name = s.name and p.prev_ord is not null
                and coalesce(p.real_file, '') != coalesce(p.prev_file, '') order by p.ord)) as real_file_changed_in,
            (select group_concat(label, ', ') from (select label from present p where p.kind = s.kind
                and p.name = s.name and p.prev_ord is not null and coalesce(p.real_file, '') = coalesce(p.prev_file, '')
                and coalesce(p.code_sig, '') != coalesce(p.prev_sig, '') order by p.ord)) as code_changed_in,
            (select label from versions v where v.status = 'complete' and v.ord > s.last_ord order by v.ord limit 1)
                as removed_in,
            s.n as versions_present
        from spans s"""

# Views: per version, complete versions only, no blob ids.
VIEWS = {
    "version_files": """
        select v.label as version, v.ord as version_ord, f.path as file, u.module, u.id as unit_id,
               u.blob_id, b.status as parse_status
        from files f join versions v on v.id = f.version_id and v.status = 'complete'
        join units u on u.id = f.unit_id join blobs b on b.id = u.blob_id""",
    "registry": """
        select vf.version, r.kind, r.name, r.module, r.class, r.form, vf.file, r.line, r.registry,
               vf.version_ord
        from registrations r join version_files vf on vf.unit_id = r.unit_id""",
    "imports_v": """
        select vf.version, vf.file, vf.module as importer, i.line, i.module, i.name, i.alias, i.level,
               i.star, i.type_checking, i.in_function, i.in_class, vf.version_ord
        from imports i join version_files vf on vf.unit_id = i.unit_id""",
    "adapter_imports": """
        select version, file, importer, line, module, name, alias,
               case when name like '%ParserToolAdapter' then 'tool' else 'reasoning' end as role,
               version_ord
        from imports_v where name like '%ParserToolAdapter' or name like '%ParserReasoningAdapter'""",
    "classes_v": """
        select vf.version, vf.file, c.module, c.qualname as class, c.line, c.end_line, c.decorators,
               c.nested_in, c.no_methods, c.streaming, vf.version_ord
        from classes c join version_files vf on vf.unit_id = c.unit_id""",
    "class_hierarchy": """
        select vf.version, c.qualname as class, c.module, vf.file, c.line, b.pos, b.written as base_written,
               b.resolved as base, b.base_module, bf.file as base_file, vf.version_ord
        from classes c join version_files vf on vf.unit_id = c.unit_id
        join bases b on b.unit_id = c.unit_id and b.class = c.qualname and b.keyword is null
        left join version_files bf on bf.version = vf.version and bf.module = b.base_module""",
    "methods_v": """
        select vf.version, vf.file, vf.module, m.class, m.name as method, m.line, m.end_line, m.body,
               vf.version_ord
        from methods m join version_files vf on vf.unit_id = m.unit_id""",
    "class_attrs_v": """
        select vf.version, vf.file, vf.module, a.class, a.name as attribute, a.value, a.value_kind, a.resolved,
               a.line, vf.version_ord
        from class_attrs a join version_files vf on vf.unit_id = a.unit_id""",
    "markers_v": """
        select vf.version, vf.file, m.kind, m.line, m.text, m.class, m.function, m.id as marker_id,
               vf.version_ord
        from markers m join version_files vf on vf.unit_id = m.unit_id""",
    "plants_v": """
        select vf.version, vf.file, p.plant, p.line, p.text, p.class, p.function, vf.version_ord
        from plants p join version_files vf on vf.unit_id = p.unit_id""",
    "sentinels_v": """
        select vf.version, vf.file, s.class, s.function, s.attribute, s.value, s.how, s.line, s.non_ascii,
               vf.version_ord
        from sentinels s join version_files vf on vf.unit_id = s.unit_id""",
    "request_settings_v": """
        select vf.version, vf.file, r.class, r.function, r.field, r.value, r.guard, r.line, vf.version_ord
        from request_settings r join version_files vf on vf.unit_id = r.unit_id""",
    "self_attrs_v": """
        select vf.version, vf.file, vf.module, s.class, s.method, s.attribute, s.how, s.line, vf.version_ord
        from self_attrs s join version_files vf on vf.unit_id = s.unit_id""",
    "regexes_v": """
        select vf.version, vf.file, r.class, r.function, r.attribute, r.pattern, r.flags, r.how, r.line,
               vf.version_ord
        from regexes r join version_files vf on vf.unit_id = r.unit_id""",
    "class_sets_v": """
        select vf.version, vf.file, vf.module, c.via, c.owner, c.object, c.attribute, c.value, c.value_kind,
               c.guard, c.guard_text, c.params, c.target, c.line, vf.version_ord
        from class_sets c join version_files vf on vf.unit_id = c.unit_id""",
    "env_defaults_v": """
        select vf.version, vf.file, vf.module, e.name, e.how, e.value, e.variable, e.written, e.line,
               vf.version_ord
        from env_defaults e join version_files vf on vf.unit_id = e.unit_id""",
    "uses_v": """
        select vf.version, vf.file, vf.module, u.what, u.qualname, u.line, u.end_line, u.digest, u.names,
               vf.version_ord
        from uses u join version_files vf on vf.unit_id = u.unit_id""",
    "adapter_bindings_v": """
        select vf.version, vf.file, a.adapter, a.pos, a.parser_written, a.parser, a.line, vf.version_ord
        from adapter_bindings a join version_files vf on vf.unit_id = a.unit_id""",
    "signatures_v": """
        select vf.version, vf.file, vf.module, s.kind, s.class, s.name, s.line, s.end_line, s.params, s.returns,
               s.decorators, s.is_async, s.annotation, s.value, vf.version_ord
        from signatures s join version_files vf on vf.unit_id = s.unit_id""",
    "parser_calls_v": """
        select vf.version, vf.file, c.kind, c.method, c.callee, c.positional, c.keywords, c.star, c.dstar, c.args,
               c.line, c.class, c.function, vf.version_ord
        from parser_calls c join version_files vf on vf.unit_id = c.unit_id""",
    "name_checks_v": """
        select vf.version, vf.file, n.kind, n.name, n.class, n.module, n.line, n.via, n.owner, vf.version_ord
        from name_checks n join version_files vf on vf.unit_id = n.unit_id""",
    "parser_map_v": """
        select v.label as version, p.kind, p.name, p.impl, p.registry_file, p.registry_line, p.reg_module,
               p.reg_class, p.reg_file, p.reg_line,
               p.form, p.real_class, p.real_module, p.real_file, p.real_line, p.adapter, p.alias_of, p.stub,
               p.reexport, p.parent_class, p.parent_file, p.reason, p.streaming, p.streaming_class,
               p.streaming_file, p.streaming_line, p.streaming_from, p.wrapper_class, p.wrapper_file,
               p.wrapper_line, p.notes, p.code_sig, v.ord as version_ord
        from parser_map p join versions v on v.id = p.version_id and v.status = 'complete'""",
    "parser_methods_v": """
        select v.label as version, m.kind, m.name, m.role, m.method, m.defining_class, m.module, m.file, m.line,
               m.end_line, m.body, m.own, m.calls_super, m.delegates, v.ord as version_ord
        from parser_methods m join versions v on v.id = m.version_id and v.status = 'complete'""",
    "parser_attrs_v": """
        select v.label as version, a.kind, a.name, a.role, a.attribute, a.value, a.defining_class, a.file,
               a.line, a.own, a.set_by, a.condition, v.ord as version_ord
        from parser_attrs a join versions v on v.id = a.version_id and v.status = 'complete'""",
    "parser_overridden_v": """
        select v.label as version, o.kind, o.name, o.role, o.class, o.attribute, o.by_class, o.by_file, o.by_line,
               o.by_method, v.ord as version_ord
        from parser_overridden o join versions v on v.id = o.version_id and v.status = 'complete'""",
    "parser_code_v": """
        select v.label as version, c.kind, c.name, c.path as file, c.roles, c.shared, c.pieces, u.blob_id,
               u.id as unit_id, v.ord as version_ord
        from parser_code c join versions v on v.id = c.version_id and v.status = 'complete'
        join files f on f.version_id = c.version_id and f.path = c.path join units u on u.id = f.unit_id""",
    "parser_hops_v": """
        select v.label as version, h.kind, h.name, h.step, h.hop, h.class, h.module, h.file, h.line,
               h.end_line, h.detail, v.ord as version_ord
        from parser_hops h join versions v on v.id = h.version_id and v.status = 'complete'""",
    "lifecycle": LIFECYCLE.format(one=""),  # lifecycle_of: one name's rows
    "tree_files_v": """
        select v.label as version, p.path as file, b.blob_id, v.ord as version_ord
        from tree_files t join versions v on v.id = t.version_id and v.status = 'complete'
        join tree_paths p on p.id = t.path_id join tree_blobs b on b.id = t.blob_key""",
    "definitions_v": """
        select v.label as version, p.path as file, d.kind, d.name, d.qualname, d.line, d.end_line,
               v.ord as version_ord
        from definitions d join tree_files t on t.blob_key = d.blob_key
        join versions v on v.id = t.version_id and v.status = 'complete' join tree_paths p on p.id = t.path_id""",
    # the atlas's cells per version (the not-applicable cases without cells as one row with mode null)
    "atlas_v": """
        select v.label as version, m.kind, m.name, m.case_id, c.mode, c.status, c.detail, c.transient,
               m.case_key, v.ord as version_ord
        from atlas_map m join versions v on v.id = m.version_id and v.status = 'complete'
        join atlas_cells c on c.key = m.core_key and c.mode not like 'serving%'
        union all
        select v.label, m.kind, m.name, m.case_id, c.mode, c.status, c.detail, c.transient, m.case_key, v.ord
        from atlas_map m join versions v on v.id = m.version_id and v.status = 'complete'
        join atlas_cells c on c.key = m.serving_key and c.mode like 'serving%'
        union all
        select v.label, m.kind, m.name, m.case_id, null, m.status, m.detail, 0, m.case_key, v.ord
        from atlas_map m join versions v on v.id = m.version_id and v.status = 'complete'
        where m.status is not null""",
    "parse_errors": """
        select version, file, parse_status, b.error_count, b.first_error_line, b.error
        from version_files vf join blobs b on b.id = vf.blob_id where b.status not in ('ok', 'not-parsed')""",
}


def lifecycle_of(name: str, kind: str | None = None, columns: str = "*") -> tuple[str, list]:
    """(sql, params) of the lifecycle view's rows of one name (and kind), as `select columns from lifecycle
    where name = ? [and kind = ?]` gives them, with the filter inside the window: SQLite runs the view's
    window over every name before filtering (13 ms on 64 versions; 0.4 ms filtered first)."""
    one = "\n            where p.name = ?" + (" and p.kind = ?" if kind is not None else "")
    return f"select {columns} from ({LIFECYCLE.format(one=one)})", [name] + (
        [kind] if kind is not None else []
    )


class Reader:
    """A connection with the calls the commands use (`execute`, `query`, `table_names`, and `conn` itself),
    without importing sqlite-utils: commands, builds included, start in a fraction of the time."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None = None):
        self.conn = conn
        self.path = path  # as given to connect(): hints name it
        self.upstream_override: str | None | bool = False  # links' upstream if not False (serve --upstream)

    def execute(self, sql: str, params=()):
        return self.conn.execute(sql, params)

    def query(self, sql: str, params=()):
        cur = self.conn.execute(sql, params)
        cols = [d[0] for d in cur.description]
        for row in cur:
            yield dict(zip(cols, row, strict=True))

    def table_names(self) -> list[str]:
        return [r[0] for r in self.conn.execute("select name from sqlite_master where type = 'table'")]


def connect(
    path: str | Path, create: bool = True, readonly: bool = False, any_schema: bool = False, setup=None
):
    """Open a database: a Reader, read-only or (readonly=False) for a build to write through its `conn`, the
    schema created or migrated by `setup(reader, path)` (store/schema.py's). A reader refuses a database of an older schema (its tables lack what the answers
    read; a build migrates it) unless `any_schema` (check, which reports it)."""
    path = Path(path)
    if not path.exists():
        if not create:
            raise StoreError(f"no database at {path}", f"build one first: tpindex build --db {path}")
        if not path.parent.is_dir():
            raise StoreError(f"directory {path.parent} does not exist", "create it or pass another --db")
    try:
        if readonly:
            conn = _open_readonly(path)  # probed there
        else:
            conn = sqlite3.connect(os.fsencode(path), timeout=30)
            conn.execute("select count(*) from sqlite_master").fetchone()
        conn.execute("pragma busy_timeout = 30000")
    except (sqlite3.DatabaseError, UnicodeDecodeError) as e:  # SQLite's message quoting garbage bytes
        if is_damaged(e):
            raise StoreError(f"{path} is damaged ({e})", "rebuild it into another --db") from e
        raise StoreError(f"{path} is not a tpindex database ({e})", "pass another --db") from e
    try:
        db = Reader(conn, path)
        if readonly:
            check_schema(db, path)
            found = schema_version(db)
            if not any_schema and found < SCHEMA_VERSION:
                conn.close()
                raise StoreError(
                    f"{path} was built by an older tpindex (schema {found}; this one reads schema"
                    f" {SCHEMA_VERSION})",
                    f"run tpindex build --db {path} (with the same versions)"
                    " to migrate it, or rebuild into another --db",
                )
            return db
        if setup is not None:  # the build's (store/schema.py: readers never import sqlite-utils)
            setup(db, path)
        return db
    except (
        sqlite3.DatabaseError,
        UnicodeDecodeError,
    ) as e:  # pages of the schema or of meta that cannot be read
        if not is_damaged(e):
            raise
        conn.close()
        raise StoreError(f"{path} is damaged ({e})", "rebuild it into another --db") from e


def open_reader(path: str | Path) -> Reader:
    """A read-only Reader of a database already found to be readable (a search's child process opens the
    file its parent checked), without the schema checks of connect()."""
    conn = _open_readonly(Path(path))
    conn.execute("pragma busy_timeout = 30000")
    return Reader(conn, Path(path))


def check_target(path: str | Path) -> None:
    """Before a build changes anything (the lock file beside it, WAL mode, the schema): the file at `path`
    is absent, empty, or a database this tpindex can write, found by reading it only. A StoreError says
    what it is otherwise."""
    path = Path(path)
    if not path.exists():
        return
    if path.is_dir():
        raise StoreError(f"{path} is a directory", "pass the path of a database file with --db")
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as e:
        raise StoreError(
            f"cannot read {path} ({e.strerror})", "check its permissions or pass another --db"
        ) from e
    if not head:
        return  # an empty file: SQLite makes it a new database
    if head != SQLITE_MAGIC:
        raise StoreError(f"{path} is not a tpindex database (not an SQLite file)", "pass another --db")
    try:
        conn = _open_readonly(path)
        try:
            db = Reader(conn)
            if schema_version(db) is not None or db.table_names():
                check_schema(db, path)
        finally:
            conn.close()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as e:
        if is_damaged(e):
            raise StoreError(f"{path} is damaged ({e})", "rebuild it into another --db") from e
        raise StoreError(f"{path} is not a tpindex database ({e})", "pass another --db") from e


def is_damaged(e: Exception) -> bool:
    if isinstance(e, UnicodeDecodeError):  # an error message of SQLite quoting garbage from a damaged page
        return True
    name = getattr(e, "sqlite_errorname", "")
    if str(e).startswith("Could not decode to UTF-8"):  # text columns holding garbage bytes
        return True
    if isinstance(e, sqlite3.OperationalError) and str(e).startswith(("no such column", "no such table")):
        return (
            True  # a schema page of a database of this schema version garbled (a view's table lost a column)
        )
    return name == "SQLITE_CORRUPT" or (not name and "malformed" in str(e))


def _uri(path: Path) -> str:
    from urllib.parse import quote

    return "file:" + quote(
        os.fsencode(path.absolute())
    )  # a path with ? or # is still one path; bytes as on disk


def _open_readonly(path: Path) -> sqlite3.Connection:
    """Read-only, through the WAL; where SQLite cannot read it so (read-only media without the WAL index)
    an immutable view that still holds what is in the WAL (see read_view)."""
    try:
        conn = sqlite3.connect(_uri(path) + "?mode=ro", uri=True, timeout=30)
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        if os.access(path.parent, os.W_OK):
            raise
    view = _immutable_view(path)
    conn = sqlite3.connect(_uri(view) + "?mode=ro&immutable=1", uri=True, timeout=30)
    conn.execute("select count(*) from sqlite_master").fetchone()
    if view != path:  # an immutable connection reads the file it opened: the copy can go now
        _remove_view(view)
    return conn


def read_view(path: Path) -> tuple[Path, bool]:
    """Where and how a reader that opens the file itself (Datasette) reads a database: (file, immutable).

    mode=ro reads a database in WAL mode through its WAL, which needs the WAL index (-shm) beside it;
    SQLite creates one where it can write. In a read-only directory without one the database is read
    as an immutable file, which must then hold everything: a -wal with data in it is first applied to a
    private copy (an immutable read of the original would silently miss what is only in the WAL). The
    copy is removed when the process exits, or by the next process making one if this one was killed."""
    try:
        conn = sqlite3.connect(_uri(path) + "?mode=ro", uri=True, timeout=30)
        try:
            conn.execute("select count(*) from sqlite_master").fetchone()
        finally:
            conn.close()
        return path, False
    except sqlite3.OperationalError:
        if os.access(path.parent, os.W_OK):
            return path, False  # the reader's own error says what is wrong
    view = _immutable_view(path)
    if view != path:
        import atexit

        atexit.register(_remove_view, view)
    return view, True


VIEW_PREFIX = "tpindex-view-"  # temporary copies: tpindex-view-<pid>-<random>/<database>


def _immutable_view(path: Path) -> Path:
    """The database itself when its -wal holds nothing, else a copy in a temporary directory with the WAL
    checkpointed into it."""
    wal = Path(str(path) + "-wal")
    try:
        if wal.stat().st_size == 0:
            return path
    except OSError:
        return path
    import shutil
    import tempfile

    _remove_stale_views()
    copy = Path(tempfile.mkdtemp(prefix=f"{VIEW_PREFIX}{os.getpid()}-")) / path.name
    try:
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, Path(str(copy) + "-wal"))
        conn = sqlite3.connect(os.fsencode(copy))
        try:
            conn.execute("pragma wal_checkpoint(truncate)").fetchone()
        finally:
            conn.close()
    except OSError as e:  # the temporary directory is full or not writable
        _remove_view(copy)
        raise StoreError(
            f"{path} is on read-only media with data in its -wal, and a readable copy cannot be"
            f" made in {copy.parent.parent} ({e.strerror or e})",
            "free space there (or set TMPDIR), or copy the database and its -wal somewhere writable",
        ) from None
    except BaseException:
        _remove_view(copy)
        raise
    return copy


def _remove_view(view: Path) -> None:
    import shutil

    shutil.rmtree(view.parent, ignore_errors=True)


def _remove_stale_views() -> None:
    """Copies left by processes that are gone (killed before they could remove theirs)."""
    import shutil
    import tempfile

    for d in Path(tempfile.gettempdir()).glob(VIEW_PREFIX + "*-*"):
        try:
            os.kill(int(d.name[len(VIEW_PREFIX) :].split("-")[0]), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (ValueError, OSError):
            pass


def schema_version(db) -> int | None:
    if "meta" not in db.table_names():
        return None
    row = db.execute("select value from meta where key = 'schema_version'").fetchone()
    if not row:
        return None
    try:
        return int(row[0])
    except (TypeError, ValueError):
        shown = repr(row[0]) if len(repr(row[0])) <= 40 else repr(row[0])[:40] + "..."
        raise BadSchemaVersion(
            f"meta.schema_version is {shown}, not a number: the database is damaged",
            "rebuild it into another --db",
        ) from None


def check_schema(db, path) -> None:
    found = schema_version(db)
    if found is None:
        if db.table_names():
            raise StoreError(f"{path} is an SQLite database but not a tpindex one", "pass another --db")
        raise StoreError(f"{path} holds no index yet", f"build one first: tpindex build --db {path}")
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was built by a newer tpindex (schema {found}, this one reads {SCHEMA_VERSION})",
            "upgrade tpindex or rebuild into another --db",
        )
    if found < OLDEST_MIGRATED:
        raise StoreError(
            f"{path} was built by an older tpindex (schema {found}) that this one cannot migrate"
            f" to schema {SCHEMA_VERSION}",
            "rebuild into another --db",
        )


# blobs.status of blobs extracted less than fully, and the depth each stands for (scope.RECORDED ..
# scope.FULL), for rows written before blobs.depth was; any other status (ok, syntax-errors, ...) is a
# full parse.
SHALLOW_STATUSES = {"not-parsed": 0}


def stored_depth(status: str, depth: int | None = None) -> int:
    """How deeply a blob stored with this status (and blobs.depth) was extracted."""
    from ..core.scope import FULL

    if status in SHALLOW_STATUSES:
        return SHALLOW_STATUSES[status]
    return depth if depth is not None else FULL


def underfed_units(conn, extractor: str | None = None) -> list[tuple[int, str, str]]:
    """(unit id, blob id, path) of the units whose blob was extracted less deeply than their path needs:
    their facts are missing (an older tpindex stored content first met at a recorded path, such as
    tests/, as not parsed, and never parsed it where it appeared again under vllm/)."""
    from ..core.scope import FULL, depth_needed

    marks = ", ".join("?" * len(SHALLOW_STATUSES))
    has_depth = any(
        r[1] == "depth" for r in conn.execute("pragma table_info(blobs)")
    )  # read before migrating
    depth, shallow = ("b.depth", " or b.depth < ?") if has_depth else ("null", "")
    sql = (
        f"select u.id, u.blob_id, u.path, b.status, {depth} from units u join blobs b on b.id = u.blob_id"
        f" where (b.status in ({marks}){shallow})" + (" and u.extractor = ?" if extractor else "")
    )
    params = [*SHALLOW_STATUSES, *([FULL] if has_depth else []), *([extractor] if extractor else [])]
    return [
        (u, b, p)
        for u, b, p, status, depth in conn.execute(sql, params)
        if depth_needed(p) > stored_depth(status, depth)
    ]


def set_meta(db, key: str, value: str) -> None:
    db.execute("insert or replace into meta(key, value) values (?, ?)", [key, value])


def leftovers(conn, extractor: str) -> dict[str, int]:
    """Counts of the rows repair_leftovers would remove or update."""
    tree = 0
    if "tree_blobs" in {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}:
        tree = conn.execute(
            "select (select count(*) from tree_blobs b where not exists (select 1 from tree_files f"
            " where f.blob_key = b.id)) + (select count(*) from tree_paths where id not in"
            " (select path_id from tree_files))"
        ).fetchone()[0]
    blobs = 0
    if any(r[1] == "depth" for r in conn.execute("pragma table_info(blobs)")):
        blobs = conn.execute(
            "select count(*) from blobs where status = 'not-parsed' and (extractor != ? or depth is null)",
            [extractor],
        ).fetchone()[0]
    return {"tree": tree, "blobs": blobs}


def repair_leftovers(conn, extractor: str) -> dict[str, int]:
    """Inside a transaction: remove the whole-tree rows no version maps (a version indexed again without
    --tree drops its tree_files, not the blobs, definitions, words and paths only it used), and give
    record-only blob rows the extractor and depth a build writes (a migration left an older extractor and
    no depth: they carry no facts, so nothing else changes). -> what was done."""
    from ..core.scope import RECORDED

    done = {"tree": 0, "blobs": 0}
    done["blobs"] = conn.execute(
        "update blobs set extractor = ?, depth = ? where status = 'not-parsed'"
        " and (extractor != ? or depth is null)",
        [extractor, RECORDED, extractor],
    ).rowcount
    orphans = [
        r[0]
        for r in conn.execute(
            "select id from tree_blobs b where not exists (select 1 from tree_files f where f.blob_key = b.id)"
        )
    ]
    if orphans:
        conn.execute("create temp table if not exists tpindex_orphans(id integer primary key)")
        conn.execute("delete from temp.tpindex_orphans")
        conn.executemany("insert into temp.tpindex_orphans(id) values (?)", [(i,) for i in orphans])
        if not conn.execute("select exists(select 1 from tree_files)").fetchone()[0]:
            conn.execute("insert into tree_words(tree_words) values ('delete-all')")
        else:  # a contentless index forgets a document given its words: read them from the index itself
            conn.execute(
                "create virtual table if not exists temp.tpindex_words using fts5vocab(main, tree_words,"
                " 'instance')"
            )
            words: dict[int, list[str]] = {}
            for term, doc in conn.execute(
                "select term, doc from temp.tpindex_words where doc in (select id from temp.tpindex_orphans)"
            ):
                words.setdefault(doc, []).append(term)
            conn.executemany(
                "insert into tree_words(tree_words, rowid, words) values ('delete', ?, ?)",
                [(doc, " ".join(terms)) for doc, terms in words.items()],
            )
            conn.execute("drop table temp.tpindex_words")
        conn.execute("delete from definitions where blob_key in (select id from temp.tpindex_orphans)")
        conn.execute("delete from tree_blobs where id in (select id from temp.tpindex_orphans)")
        conn.execute("drop table temp.tpindex_orphans")
    paths = conn.execute("delete from tree_paths where id not in (select path_id from tree_files)").rowcount
    done["tree"] = len(orphans) + paths
    return done
