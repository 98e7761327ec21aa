"""Datasette metadata for a tpindex database: what every table and view holds, the columns that need
saying, facets, sort orders, label columns and full-text search on markers."""

from __future__ import annotations

TITLE = "tpindex: vLLM's tool-calling code across versions"

DESCRIPTION_HTML = """
<p>An index of <a href="https://github.com/vllm-project/vllm">vLLM</a>'s tool-calling subsystem, one row per fact
per version: the tool- and reasoning-parser registries, the file and class that really implement each
registered name (following stubs, re-exports, adapters and name checks), imports of adapters, classes and
their bases, HACK/TODO comments and known workaround patterns ("plants").</p>
<p>Type a model (GLM-4.7, Qwen3-Coder), a parser name (or its start) or a version in the search box to open
its page: everything about it at a version (files, classes, streaming, sentinels, chat template, tests, the
<code>vllm serve</code> line), its history and its code changes. Or start with a question below, or the <a href="/-/parser-matrix">parser matrix</a> (names &times; versions).
Every file with a line links to that line in the stored code at that version (&#x2197;: upstream), and
the <a href="/-/grep">code search</a> greps every indexed version at once. The database is read-only; any
<code>select</code> may be run against the views (they take <code>where version = 'v0.32.0'</code> and hide
blob ids).</p>
"""

VERSION = "a version label, e.g. v0.32.0 (tags upstream)"
VERSION_ORD = "position of the version in version order (sort by this, not by the label)"
IMPL = (
    "how the name is implemented: standalone (its own class), unified (a stub over an adapter made from a "
    "parser class in vllm/parser/), name-check (the manager compares the name and picks a class), dispatch "
    "(hard-coded era: CLI choices and a branch in the serving code), unresolved (see reason)"
)
KIND = (
    "tool, reasoning or engine: the registry the name belongs to (engine: the parser engine's own registry in "
    "vllm/parser/, v0.16.0 on; not to be confused with impl = unified)"
)
FORM = (
    "how the name is registered: decorator, lazy-dict (a _..._TO_REGISTER dict), lazy-call "
    "(register_lazy_module(...)), module-call, cli-choices (the hard-coded era)"
)
UNIT = "internal: the (blob, path) pair the fact was extracted from"

PER_VERSION_VIEW = {"sort_desc": "version_ord", "facet_size": 10}

