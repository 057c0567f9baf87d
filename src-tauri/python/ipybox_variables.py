# The kernel's variables and data frames as ipybox shows them: its Variables tab and data grid.
# ipybox installs this file as the module `ipybox_variables` when a kernel starts, and asks it
# with a silent request of its own (an empty cell with a user expression, on a subshell where
# the kernel has them): nothing runs in the user's namespace, no execution count changes.
#
# Everything read here belongs to user code and is untrusted. Code of the user's own classes
# (a `__repr__`, `__len__`, `__sizeof__`, a `shape` property) is never called: only types of
# the standard library, numpy, pandas and polars are asked for more than their name, and then
# within a time budget. What goes back to ipybox is JSON text; ipybox shows it as text.
import json
import sys
import time
import types

# Packages whose types may be asked for their length, size and repr.
_TRUSTED = frozenset(
    {"builtins", "collections", "datetime", "decimal", "fractions", "numpy", "pandas", "pathlib", "polars", "uuid"}
)
# The generated tool API (ipybox's own modules), not the user's data.
_GENERATED = frozenset({"mcptools", "gentools"})
_REPR_CHARS = 160
_MAX_VARIABLES = 2000
# Past this, the remaining variables are listed without size and repr.
_BUDGET_SECONDS = 0.25
_CELL_CHARS = 200
_MAX_PAGE = 1000

_type_name = type.__dict__["__name__"].__get__
_type_module = type.__dict__["__module__"].__get__


class _Json:
    """A value whose text/plain form is its JSON (what the user expression hands back)."""

    __slots__ = ("text",)

    def __init__(self, value):
        self.text = json.dumps(value, ensure_ascii=False, allow_nan=False)

    def __repr__(self):
        return self.text


def _module_of(t):
    try:
        module = _type_module(t, type)
    except Exception:
        return ""
    return module if type(module) is str else ""


def _trusted(t):
    return _module_of(t).partition(".")[0] in _TRUSTED


def _name_of(t):
    try:
        name = _type_name(t, type)
    except Exception:
        return "object"
    return name if type(name) is str else "object"


def _opaque(t):
    module = _module_of(t)
    prefix = f"{module}." if module and module != "builtins" else ""
    return f"<{prefix}{_name_of(t)} object>"


def _one_line(text, limit=_REPR_CHARS):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pandas():
    return sys.modules.get("pandas")


def _polars():
    return sys.modules.get("polars")


def _numpy():
    return sys.modules.get("numpy")


def _is(t, module, attr):
    """Is `t` (a subclass of) `module.attr`, without importing `module` nor calling user code?"""
    m = sys.modules.get(module)
    cls = getattr(m, attr, None) if m is not None else None
    return isinstance(cls, type) and issubclass(t, cls)


def _frame_kind(t):
    if not _trusted(t):
        return None
    if _is(t, "pandas", "DataFrame"):
        return "pandas"
    if _is(t, "polars", "DataFrame"):
        return "polars"
    return None


def _short(value, depth=0):
    """A bounded repr: containers show their first items; user-defined types only their name."""
    t = type(value)
    if t in (int, bool) or value is None:
        return repr(value) if t is not int or value.bit_length() <= 256 else f"<int of {value.bit_length()} bits>"
    if t in (float, complex):
        return repr(value)
    if t is str:
        return repr(value[:_REPR_CHARS]) + ("…" if len(value) > _REPR_CHARS else "")
    if t in (bytes, bytearray):
        return repr(bytes(value[:_REPR_CHARS])) + ("…" if len(value) > _REPR_CHARS else "")
    if t in (list, tuple, set, frozenset, dict):
        if depth >= 2:
            return "[…]" if t is list else "(…)" if t is tuple else "{…}"
        items = []
        for index, item in enumerate(value.items() if t is dict else value):
            if index >= 8:
                items.append("…")
                break
            if t is dict:
                items.append(f"{_short(item[0], depth + 1)}: {_short(item[1], depth + 1)}")
            else:
                items.append(_short(item, depth + 1))
        inner = ", ".join(items)
        if t is list:
            return f"[{inner}]"
        if t is tuple:
            return f"({inner}{',' if len(value) == 1 else ''})"
        if t is dict or inner:
            return "{" + inner + "}" if t in (dict, set) else f"frozenset({{{inner}}})"
        return "set()" if t is set else "frozenset()"
    if not _trusted(t):
        return _opaque(t)
    numpy = _numpy()
    if numpy is not None and issubclass(t, numpy.ndarray):
        if value.dtype.kind == "O":
            return f"array of {value.size} objects"
        head = [_short(v.item() if hasattr(v, "item") else v, depth + 1) for v in value.flat[:8]]
        return f"array([{', '.join(head)}{', …' if value.size > 8 else ''}], dtype={value.dtype})"
    if _is(t, "pandas", "DataFrame") or _is(t, "polars", "DataFrame"):
        return "columns: " + ", ".join(_label(c) for c in list(value.columns[:12])) + (", …" if len(value.columns) > 12 else "")
    if _is(t, "pandas", "Series"):
        head = [_short(v, depth + 1) for v in value.iloc[:8].tolist()]
        return f"[{', '.join(head)}{', …' if len(value) > 8 else ''}]"
    if _is(t, "polars", "Series"):
        head = [_short(v, depth + 1) for v in value.head(8).to_list()]
        return f"[{', '.join(head)}{', …' if len(value) > 8 else ''}]"
    return repr(value)


