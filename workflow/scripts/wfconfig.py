"""Validation of the workflow configuration, before any job runs: short messages, one line each.

``workflow/rules/common.smk`` calls :func:`validate_config` on Snakemake's ``config`` (the
config files merged with ``--config`` overrides) and raises :class:`ConfigError` with
:func:`format_config_problems` of the lines it returns.  The checks, in order (the first stage
with a problem stops):

1. the JSON schema ``config/schema.yaml`` (:func:`config_problems`: every violation as one
   line naming the key path, the value and the constraint; an unknown key with the closest
   valid one);
2. filling in the schema's defaults (``fill_defaults``: Snakemake's ``validate`` in the
   workflow, :func:`fill_defaults` here);
3. what the schema cannot express (:func:`cross_check_problems`): bound names of the registry,
   bound options, budget profile specs and the profiles each experiment names
   (:func:`wfmanifest.profile_references`), and the experiments' own cross-key checks.

:func:`report_problems` checks, for ``snakemake --report``, that the configuration given is
the one that produced the results.

Importable without Snakemake (tests: ``tests/workflow/test_wfconfig.py``); no ``from
__future__`` import (the modules of workflow/scripts share the scripts' rule).
"""

import difflib
import math
import os
from collections.abc import Callable, Mapping

import jsonschema
import numpy as np
import yaml
from wfmanifest import EXPERIMENTS, experiment_config, figures, profile_references

import shuffledp
from shuffledp.errors import short_repr
from shuffledp.experiments.profiles import profile_from_spec
from shuffledp.families import get_family

__all__ = [
    "override_run",
    "underscore_problems",
    "MAX_CONFIG_PROBLEMS",
    "ConfigError",
    "load_schema",
    "coerce_numbers",
    "prepare_config",
    "key_path",
    "unknown_key_message",
    "schema_error_lines",
    "config_problems",
    "fill_defaults",
    "defaults_problems",
    "cross_check_problems",
    "validate_config",
    "format_config_problems",
    "first_difference",
    "report_problems",
]

MAX_CONFIG_PROBLEMS = 5  # config errors reported at once (one line each)


class ConfigError(ValueError):
    """An invalid configuration: a few lines, raised before any job runs."""


def load_schema(path: str | os.PathLike) -> dict:
    """The JSON schema of the configuration (YAML file)."""
    with open(path) as fh:
        return yaml.safe_load(fh)


def coerce_numbers(node):
    """`--config key={...}` values arrive as strings (Snakemake parses nested values with
    YAML's BaseLoader); turn numeric strings back into numbers before validation."""
    if isinstance(node, dict):
        return {k: coerce_numbers(v) for k, v in node.items()}
    if isinstance(node, list):
        return [coerce_numbers(v) for v in node]
    if isinstance(node, str):
        if "_" in node:  # Python reads '1_000' as 1000: a typo in a config value, kept text
            return node
        for parse in (int, float):
            try:
                return parse(node)
            except ValueError:
                pass
        if node in ("true", "True", "false", "False"):
            return node in ("true", "True")
    return node


def underscore_problems(argv) -> list[str]:
    """``--config`` items of the command line ``argv`` with a number written with underscores
    (``seed=1_000``): Snakemake reads a top-level value with Python's ``int``, which takes
    ``1_000`` for 1000, so the check reads the command line itself."""
    import re

    out, inside = [], False
    for arg in argv:
        if arg in ("--config", "-C"):
            inside = True
            continue
        if arg.startswith("-"):
            inside = False
            continue
        if not inside or "=" not in arg:
            continue
        key, _, value = arg.partition("=")
        if key.strip() == "run":  # a folder name, not a number ('2024_12' is a fine one)
            continue
        for token in re.findall(r"(?<![\w.])[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9_]+)?",
                                value):
            if "_" in token:
                out.append(f"config {key} = {value!r}: {token!r} is not a number (write it "
                           "without underscores)")
    return out


def prepare_config(config: dict) -> None:
    """In place: numbers from ``--config`` strings (:func:`coerce_numbers`), and a run folder
    named by a number (``run: 2024``, ``--config run=2024``) as a name, not a number."""
    config.update(coerce_numbers(dict(config)))
    if type(config.get("run")) is int:
        config["run"] = str(config["run"])


#: Longest run name config/schema.yaml accepts (its pattern ``^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$``).
_RUN_MAX = 64