TABLES: dict[str, dict] = {
    # views: what people query
    "parser_map_v": {
        "description": "Every registered parser name of every version, resolved to the class and file that really "
        "implement it. One row per (version, kind, name).",
        "facets": ["kind", "impl", "form", "version"],
        "columns": {
            "impl": IMPL,
            "form": FORM,
            "registry_file": "the file where the name is registered (or listed); registry_line: its line",
            "reg_module": "the module the registration names; reg_class: the class, reg_file / reg_line: where it is",
            "real_file": "the file that really implements the parser; real_class / real_line: the class and its line",
            "adapter": "the adapter class (…ParserToolAdapter / …ParserReasoningAdapter) the registered class reaches",
            "alias_of": "other names registered to the same class in this version",
            "stub": "1: the registered file defines no method of its own",
            "reexport": "1: the registered module only re-exports a class defined elsewhere",
            "parent_class": "the parser class the real class subclasses, when it is another name's parser",
            "reason": "why the chain could not be followed (impl = unresolved)",
            "streaming": "the streaming extraction method as the real side resolves it: code, returns-none, "
            "raises-not-implemented, abstract, absent",
            "streaming_class": "the class whose streaming method runs (streaming_file / streaming_line: where)",
            "streaming_from": "the other names whose registered class that is (streaming comes from another "
            "name's parser), comma-separated",
            "wrapper_class": "a class the parser manager composes around the parser that only hands extraction on "
            "(wrapper_file / wrapper_line: where it is defined)",
            "notes": "JSON list of notes on where the logic is: inherited methods, selector stubs, wrappers",
            "code_sig": "digest of the files (path and content) holding the name's own code; it changes when that "
            "code does",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "parser_methods_v": {
        "description": "The contract methods of every name as Python resolves them through the class hierarchy: "
        "one row per (version, kind, name, role, method), with the class that defines it.",
        "facets": ["role", "method", "body", "version"],
        "columns": {
            "role": "whose resolution order: registered (the registered class), engine (the parser engine class "
            "behind an adapter), wrapper (a delegating class the manager composes), composed (a class the "
            "manager composes that parses itself)",
            "defining_class": "the class whose definition of the method is used (module: its module)",
            "body": "code, returns-none (only pass / return None), raises-not-implemented, abstract "
            "(@abstractmethod), absent (no class defines it)",
            "own": "1: defined by the role's class itself, not inherited",
            "calls_super": "1: the method calls super() for the same method (it extends, not replaces)",
            "delegates": "the call the method hands the work to (self._tool_parser.extract_tool_calls ...)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "parser_attrs_v": {
        "description": "Class attributes that decide behaviour (those a framework base declares, e.g. "
        "supports_required_and_named, structural_tag_model; those set at class creation; and "
        "_parser_engine_cls), as each name's classes have them once created, in vLLM's default "
        "configuration (README, Attributes as Python computes them).",
        "facets": ["attribute", "role", "set_by", "version"],
        "columns": {
            "role": "whose resolution order (see parser_methods_v)",
            "value": "the value in vLLM's default configuration, as written",
            "defining_class": "the class that has it of its own (where set_by set it, the class it was set on)",
            "file": "where the value is written (the class body, or the assignment that set it at class "
            "creation); line: its line",
            "own": "1: the role's class has it of its own",
            "set_by": "what set it at class creation: X.__init_subclass__, decorator f, assignment after "
            "the class body (blank: the class body)",
            "condition": "what decides it: the guard of the assignment that set it, the defaults of the "
            "environment flags it reads (from vllm/envs.py), the value with a flag turned",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "parser_overridden_v": {
        "description": "Attributes and properties of a name's classes that a more derived class of the same "
        "resolution order defines again: the sentinels they hold are not the name's (README, Sentinels).",
        "facets": ["attribute", "version"],
        "columns": {
            "class": "the class whose definition is overridden",
            "attribute": "the attribute or property",
            "by_class": "the class whose definition the name uses (by_file / by_line: where)",
            "by_method": "__init__: a binding in by_class's __init__, which hides the class's own __init__ binding "
            "too; blank: a class attribute, property or method of by_class",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "class_sets_v": {
        "description": "What runs at class creation and sets a class's attributes: assignments in __init_subclass__, "
        "in class decorators, and after a class body, with their conditions (README, Attributes as "
        "Python computes them).",
        "facets": ["via", "attribute", "version"],
        "columns": {
            "via": "init_subclass, decorator, after_body",
            "owner": "the class defining the hook, the decorator function, or the class as written",
            "object": "the name assigned to (cls, ...)",
            "guard": "the condition as a JSON tree, names resolved",
            "guard_text": "the condition as written",
            "params": "a decorator factory's parameters (JSON)",
            "target": "after_body: the class, resolved",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "env_defaults_v": {
        "description": "Environment flags and their defaults as a module gives them (vllm/envs.py): the lambda of its "
        "table with every variable unset (how = environment), or the TYPE_CHECKING declaration "
        "(how = declared).",
        "facets": ["how", "version"],
        "columns": {
            "value": "the default as a Python literal (blank: not readable without running code)",
            "variable": "the environment variable the lambda reads",
            "written": "the expression as written",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "parser_code_v": {
        "description": "The files holding each name's code: its registered, real, engine and composed classes' "
        "files, those of every class in their resolution orders that defines a contract method or "
        "runs for it, and those holding the functions, constants and helpers it runs (README, "
        "What runs for a name).",
        "facets": ["shared", "version"],
        "columns": {
            "roles": "why the file holds the name's code: registered, real, engine, wrapper, composed, "
            "base, helper (only functions, constants or helper classes the name runs)",
            "shared": "1: a framework file (engine base, abstract parser, adapters) whose classes are no "
            "name's own; a change there is reported once, with the names it affects",
            "pieces": "JSON [[part, what, qualname], ...]: the definitions of the file that run for the "
            "name (part: extraction, methods, functions, imports; what: see uses_v)",
            "blob_id": "git blob id of the file's content at that version",
            "unit_id": UNIT,
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "parser_hops_v": {
        "description": "The chain from each registration to its real class, one row per hop, in step order.",
        "facets": ["hop", "kind", "version"],
        "sort": "step",
        "columns": {
            "step": "0 = the registration, then each hop in order",
            "hop": "registered, reexport, alias, class, base, adapter, engine attribute, unified_parser_cls, "
            "name-check, dispatch, init, real",
            "end_line": "init: the last line of the __init__",
            "detail": "init: the attributes the __init__ rebinds that the real class's methods read",
            "version": VERSION,
            "version_ord": VERSION_ORD,
        },
    },
    "lifecycle": {
        "description": "Each (kind, name) over the indexed versions: first and last version, when it became "
        "unified, the versions where its real file changed, the version that removed it.",
        "facets": ["kind"],
        "sort": "name",
        "columns": {
            "became_unified": "first indexed version where the name is implemented through the parser engine",
            "real_file_changed_in": "indexed versions whose real file differs from the previous indexed version's",
            "code_changed_in": "indexed versions where the real file stayed but the name's own code changed",
            "removed_in": "first indexed version after last_version (blank: still present in the newest)",
            "versions_present": "number of indexed versions registering the name",
        },
    },
    "registry": {
        "description": "Raw registrations as written: every registered name of every version, with where it is "
        "registered. A name may appear twice (a leftover decorator duplicating a dict entry); "
        "parser_map_v keeps the first.",
        "facets": ["kind", "form", "version"],
        "columns": {
            "version": VERSION,
            "kind": KIND,
            "form": FORM,
            "module": "the module the registration names",
            "class": "the class the registration names",
            "line": "line of the registration",
            "registry": "the registry the name is registered in (e.g. _TOOL_PARSERS_TO_REGISTER)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "adapter_imports": {
        "description": "Imports of adapter classes (…ParserToolAdapter, …ParserReasoningAdapter): which files "
        "import an adapter, and from which module.",
        "facets": ["role", "module", "version"],
        "columns": {
            "importer": "the module of the importing file",
            "module": "the module imported from",
            "name": "the adapter imported",
            "role": "tool or reasoning (from the adapter's name)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "imports_v": {
        "description": "Every import statement of every in-scope file, per version.",
        "facets": ["version"],
        "columns": {
            "importer": "the module of the importing file",
            "module": "the module imported from",
            "name": "the name imported (blank for `import module`)",
            "level": "relative import level",
            "star": "1: `from module import *`",
            "type_checking": "1: under `if TYPE_CHECKING:`",
            "in_function": "the function the import is inside (a lazy import)",
            "in_class": "the class the import is inside",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "classes_v": {
        "description": "Every class of every in-scope file, per version.",
        "facets": ["version", "streaming"],
        "columns": {
            "class": "qualified name within the module (Outer.Inner)",
            "nested_in": "the enclosing class or function",
            "no_methods": "1: the class body defines no method",
            "streaming": "the shape of extract_tool_calls_streaming when the class defines it: returns-none, "
            "raises-not-implemented, code (blank: not defined here)",
            "decorators": "decorator names, as a JSON list",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "class_hierarchy": {
        "description": "Each class with each of its bases, resolved through the file's imports.",
        "facets": ["version"],
        "columns": {
            "pos": "position of the base in the class statement",
            "base_written": "the base as written",
            "base": "the base, resolved to a dotted name",
            "base_module": "the module of the base",
            "base_file": "the file of base_module in the same version (blank: outside the scope)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "methods_v": {
        "description": "Every method of every class, per version.",
        "facets": ["version", "method"],
        "columns": {
            "body": "the shape of the body: returns-none (only pass / return None), raises-not-implemented, code",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "class_attrs_v": {
        "description": "Class attributes assigned in class bodies (e.g. supports_required_and_named = False).",
        "facets": ["attribute", "version"],
        "columns": {
            "value": "the value as written",
            "value_kind": "literal or name",
            "resolved": "a name value resolved through the file's imports",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "markers_v": {
        "description": "HACK / TODO / FIXME / XXX comments with their enclosing class and function. Searchable.",
        "facets": ["kind", "version"],
        "fts_table": "markers_fts",
        "fts_pk": "marker_id",
        "columns": {
            "kind": "HACK, TODO, FIXME or XXX",
            "text": "the comment",
            "function": "the enclosing function (Class.method)",
            "marker_id": "id in the markers table (and the full-text index)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "plants_v": {
        "description": 'Known workaround patterns ("plants"), e.g. an assignment of prev_tool_call_arr = '
        '[{"arguments": {}}], one pattern file per plant.',
        "facets": ["plant", "version"],
        "columns": {
            "plant": "the pattern's name (its file under queries/plants/)",
            "text": "the matched statement",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "sentinels_v": {
        "description": "Sentinels: the token strings a parser looks for or emits (<tool_call>, [TOOL_CALLS], "
        "<｜tool▁sep｜>), from string literals: class attributes, module constants, self.x assignments, "
        "bare literals and the tokens inside regular expressions (README, Sentinels).",
        "facets": ["how", "version"],
        "columns": {
            "class": "the enclosing class (blank: module level)",
            "function": "the enclosing function",
            "attribute": "the name the literal is assigned to (blank: a bare literal)",
            "value": "the token string (for how = reference: the expression as written)",
            "how": "attribute, literal, regex (a token inside a regular expression), reference (a name "
            "assigned from a tokens object, not a literal)",
            "non_ascii": "its non-ASCII characters, named (U+FF5C FULLWIDTH VERTICAL LINE, ...)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "request_settings_v": {
        "description": "What adjust_request does where readable: each request.FIELD = VALUE assignment inside an "
        "adjust_request method (e.g. skip_special_tokens = False), with the condition around it.",
        "facets": ["field", "version"],
        "columns": {
            "field": "the request field assigned",
            "value": "the value as written",
            "guard": "the condition of the innermost if / elif around it (not (...) in an else)",
            "function": "the enclosing method (Class.adjust_request)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "self_attrs_v": {
        "description": "What each method of the parser code binds on the instance (self.x = ..., standing after "
        "its super() call) and reads (self.x): how an overriding __init__ that rebinds what the parsing methods "
        "read is found (README, Where the parsing code is).",
        "facets": ["how", "method", "version"],
        "columns": {
            "class": "the class defining the method",
            "method": "the method",
            "attribute": "the instance attribute",
            "how": "binds: assigned after the method's last super() call (or anywhere, without one); reads: used",
            "line": "binds: the last binding; reads: the first use",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "regexes_v": {
        "description": "The regular expressions of the parser code: the pattern argument of re.compile, "
        "re.search, ... and strings assigned to a name ending in regex / pattern / _re, as Python "
        "reads them (what tpindex fit runs on a template's rendered call or a raw output).",
        "facets": ["how", "version"],
        "columns": {
            "class": "the enclosing class (blank: module level)",
            "function": "the enclosing function",
            "attribute": "the name the compiled pattern is assigned to (blank: used in place)",
            "pattern": "the pattern's text",
            "flags": "the flags the call passes (DOTALL|MULTILINE ...); "
            "blank: none; null: unknown (an assigned pattern)",
            "how": "the re function called (compile, search, ...) or assigned",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "uses_v": {
        "description": "Each definition of a parser file (a class's own statements, a method, a module-level "
        "function, name or import) with a digest of its code and the module-level names it reads "
        "or calls: what the index follows from a name's classes to the code that runs for it.",
        "facets": ["what", "version"],
        "columns": {
            "what": "class (its own statements), method, function, name (a module-level assignment), "
            "import (a name a module-level import binds)",
            "qualname": "Cls, Cls.method, function, NAME, or the imported name as bound",
            "digest": "of its lines without blank and comment-only lines (an import's: of what it "
            "imports); equal digests, same code",
            "names": "the module-level definitions and imports its code reads or calls, space-separated",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "adapter_bindings_v": {
        "description": "Adapters made from a parser class: (ReasoningAdapter, ToolAdapter) = make_adapters(Parser).",
        "facets": ["version"],
        "columns": {
            "pos": "position of the adapter in the assignment",
            "parser_written": "the argument as written",
            "parser": "the parser class, resolved to a dotted name",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "name_checks_v": {
        "description": "Branches that compare a requested parser name and pick a class "
        '(if tool_parser_name == "x": ...), and class-based dispatch (unified_parser_cls()).',
        "facets": ["kind", "via", "version"],
        "columns": {
            "kind": KIND,
            "name": "the compared name (blank: class-based dispatch)",
            "class": "the class picked",
            "module": "the module the branch imports the class from",
            "via": "what the branch compares",
            "owner": "the class owning a unified_parser_cls() method",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "signatures_v": {
        "description": "The parser contract as written: every module-level function and method with its "
        "parameters (name, kind, annotation, default), its return annotation and decorators, and "
        "every attribute a class body declares (what tpindex diff --contract and check-plugin read).",
        "facets": ["kind", "version"],
        "columns": {
            "kind": "function (module level), method (in a class body) or attribute (a class attribute)",
            "class": "the class (blank: module level)",
            "params": "JSON [[name, kind, annotation, default], ...]; kind positional-only, "
            "positional-or-keyword, var-positional, keyword-only or var-keyword",
            "returns": "the return annotation as written",
            "decorators": "JSON list of decorators",
            "annotation": "an attribute's annotation",
            "value": "an attribute's value as written",
            "line": "first line (its first decorator, if any)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "parser_calls_v": {
        "description": "Calls vLLM's own code makes on parser objects: constructions (method __init__: "
        "self.tool_parser(tokenizer), tool_parser_cls(tokenizer, request.tools)), method calls on a "
        "parser object, and super().method(...) calls (kind super).",
        "facets": ["kind", "method", "version"],
        "columns": {
            "kind": "tool, reasoning (what is called) or super",
            "callee": "the callee as written",
            "positional": "number of positional arguments",
            "keywords": "JSON list of keyword argument names",
            "star": "1: a *x argument",
            "dstar": "1: a **x argument",
            "args": "JSON list of the positional arguments as written",
            "function": "the enclosing function (Class.method)",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "version_files": {
        "description": "The in-scope files of each version, with the module each defines.",
        "facets": ["version", "parse_status"],
        "columns": {
            "unit_id": UNIT,
            "blob_id": "git blob id of the content (equal ids, equal bytes)",
            "parse_status": "ok, error (parsed with errors), not-parsed (templates and tests: recorded as present)",
            "version_ord": VERSION_ORD,
        },
        "sort_desc": "version_ord",
    },
    "tree_files_v": {
        "description": "Every file of each version indexed with --tree (docs, tests, examples, ...), with its "
        "content's blob id (equal ids, equal bytes).",
        "facets": ["version"],
        "columns": {"blob_id": "git blob id of the content", "version_ord": VERSION_ORD},
        "sort_desc": "version_ord",
    },
    "definitions_v": {
        "description": "Definitions of every module under vllm/ in versions indexed with --tree: classes, "
        "functions, methods and module-level names, with their lines (what tpindex where reads).",
        "facets": ["kind", "version"],
        "columns": {
            "kind": "class, function (module-level), method (a function in a class body) or name "
            "(assigned at module level)",
            "name": "the defined name",
            "qualname": "the qualified name in the module (Class.method)",
            "line": "first line of the definition (its first decorator, if any)",
            "end_line": "last line of the definition",
            "version_ord": VERSION_ORD,
        },
        **PER_VERSION_VIEW,
    },
    "parse_errors": {
        "description": "Files that parsed with syntax errors; their facts may be incomplete.",
        "facets": ["version"],
        "columns": {"first_error_line": "line of the first syntax error"},
    },
    # tables: the store
    "versions": {
        "description": "Indexed versions. Only status = complete versions appear in the views.",
        "label_column": "label",
        "sort": "ord",
        "facets": ["source", "status", "registry"],
        "columns": {
            "label": VERSION,
            "ref": "what was read: the git ref, the archive name or the directory",
            "commit_id": "git commit, or the archive's sha256",
            "source": "git, pypi or dir",
            "ord": "position in version order",
            "status": "building or complete",
            "registry": "found: parser names were recognised; none: no registry in scope",
            "file_count": "in-scope files",
            "scope": "the scope the version was indexed with",
            "extractor": "the extractor version that produced the facts",
        },
    },
    "meta": {"description": "Database settings: schema_version, upstream (the repository links point to)."},
    "blobs": {
        "description": "Unique file contents (git blob ids), each parsed once; facts are keyed by blob.",
        "label_column": "id",
        "facets": ["status"],
        "columns": {
            "status": "ok, error, not-parsed",
            "facts": "the raw facts, compressed",
            "extractor": "the extractor version that produced the facts",
        },
    },
    "units": {
        "description": "A blob at a path (the path decides the module).",
        "label_column": "path",
        "columns": {"module": "the dotted module the path defines"},
    },
    "files": {
        "description": "The files of each version: (version, path) -> unit.",
        "columns": {"unit_id": UNIT},
    },
    "parser_map": {
        "description": "Per version: each registered name resolved to its real class (see parser_map_v).",
        "facets": ["kind", "impl"],
        "columns": {"impl": IMPL, "kind": KIND, "form": FORM},
    },
    "parser_hops": {"description": "Per version: the hops of each name's chain (see parser_hops_v)."},
    "parser_methods": {"description": "Per version: contract methods as resolved (see parser_methods_v)."},
    "parser_attrs": {"description": "Per version: behaviour attributes as resolved (see parser_attrs_v)."},
    "parser_code": {"description": "Per version: the files holding each name's code (see parser_code_v)."},
    "parser_overridden": {
        "description": "Per version: overridden attributes of each name's classes (see parser_overridden_v)."
    },
    "class_sets": {
        "description": "What runs at class creation per unit (see class_sets_v).",
        "facets": ["via"],
        "columns": {"unit_id": UNIT},
    },
    "env_defaults": {
        "description": "Environment defaults per unit (see env_defaults_v).",
        "facets": ["how"],
        "columns": {"unit_id": UNIT},
    },
    "registrations": {
        "description": "Registrations per unit (see the registry view).",
        "facets": ["kind", "form"],
        "columns": {"unit_id": UNIT, "form": FORM},
    },
    "imports": {"description": "Imports per unit (see imports_v).", "columns": {"unit_id": UNIT}},
    "classes": {"description": "Classes per unit (see classes_v).", "columns": {"unit_id": UNIT}},
    "bases": {"description": "Bases per class per unit (see class_hierarchy).", "columns": {"unit_id": UNIT}},
    "methods": {"description": "Methods per unit (see methods_v).", "columns": {"unit_id": UNIT}},
    "class_attrs": {
        "description": "Class attributes per unit (see class_attrs_v).",
        "columns": {"unit_id": UNIT},
    },
    "markers": {
        "description": "Marker comments per unit (see markers_v). Searchable.",
        "facets": ["kind"],
        "fts_table": "markers_fts",
        "fts_pk": "id",
        "columns": {"unit_id": UNIT},
    },
    "markers_fts": {"description": "Full-text index over markers.text (external content)."},
    "plants": {
        "description": "Plants per unit (see plants_v).",
        "facets": ["plant"],
        "columns": {"unit_id": UNIT},
    },
    "adapter_bindings": {
        "description": "make_adapters() bindings per unit (see adapter_bindings_v).",
        "columns": {"unit_id": UNIT},
    },
    "sentinels": {
        "description": "Sentinels per unit (see sentinels_v).",
        "facets": ["how"],
        "columns": {"unit_id": UNIT},
    },
    "request_settings": {
        "description": "Request settings per unit (see request_settings_v).",
        "columns": {"unit_id": UNIT},
    },
    "regexes": {
        "description": "Regular expressions per unit (see regexes_v).",
        "facets": ["how"],
        "columns": {"unit_id": UNIT},
    },
    "self_attrs": {
        "description": "Instance attributes each method binds and reads, per unit (see self_attrs_v).",
        "facets": ["how"],
        "columns": {"unit_id": UNIT},
    },
    "uses": {
        "description": "Definitions and the names they read per unit (see uses_v).",
        "facets": ["what"],
        "columns": {"unit_id": UNIT},
    },
    "aliases": {
        "description": "Module-level aliases of classes (X = Y) per unit.",
        "columns": {"unit_id": UNIT},
    },
    "name_checks": {"description": "Name checks per unit (see name_checks_v).", "columns": {"unit_id": UNIT}},
    "signatures": {
        "description": "Signatures and class attributes per unit (see signatures_v).",
        "facets": ["kind"],
        "columns": {"unit_id": UNIT},
    },
    "parser_calls": {
        "description": "Calls on parser objects per unit (see parser_calls_v).",
        "facets": ["kind"],
        "columns": {"unit_id": UNIT},
    },
    "tree_paths": {
        "description": "Every path seen in a version's tree (build --tree), once.",
        "label_column": "path",
    },
    "tree_blobs": {
        "description": "File contents of the trees (build --tree): what is stored for each.",
        "label_column": "blob_id",
        "columns": {
            "defs": "extractor id of its rows in definitions (modules under vllm/)",
            "words": "1: its identifiers are in tree_words",
        },
    },
    "tree_files": {
        "description": "The whole tree of each version indexed with --tree: (version, path) -> content "
        "(see tree_files_v)."
    },
    "version_trees": {
        "description": "The versions indexed with --tree, with their numbers of files and of modules "
        "under vllm/."
    },
    "definitions": {"description": "Definitions per file content (see definitions_v).", "facets": ["kind"]},
    "tree_words": {
        "description": "Full-text index (contentless) of the identifiers each text file of a tree uses; "
        "an upper-case letter is stored as $ and its lower case. rowid = tree_blobs.id."
    },
    # history from a clone (build --repo; indexer/commits.py): read by log, contains, diff and the parser pages
    "commits": {
        "description": "Every commit in the history of a version indexed from a git clone, once. Those at and "
        "below the indexed versions' common base are listed only (parents null).",
        "label_column": "subject",
        "sort_desc": "date",
        "columns": {
            "parents": "the parents' ids (rowid), first parent first; null below the base",
            "date": "author date, ISO 8601",
            "pr": "the pull request its subject names",
        },
    },
    "commit_files": {
        "description": "The parsed in-scope paths each commit (above the base) touched, with the lines "
        "added and removed against its first parent.",
        "facets": ["path"],
        "columns": {"own": "a merge: 1 when the file differs from every parent too (its own change)"},
    },
    "history_tips": {
        "description": "The commits whose history a build walked (the indexed git versions' commits)."
    },
    # the behaviour atlas (issue 44): read through /-/atlas, the card and diff; written by tpindex atlas
    "atlas_v": {
        "description": "The behaviour atlas's cells per version: each (parser name, case, mode) as tpindex atlas "
        "ran it on a case made from the version's own files: ok, wrong, error or not-applicable (a case no source "
        "could make: one row, mode null). /-/atlas shows them as a matrix.",
        "facets": ["status", "mode", "case_id"],
        "columns": {
            "case_id": "single | parallel | no-args | nested | unicode | content-before | content-only | reasoning",
            "mode": "nonstream | stream:token | stream:char | serving-full | serving-stream",
            "status": "ok | wrong | error | not-applicable",
            "detail": "what differs, the error, or why not applicable",
            "transient": "1: a timeout or a killed worker, run again by the next tpindex atlas",
        },
    },
    "atlas_map": {
        "description": "Which cells each (version, parser name, case) of the behaviour atlas reads: the case's key "
        "and its two run keys (cells are stored by what determines them, so versions with the same code share "
        "them).",
        "columns": {
            "core_key": "the cells of nonstream and stream modes: the case, the name's code closure, its sentinels",
            "serving_key": "the cells of the serving modes: those and the serving code",
            "status": "not-applicable when no case could be made (detail: why)",
        },
    },
    "atlas_cells": {
        "description": "The behaviour atlas's cells by run key (see atlas_map): a mode's status, what differs, and "
        "its result (calls, content, reasoning, finish_reason, errors as JSON).",
        "facets": ["status", "mode"],
    },
    "atlas_cases": {
        "description": "The behaviour atlas's cases by key: where each comes from (a chat template rendered, a test "
        "file's literal, the writer), its raw output and the calls it must give.",
        "facets": ["case_id", "source"],
        "columns": {"note": "why the case is not its first source's (a template that cannot express it)"},
    },
    "atlas_literals": {
        "description": "The model-output literals of test files and the code blocks of documentation pages, read "
        "once per blob (never run) for the behaviour atlas's cases.",
        "columns": {"negative": "1: a name around it says the parser must not read it whole"},
    },
    "atlas_read": {
        "description": "The blobs whose literals atlas_literals holds, and by which reader.",
    },
    # the code (indexer/code.py): read through the source, diff and search pages, hidden from the table list
    "template_renders": {
        "description": "What each chat template (a blob) renders for one tool call, get_weather(city="
        '"Paris"), rendered by the build as apply_chat_template would; read by '
        "tpindex fit and the card.",
        "label_column": "blob_id",
        "columns": {
            "call": "the call markup: what the tool-call turn renders beyond a plain reply's turn",
            "reply": "the plain reply's part in the same place",
            "error": "why the template does not render (it is read as text only)",
            "notes": "JSON list: what it does not render",
        },
    },
    "doc_pages": {
        "description": "The documentation pages vLLM pairs model families with parsers in (tool_calling.md, "
        "reasoning_outputs.md), each content read once by the build; read by fit, which, the card and the serve "
        "line.",
        "label_column": "blob_id",
        "columns": {
            "kind": "tool (the tool-calling page's sections) or reasoning (the reasoning page's model table)",
            "reader": "the version of the reading (another is read again by the next build)",
            "facts": "JSON: the sections with their entries and flags, or the table's rows with their notes",
        },
    },
    "version_scopes": {
        "description": "The scope's patterns each version was indexed with (a digest): a version indexed with "
        "other patterns is indexed again by the next build.",
        "columns": {"patterns": "the digest of the scope's patterns"},
    },
    "code_texts": {
        "description": "The code of each parsed blob, stored once: its kind and its lines as an array of "
        "line ids (see /-/source/VERSION/PATH).",
        "hidden": True,
        "label_column": "blob_id",
        "columns": {
            "kind": "text, non-utf8 (invalid bytes read as U+FFFD) or binary",
            "lines": "32-bit little-endian line ids (code_lines)",
            "raw": "a binary blob's bytes, compressed",
            "final_newline": "1 when the last line ends with a newline",
        },
    },
    "code_lines": {
        "description": "Every distinct line of code once, in pages of consecutive line ids.",
        "hidden": True,
        "columns": {
            "first": "the id of the page's first line",
            "count": "lines in the page",
            "text": "the lines, joined by newlines",
        },
    },
    "code_postings": {
        "description": "Inverted index from each line id to its places, the code_texts rows and line "
        "numbers holding it (full-text, contentless: a blob's line ids as its tokens); the "
        "search page uses it.",
        "hidden": True,
    },
}


def database_metadata() -> dict:
    return {
        "description_html": DESCRIPTION_HTML,
        "tables": {name: dict(meta) for name, meta in TABLES.items()},
    }


def metadata(db_name: str, upstream: str | None = None) -> dict:
    """The metadata Datasette is started with; `upstream` (serve --upstream) wins over the database's own."""
    meta = {
        "title": TITLE,
        "description_html": DESCRIPTION_HTML,
        "source": "vLLM (tool-calling subsystem)",
        "source_url": "https://github.com/vllm-project/vllm",
        "databases": {db_name: database_metadata()},
    }
    if upstream:
        meta["plugins"] = {"tpindex": {"upstream": upstream}}
    return meta