def _label(label):
    return label if type(label) is str else _short(label, 1)


def _shape(value, t):
    """(shape, length) where cheap and the type is trusted."""
    if not _trusted(t):
        return None, None
    numpy = _numpy()
    if (numpy is not None and issubclass(t, numpy.ndarray)) or _frame_kind(t) or _is(t, "pandas", "Series"):
        return [int(n) for n in value.shape], None
    if _is(t, "polars", "Series"):
        return None, len(value)
    if t in (str, bytes, bytearray, list, tuple, set, frozenset, dict, range) or (
        _trusted(t) and issubclass(t, (list, tuple, set, frozenset, dict))
    ):
        return None, len(value)
    return None, None


def _size(value, t):
    """Bytes held, where that is cheap to know (shallow for Python containers)."""
    if not _trusted(t):
        return None
    numpy = _numpy()
    if numpy is not None and issubclass(t, numpy.ndarray):
        return int(value.nbytes)
    if _is(t, "pandas", "DataFrame"):
        # What `memory_usage(deep=False).sum()` says, without building two Series per frame
        # (a millisecond each, the bulk of a listing).
        try:
            return sum(int(b.values.nbytes) for b in value._mgr.blocks) + int(value.index.nbytes)
        except Exception:
            return int(value.memory_usage(index=True, deep=False).sum())
    if _is(t, "pandas", "Series"):
        return int(value.nbytes) + int(value.index.nbytes)
    if _is(t, "polars", "DataFrame") or _is(t, "polars", "Series"):
        return int(value.estimated_size())
    if _trusted(t):
        return int(sys.getsizeof(value))
    return None


def _describe(name, value, detailed):
    t = type(value)
    entry = {"name": name, "type": _name_of(t)}
    module = _module_of(t)
    if module and module.partition(".")[0] not in ("builtins",):
        entry["module"] = module
    kind = _frame_kind(t)
    if kind:
        entry["frame"] = kind
    if not detailed:
        return entry
    for key, get in (("shape", lambda: _shape(value, t)), ("size", lambda: _size(value, t)), ("repr", lambda: _short(value))):
        try:
            got = get()
        except Exception:
            continue
        if key == "shape":
            shape, length = got
            if shape is not None:
                entry["shape"] = shape
            if length is not None:
                entry["length"] = int(length)
        elif got is not None:
            entry[key] = _one_line(got) if key == "repr" else got
    return entry


def _generated(value):
    """A function, class or module of the generated tool API."""
    t = type(value)
    if t is types.FunctionType:
        module = value.__module__
    elif issubclass(t, type):
        module = _module_of(value)
    else:
        return False
    return type(module) is str and module.partition(".")[0] in _GENERATED


def _user_namespace():
    shell = sys.modules["IPython"].get_ipython()
    return shell.user_ns, shell.user_ns_hidden


def listing():
    """The user's variables: name, type, shape or length, size, a one-line repr."""
    ns, hidden = _user_namespace()
    missing = object()
    start = time.perf_counter()
    out = []
    more = 0
    for name, value in list(ns.items()):
        if type(name) is not str or name.startswith("_") or hidden.get(name, missing) is value:
            continue
        # `type()`, never `isinstance()`: that may ask the value for its `__class__`.
        if issubclass(type(value), types.ModuleType) or _generated(value):
            continue
        if len(out) >= _MAX_VARIABLES:
            more += 1
            continue
        out.append(_describe(name, value, time.perf_counter() - start < _BUDGET_SECONDS))
    out.sort(key=lambda v: v["name"].casefold())
    return _Json({"variables": out, "more": more})