def override_run(run: str, overrides: Mapping | None) -> str | None:
    """The results folder of a ``--config`` override that does not name its own ``run``.

    ``run``: the configuration's run (from the config files); ``overrides``: the ``--config``
    key/value pairs alone.  None when there is nothing to keep apart (no override, or the
    override sets ``run`` itself, e.g. ``run=quick`` to overwrite on purpose).  Otherwise
    ``<run>-<keys>-<hash>``: the overridden top-level keys (sorted, joined by ``-``) and the
    first 8 hex digits of a SHA-256 of the override's canonical JSON, so the same override
    always lands in the same folder (its report finds it) and different overrides never share
    one; cut to the 64 characters a run name may have.
    """
    import hashlib
    import json
    import re

    if not overrides or "run" in overrides:
        return None
    canon = json.dumps(overrides, sort_keys=True, default=repr, separators=(",", ":"))
    digest = hashlib.sha256(canon.encode()).hexdigest()[:8]
    keys = re.sub(r"[^A-Za-z0-9_-]+", "_", "-".join(sorted(map(str, overrides))))
    room = _RUN_MAX - len(run) - len(digest) - 2
    keys = keys[:room].rstrip("-_") if room > 0 else ""
    name = f"{run}-{keys}-{digest}" if keys else f"{run}-{digest}"
    return name[-_RUN_MAX:] if len(name) > _RUN_MAX else name


def key_path(path) -> str:
    """'bounds_vs_n.n[0]', "profiles['uniform_0.5_2'].low" for a jsonschema path."""
    out = ""
    for key in path:
        if isinstance(key, int):
            out += f"[{key}]"
        elif str(key).isidentifier():
            out += f".{key}" if out else str(key)
        else:
            out += f"[{key!r}]"
    return out


def _where(path) -> str:
    return f"config {key_path(path)}" if path else "config"


def unknown_key_message(path, key, valid) -> str:
    """One line for an unknown key, with the closest valid one (difflib)."""
    valid = sorted(valid)
    close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(valid)}"
    return f"{_where(path)}: unknown key {short_repr(key)}; {hint}"


def _summary(sub) -> str:
    """A few words for a schema alternative (oneOf / anyOf)."""
    if "const" in sub:
        return repr(sub["const"])
    if "enum" in sub:
        return f"one of {short_repr(sub['enum'])}"
    kind = sub.get("type", "a value")
    if kind == "array" and isinstance(sub.get("items"), dict):
        return f"a list of {sub['items'].get('type', 'item')}s"
    return f"a {kind}" if isinstance(kind, str) else f"one of the types {kind}"


_BOUNDS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}


def schema_error_lines(error: jsonschema.ValidationError) -> list[str]:
    """Short lines for a jsonschema ValidationError: key path, value, constraint."""
    path, value, keyword, limit = (
        list(error.absolute_path),
        error.instance,
        error.validator,
        error.validator_value,
    )
    if keyword in ("oneOf", "anyOf"):
        # a list that would match but for a repeated entry: say that, not the alternatives
        repeats = [e for e in (error.context or []) if e.validator == "uniqueItems"]
        if repeats:
            return schema_error_lines(repeats[0])
    if keyword == "additionalProperties" and limit is False and isinstance(value, dict):
        props = error.schema.get("properties", {})
        return [unknown_key_message(path, key, props) for key in value if key not in props]
    if keyword in _BOUNDS:
        constraint = f"must be {_BOUNDS[keyword]} {limit:g}"
    elif keyword == "type":
        constraint = f"must be of type {limit if isinstance(limit, str) else ' or '.join(limit)}"
    elif keyword == "enum":
        constraint = f"must be one of {', '.join(repr(v) for v in limit)}"
    elif keyword == "const":
        constraint = f"must be {limit!r}"
    elif keyword in ("oneOf", "anyOf"):
        constraint = f"must be {' or '.join(_summary(sub) for sub in limit)}"
    elif keyword == "uniqueItems":
        seen, dup = [], None
        for v in value:
            if any(v == w for w in seen):
                dup = v
                break
            seen.append(v)
        constraint = f"must not repeat an entry (repeated: {short_repr(dup)})"
    elif keyword == "minItems":
        constraint = f"must have at least {limit} item(s)"
    elif keyword == "maxItems":
        constraint = f"must have at most {limit} item(s)"
    elif keyword == "pattern":
        # a schema may say in words what its pattern means (x-hint, e.g. the run folder)
        hint = error.schema.get("x-hint")
        constraint = f"must be {hint} (schema: pattern)" if hint else f"must match {limit!r}"
    elif keyword == "required":
        missing = [k for k in limit if k not in value]
        return [f"{_where(path)}: missing required key(s) {', '.join(missing)}"]
    else:
        constraint = f"must satisfy {keyword} {short_repr(limit)}"
    # name the schema keyword of a numeric limit (minimum, exclusiveMaximum, ...)
    named = f" (schema: {keyword} {limit:g})" if keyword in _BOUNDS else ""
    return [f"{_where(path)} = {short_repr(value)}: {constraint}{named}"]


def fmt_num(x) -> str:
    """Lossless text of a number for file names: an integral value as an integer (``1.0`` ->
    ``'1'``), any other as the shortest text that reads back to the same float (``repr``).

    >>> [fmt_num(v) for v in (1.0, 0.25, 1e-06, 0.1234567, 1.0000001, 4)]
    ['1', '0.25', '1e-06', '0.1234567', '1.0000001', '4']
    """
    v = float(x)
    if math.isfinite(v) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def value_problems(node, path=()) -> list[str]:
    """Numbers that no key accepts, one line each: NaN and infinities (JSON Schema's range
    comparisons are all false for NaN, so ``minimum`` would let it through)."""
    if isinstance(node, Mapping):
        return [ln for k, v in node.items() for ln in value_problems(v, (*path, k))]
    if isinstance(node, list):
        return [ln for i, v in enumerate(node) for ln in value_problems(v, (*path, i))]
    if isinstance(node, float) and not math.isfinite(node):
        return [f"{_where(list(path))} = {node!r}: must be a finite number"]
    return []


def _is_integer(checker, instance) -> bool:
    """JSON Schema's integer, strictly: a Python int, not a float with an integral value
    (``n: [1000.0]``, ``--config seed=1e3``) that later code would refuse mid-run."""
    return isinstance(instance, int) and not isinstance(instance, bool)


_STRICT = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


def strict_schema(schema: Mapping) -> dict:
    """The schema with ``uniqueItems: true`` on every array of numbers or strings (grids and
    name lists: a repeated entry would compute and draw the same rows twice)."""
    import copy

    out = copy.deepcopy(dict(schema))

    def walk(node):
        if isinstance(node, dict):
            items = node.get("items")
            if (node.get("type") == "array" and isinstance(items, dict)
                    and (items.get("type") in ("number", "integer", "string")
                         or "enum" in items)):
                node.setdefault("uniqueItems", True)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(out)
    return out


def config_problems(cfg: Mapping, schema: Mapping) -> list[str]:
    """Every violation of the JSON schema, one short line each (integers strictly, scalar
    lists without repeats: :func:`strict_schema`)."""
    validator = _STRICT(strict_schema(schema))
    errors = sorted(validator.iter_errors(cfg), key=lambda e: [str(p) for p in e.absolute_path])
    lines: list[str] = []
    for err in errors:
        lines += [ln for ln in schema_error_lines(err) if ln not in lines]
    return lines


def fill_defaults(cfg: dict, schema: Mapping) -> None:
    """In place: the schema's defaults for every missing key, at every level (as Snakemake's
    ``validate(config, schema, set_default=True)``); raises jsonschema.ValidationError."""
    base = jsonschema.Draft202012Validator
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, sub):
        for prop, subschema in properties.items():
            if "default" in subschema:
                instance.setdefault(prop, subschema["default"])
        yield from validate_properties(validator, properties, instance, sub)

    jsonschema.validators.extend(base, {"properties": set_defaults})(schema).validate(cfg)


def defaults_problems(err: BaseException) -> list[str]:
    """Lines for a failure of filling in the defaults (a default that breaks the schema): the
    schema error it was caused by, else the first two lines of its message."""
    cause = err if isinstance(err, jsonschema.ValidationError) else (
        err.__cause__ or err.__context__)
    if isinstance(cause, jsonschema.ValidationError):
        return schema_error_lines(cause)
    return [ln[:200] for ln in str(err).splitlines()[:2]]


def _unknown_names(where, names, known, what) -> list[str]:
    """Lines for names not in ``known`` (bounds, profiles, options), closest match each."""
    lines = []
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.6)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else f"known: {', '.join(sorted(known)) or 'none'}"
            )
            lines.append(f"config {where}: {what} {short_repr(name)}; {hint}")
    return lines