# ---- the data grid: pages of a frame, sorted and filtered here, in the kernel

# The last sorted or filtered view: (frame id, shape, sort and filters) -> row positions. A
# page of it is then a `take`, however large the frame.
_view = {"key": None, "rows": None}
_nulls = {"key": None, "counts": None}


class FrameError(Exception):
    pass


def _frame(name):
    ns, _ = _user_namespace()
    if name not in ns:
        raise FrameError(f"there is no variable named {name!r}")
    value = ns[name]
    kind = _frame_kind(type(value))
    if kind is None:
        raise FrameError(f"{name!r} is a {_name_of(type(value))}, not a data frame")
    return value, kind


def _pd_filter_mask(df, spec):
    pd = _pandas()
    column = df.iloc[:, spec["column"]]
    op, text = spec["op"], spec.get("value", "")
    if op == "null":
        return column.isna()
    if op == "notnull":
        return column.notna()
    if op in ("contains", "startswith", "endswith"):
        strings = column if _pandas().api.types.is_string_dtype(column.dtype) else column.astype("string")
        method = getattr(strings.str, op)
        return method(text, **({"regex": False} if op == "contains" else {})).fillna(False).astype(bool)
    value = _typed_value(column, text)
    compare = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}.get(op)
    if compare is None:
        raise FrameError(f"unknown filter {op!r}")
    mask = getattr(column, compare)(value)
    return mask.fillna(False).astype(bool) if pd is not None else mask


def _typed_value(column, text):
    """The filter's text as a value of the column's type."""
    pd = _pandas()
    dtype = column.dtype
    kind = getattr(dtype, "kind", "O")
    try:
        if kind == "b":
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0"):
                raise ValueError
            return lowered in ("true", "1")
        if kind in "iu":
            number = float(text)
            return int(number) if number.is_integer() else number
        if kind in "fc":
            return float(text)
        if kind in "mM":
            return pd.Timestamp(text) if kind == "M" else pd.Timedelta(text)
    except (ValueError, TypeError):
        raise FrameError(f"{text!r} is not a value of this column's type ({dtype})") from None
    return text


def _literal(value):
    if isinstance(value, (bool, int, float, str)):
        return repr(value)
    return f"pd.{type(value).__name__}({str(value)!r})"


def _column_code(df, name, index):
    label = df.columns[index]
    if type(label) in (str, int) and list(df.columns).count(label) == 1:
        return f"{name}[{label!r}]"
    return f"{name}.iloc[:, {index}]"


def _pandas_code(df, name, sort, filters):
    parts = []
    for spec in filters:
        column = _column_code(df, name, spec["column"])
        op, text = spec["op"], spec.get("value", "")
        if op == "null":
            parts.append(f"{column}.isna()")
        elif op == "notnull":
            parts.append(f"{column}.notna()")
        elif op == "contains":
            parts.append(f"{column}.astype('string').str.contains({text!r}, regex=False).fillna(False)")
        elif op in ("startswith", "endswith"):
            parts.append(f"{column}.astype('string').str.{op}({text!r}).fillna(False)")
        else:
            symbol = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
            parts.append(f"({column} {symbol} {_literal(_typed_value(df.iloc[:, spec['column']], text))})")
    code = name
    if parts:
        code = f"{name}[{' & '.join(parts)}]" if len(parts) == 1 else f"{name}[({') & ('.join(parts)})]"
    if sort:
        if not df.columns.duplicated().any():
            # A label other than a name or number (a tuple of a MultiIndex, a date) by position.
            by = ", ".join(
                repr(df.columns[s["column"]]) if type(df.columns[s["column"]]) in (str, int) else f"{name}.columns[{s['column']}]"
                for s in sort
            )
            ascending = ", ".join(str(bool(s["ascending"])) for s in sort)
            code += f".sort_values([{by}], ascending=[{ascending}])"
        else:
            positions = ", ".join(str(s["column"]) for s in sort)
            code += f"  # sorted by the columns at positions {positions} (their labels repeat)"
    return code


def _pandas_rows(df, sort, filters):
    numpy = _numpy()
    positions = None
    if filters:
        mask = None
        for spec in filters:
            m = _pd_filter_mask(df, spec)
            mask = m if mask is None else mask & m
        positions = numpy.flatnonzero(mask.to_numpy())
    if sort:
        frame = df if positions is None else df.iloc[positions]
        keys = [frame.iloc[:, s["column"]].reset_index(drop=True) for s in sort]
        order = _sort_order(keys, [bool(s["ascending"]) for s in sort])
        positions = order if positions is None else positions[order]
    return positions