def _option_value_problems(where: str, name: str, opts: Mapping) -> list[str]:
    """A bound's options checked as its evaluation checks them (values and types), on a
    plain profile: a bad value is refused before any job runs."""
    known = shuffledp.get_bound(name).info.options
    opts = {k: v for k, v in opts.items() if k in known}  # unknown names: reported above
    try:
        shuffledp.get_bound(name).prepare(
            shuffledp.BudgetProfile.identical(n=1000, eps0=1.0), **opts)
    except shuffledp.ParameterRegimeError:
        pass  # a regime question of the profile, not of the options
    except (TypeError, ValueError) as err:
        return [f"config {where}: {' '.join(str(err).split())}"]
    return []


def _csv_column_problems(where: str, path: str, column: str) -> list[str]:
    """The user's data file exists and its header names ``column`` (the jobs read it)."""
    import csv

    if not path:
        return [f"config {where}.csv_path: empty, but distribution csv reads a file"]
    if not os.path.isfile(path):
        return [f"config {where}.csv_path = {path!r}: no such file"]
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        return [f"config {where}.csv_path = {path!r}: cannot read its header ({err})"]
    if column not in [h.strip() for h in header]:
        return [f"config {where}.column = {column!r}: not a column of {path} (its header: "
                f"{short_repr(header)})"]
    return []


def cross_check_problems(cfg: Mapping) -> list[str]:
    """Cross-checks the JSON schema cannot express (registry names, profile references);
    ``cfg`` has its defaults filled in."""
    known = shuffledp.list_bounds()
    lines = []
    if cfg["methods"] != "all":
        lines += _unknown_names("methods", cfg["methods"], known, "unknown bound")
    for section in ("mean_estimation", "frequency_estimation"):
        sec = cfg.get(section, {})
        if sec.get("methods", "all") != "all":
            lines += _unknown_names(f"{section}.methods", sec["methods"], known, "unknown bound")
        for name, opts in sec.get("bound_options", {}).items():
            if name not in known:
                lines += _unknown_names(f"{section}.bound_options", [name], known,
                                        "unknown bound")
                continue
            accepted = shuffledp.get_bound(name).info.options
            lines += _unknown_names(f"{section}.bound_options.{name}", opts, accepted,
                                    "unknown option")
            lines += _option_value_problems(f"{section}.bound_options.{name}", name, opts)
    for section in ("mean_estimation", "frequency_estimation"):
        data = cfg.get(section, {}).get("data", {})
        if data.get("distribution") == "csv":
            lines += _csv_column_problems(f"{section}.data", data.get("csv_path", ""),
                                          data.get("column", ""))
    if cfg["sgd"].get("dataset") == "mnist":
        path = cfg["sgd"].get("mnist_path", "")
        if not path or not os.path.exists(path):
            lines.append(f"config sgd.mnist_path = {path!r}: no such file or directory (the "
                         "MNIST files sgd.dataset = mnist reads)")
    rng = np.random.default_rng(0)
    if "identical" in cfg["profiles"]:
        lines.append("config profiles.identical: the name 'identical' is reserved (the "
                     "experiments' identical-budget runs); give the profile another name")
    for name, spec in cfg["profiles"].items():
        try:
            profile_from_spec(spec, n=10, rng=rng)
        except (KeyError, TypeError, ValueError) as err:
            text = str(err).splitlines()[0] if str(err) else type(err).__name__
            text = text if len(text) <= 160 else f"{text[:150]}..."
            lines.append(f"config {key_path(['profiles', name])}: {text}")
    defined = cfg["profiles"]
    # the profiles each experiment names (wfmanifest: Experiment.profiles)
    for where, name in profile_references(cfg):
        lines += _unknown_names(where, [name], defined, "undefined profile")
    if "gaussian" in cfg["sgd"].get("randomizers", []):
        for name in cfg["sgd"].get("profiles", []):
            groups = cfg["profiles"].get(name, {}).get("groups", [])
            if any(len(g) > 2 and g[2] == 0 for g in groups):
                lines.append(
                    f"config profiles.{name}: a group with delta 0 cannot run the sgd "
                    "gaussian randomizer (it needs every delta_i > 0; omit the group's "
                    "delta to use sgd.delta0)"
                )
    bad_table_n = sorted(set(cfg["personalized"]["table_n"]) - set(cfg["personalized"]["n"]))
    if bad_table_n:
        lines.append(f"config personalized.table_n {bad_table_n} not in personalized.n")
    for section in ("mean_estimation", "frequency_estimation"):
        sec = cfg.get(section, {})
        main = sec.get("main_mechanism", "")
        if main and main not in sec.get("mechanisms", []):
            lines.append(f"config {section}.main_mechanism {main!r} not in {section}.mechanisms")
    val = cfg["personalized_validity"]
    for i, spec in enumerate(val["randomizers"]):
        try:
            fam = get_family(spec)
            if not fam.provides("cell_masses"):
                raise ValueError(f"no window lower bound for {fam}")
        except (TypeError, ValueError) as err:
            lines.append(f"config personalized_validity.randomizers[{i}] = {spec!r}: {err}")
    for i, spec in enumerate(val.get("main_randomizers", [])):
        try:
            get_family(spec)
        except (TypeError, ValueError) as err:
            lines.append(
                f"config personalized_validity.main_randomizers[{i}] = {spec!r}: {err}"
            )
    lines += _unknown_names(
        "personalized.main_profiles",
        cfg["personalized"].get("main_profiles", []),
        defined,
        "undefined profile",
    )
    return lines


def validate_config(
    cfg: dict,
    schema: Mapping,
    *,
    fill: Callable[[dict], None] | None = None,
    fill_errors: tuple[type[BaseException], ...] = (jsonschema.ValidationError,),
) -> list[str]:
    """Validate and complete ``cfg`` in place; the problem lines of the first stage that has
    any (empty: valid).  Stages: :func:`prepare_config`, :func:`config_problems`, ``fill``
    (default :func:`fill_defaults` with ``schema``; its ``fill_errors`` become
    :func:`defaults_problems`), :func:`cross_check_problems`."""
    prepare_config(cfg)
    problems = value_problems(cfg) or config_problems(cfg, schema)
    if problems:
        return problems
    try:
        if fill is None:
            fill_defaults(cfg, schema)
        else:
            fill(cfg)
    except fill_errors as err:
        return defaults_problems(err)
    return cross_check_problems(cfg)


def format_config_problems(lines: list[str]) -> str:
    """The message of a ConfigError: at most MAX_CONFIG_PROBLEMS lines and a pointer."""
    shown = lines[:MAX_CONFIG_PROBLEMS]
    if len(lines) > len(shown):
        shown.append(f"... and {len(lines) - len(shown)} more")
    shown.append("(every key is documented in config/schema.yaml)")
    return "\n".join(shown)


# --- snakemake --report: the configuration given is the one that produced the results -------


def first_difference(old, new, where=""):
    """'bounds_vs_n.delta: 1e-06 there, 1e-05 now' for the first differing key, or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            sub = f"{where}.{key}" if where else str(key)
            if key not in old or key not in new:
                return f"{sub} {'missing there' if key not in old else 'missing now'}"
            diff = first_difference(old[key], new[key], sub)
            if diff:
                return diff
        return None
    if old != new:
        return f"{where}: {short_repr(old)} there, {short_repr(new)} now"
    return None


def report_problems(cfg: Mapping, *, run: str, results: str) -> list[str]:
    """For `snakemake --report`: the figure captions are rendered from the configuration
    given to --report, so it must be the one that produced the figures.  One line per
    experiment whose written configuration (``<results>/config_used/<name>.yaml``) differs,
    or whose figures are older than it.
    """
    lines = []
    for exp in EXPERIMENTS:
        name = exp.name
        path = f"{results}/config_used/{name}.yaml"
        if not os.path.exists(path):
            continue
        with open(path) as fh:
            written = yaml.safe_load(fh)
        now = yaml.safe_load(yaml.safe_dump(experiment_config(exp, cfg, run=run),
                                            sort_keys=True))
        diff = first_difference(written, now)
        if diff:
            lines.append(
                f"{path} was written by another configuration ({diff}): rerun "
                f"`snakemake --cores all {name}` with this configuration first, or give "
                "--report the --configfile/--config that produced it"
            )
            continue
        stale = [
            f
            for f in (f"{results}/{p}" for p in figures(exp))
            if os.path.exists(f) and os.path.getmtime(f) < os.path.getmtime(path)
        ]
        if stale:
            lines.append(
                f"{stale[0]} is older than its configuration {path}: rerun "
                f"`snakemake --cores all {name}` first"
            )
    return lines