def _sort_order(keys, ascending):
    """Row order of `keys` (Series indexed 0..n), stable, missing values last, as pandas sorts."""
    numpy = _numpy()
    if len(keys) == 1:
        values = keys[0].to_numpy()
        if values.dtype.kind in "biufmM":
            if ascending[0]:
                return numpy.argsort(values, kind="stable")
            # Stable and descending: the ascending order of the rows reversed, read backwards;
            # missing values, then first, go last again.
            backwards = numpy.argsort(values[::-1], kind="stable")
            order = (len(values) - 1 - backwards)[::-1]
            missing = int(keys[0].isna().sum())
            return numpy.concatenate([order[missing:], order[:missing]]) if missing else order
    frame = _pandas().DataFrame(dict(enumerate(keys)), copy=False)
    by = list(range(len(keys)))
    return frame.sort_values(by, ascending=ascending, kind="stable", na_position="last").index.to_numpy()


def _cell(value):
    pd = _pandas()
    try:
        if value is None or (pd is not None and pd.api.types.is_scalar(value) and pd.isna(value)):
            return None
    except (TypeError, ValueError):
        pass
    t = type(value)
    if t is str:
        text = value
    elif t is float:
        text = repr(value)
    elif _trusted(t) and t not in (list, tuple, dict, set, frozenset):
        text = str(value)
    else:
        text = _short(value)
    return text if len(text) <= _CELL_CHARS else text[: _CELL_CHARS - 1] + "…"


def _pandas_page(df, name, offset, limit, sort, filters, nulls):
    key = (id(df), df.shape, json.dumps(sort), json.dumps(filters))
    if sort or filters:
        if _view["key"] != key:
            _view["rows"] = _pandas_rows(df, sort, filters)
            _view["key"] = key
        positions = _view["rows"]
        rows = len(positions)
        page = df.iloc[positions[offset : offset + limit]]
    else:
        rows = len(df)
        page = df.iloc[offset : offset + limit]
    # Null counts read every row: asked for after the first page is shown, then kept.
    null_key = (id(df), df.shape)
    if nulls and _nulls["key"] != null_key:
        _nulls["counts"] = [int(n) for n in df.isna().sum().tolist()]
        _nulls["key"] = null_key
    counts = _nulls["counts"] if _nulls["key"] == null_key else [None] * df.shape[1]
    columns = [
        {"name": _label(label), "type": str(dtype), "nulls": count}
        for label, dtype, count in zip(df.columns, df.dtypes, counts)
    ]
    cells = [[_cell(v) for v in page.iloc[:, j].tolist()] for j in range(page.shape[1])]
    return {
        "name": name,
        "kind": "pandas",
        "totalRows": len(df),
        "rows": int(rows),
        "offset": offset,
        "columns": columns,
        "index": [_cell(v) for v in page.index.tolist()],
        "cells": [list(row) for row in zip(*cells)] if cells else [[] for _ in range(len(page))],
        "code": _pandas_code(df, name, sort, filters),
    }


def _polars_value(dtype, text):
    """The filter's text as a value of a polars column's type."""
    try:
        if dtype.is_integer():
            number = float(text)
            return int(number) if number.is_integer() else number
        if dtype.is_float():
            return float(text)
        if dtype == _polars().Boolean:
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0"):
                raise ValueError
            return lowered in ("true", "1")
    except (ValueError, TypeError):
        raise FrameError(f"{text!r} is not a value of this column's type ({dtype})") from None
    return text


def _polars_page(df, name, offset, limit, sort, filters, nulls):
    pl = _polars()
    exprs, codes = [], []
    for spec in filters:
        label = df.columns[spec["column"]]
        column, ref = pl.col(label), f"pl.col({label!r})"
        op, text = spec["op"], spec.get("value", "")
        if op == "null":
            exprs.append(column.is_null())
            codes.append(f"{ref}.is_null()")
        elif op == "notnull":
            exprs.append(column.is_not_null())
            codes.append(f"{ref}.is_not_null()")
        elif op in ("contains", "startswith", "endswith"):
            strings = column.cast(pl.Utf8).str
            if op == "contains":
                exprs.append(strings.contains(text, literal=True))
                codes.append(f"{ref}.cast(pl.Utf8).str.contains({text!r}, literal=True)")
            else:
                method = "starts_with" if op == "startswith" else "ends_with"
                exprs.append(getattr(strings, method)(text))
                codes.append(f"{ref}.cast(pl.Utf8).str.{method}({text!r})")
        else:
            value = _polars_value(df.schema[label], text)
            symbol = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}.get(op)
            if symbol is None:
                raise FrameError(f"unknown filter {op!r}")
            method = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}[op]
            exprs.append(getattr(column, method)(value))
            codes.append(f"({ref} {symbol} {value!r})")
    # Row positions of the frame, kept through the sort and filter, label each row.
    row = "__ipybox_row"
    while row in df.columns:
        row += "_"
    view = df.with_row_index(row)
    if exprs:
        view = view.filter(exprs)
    labels = [df.columns[s["column"]] for s in sort]
    descending = [not s["ascending"] for s in sort]
    if sort:
        view = view.sort(labels, descending=descending, nulls_last=True, maintain_order=True)
    page = view.slice(offset, limit)
    counts = df.null_count().row(0) if nulls else [None] * df.width
    code = name
    if codes:
        code += f".filter({', '.join(codes)})"
    if sort:
        code += f".sort({labels!r}, descending={descending!r}, nulls_last=True)"
    return {
        "name": name,
        "kind": "polars",
        "totalRows": df.height,
        "rows": view.height,
        "offset": offset,
        "columns": [
            {"name": c, "type": str(t), "nulls": n if n is None else int(n)}
            for (c, t), n in zip(df.schema.items(), counts)
        ],
        "index": [str(i) for i in page[row].to_list()],
        "cells": [[_cell(v) for v in r] for r in page.drop(row).iter_rows()],
        "code": code,
    }


def page(request):
    """A page of the frame named in `request` (JSON: name, offset, limit, sort, filters, and
    whether to count nulls)."""
    try:
        r = json.loads(request)
        name = r["name"]
        if type(name) is not str:
            raise FrameError("the frame's name is not text")
        offset = max(0, int(r.get("offset", 0)))
        limit = max(0, min(_MAX_PAGE, int(r.get("limit", 100))))
        sort = [{"column": int(s["column"]), "ascending": bool(s["ascending"])} for s in r.get("sort", [])]
        filters = [{"column": int(f["column"]), "op": str(f["op"]), "value": str(f.get("value", ""))} for f in r.get("filters", [])]
        nulls = bool(r.get("nulls", False))
        df, kind = _frame(name)
        width = df.shape[1]
        for spec in sort + filters:
            if not 0 <= spec["column"] < width:
                raise FrameError(f"{name!r} has no column {spec['column']}")
        build = _pandas_page if kind == "pandas" else _polars_page
        return _Json({"ok": build(df, name, offset, limit, sort, filters, nulls)})
    except FrameError as e:
        return _Json({"error": str(e)})
    except Exception as e:
        return _Json({"error": f"{type(e).__name__}: {_one_line(str(e), 300)}"})


# ---- a frame shown (a cell's result, or display()) names the variable it came from

# The key of an output's metadata where ipybox says which variable holds the frame
# shown: the notebook offers "Open in grid" on it. The window checks the name again (a
# notebook file can say anything here) and asks `page` for it, which only looks it up.
_OUTPUT_KEY = "ipybox"


def _frame_variable(result):
    """The user variable that holds `result` itself, when it is a frame: `df` for a cell
    ending in `df`, nothing for `df.head()` (a new frame no name holds)."""
    if _frame_kind(type(result)) is None:
        return None
    ns, hidden = _user_namespace()
    missing = object()
    for name, value in list(ns.items()):
        if value is result and type(name) is str and name.isidentifier() and not name.startswith("_") and hidden.get(name, missing) is not value:
            return name
    return None


def _tag_frame_results():
    # Every rich output is formatted by the shell's display formatter: a cell's result (the
    # display hook) and `display(df)` alike, so the name is added there, once.
    shell = sys.modules["IPython"].get_ipython()
    formatter = getattr(shell, "display_formatter", None)
    original = getattr(formatter, "format", None)
    if original is None or getattr(original, "_ipybox", False):
        return

    def format(obj, *args, **kwargs):
        format_dict, md_dict = original(obj, *args, **kwargs)
        try:
            name = _frame_variable(obj)
        except Exception:
            name = None
        if name is not None and format_dict:
            md_dict = {**(md_dict or {}), _OUTPUT_KEY: {"frame": name}}
        return format_dict, md_dict

    format._ipybox = True
    formatter.format = format


try:
    _tag_frame_results()
except Exception:
    pass
