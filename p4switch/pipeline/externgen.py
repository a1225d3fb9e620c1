"""IR -> Python for extern calls: v1model functions, extern methods, header builtins.

Field lists (hash, checksum, digest data) are flattened to leaves; a hash input
is those leaves packed MSB-first as BMv2 packs them, skipping the fields of
invalid headers. The IPv4-style checksum (csum16 over whole 16-bit words) is
special-cased: the words are summed straight from the fields, no bytes built.

Extern instances (counter, register, meter, direct counter/meter, action
profile/selector, Checksum16) get their run-time objects at generation time
(`instantiate`), bound into the module's globals.

Names defined here: `instantiate`, `call_stmt`, `call_expr`, `leaves`,
`packed_bytes`, `MAX_ARRAY_SIZE`.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from . import hashes, parsergen
from .actionprofile import ActionProfile
from .codegen import Env, _fail, int_lit, py_name
from .externs import CounterArray, MeterArray, RegisterArray
from .genbase import BlockGenerator

# Counter, register and meter arrays are allocated whole when a program loads.
MAX_ARRAY_SIZE = 1 << 24


def _arg(call: ir.MethodCall, i: int, *names: str) -> Any:
    for a in call.args:
        if a.name in names:
            return a.value
    if i < len(call.args):
        return call.args[i].value
    raise _fail(call, f"{call.method} without argument {names[0] if names else i}")


# ------------------------------------------------------------------ instances
def instantiate(bg: BlockGenerator, inst: ir.ExternInstance, env: Env) -> None:
    """Create the run-time object of an extern instance and bind its uid."""
    name = inst.type.name
    cp = inst.cp_name
    known = bg.extern_globals.get(cp)
    if known is not None:  # one object per control-plane name (top-level externs shared)
        env.bind(inst.uid, known)
        env.bind("@extern:" + inst.uid, name)
        bg.extern_decls[inst.uid] = inst
        return
    args = [_const_arg(a) for a in inst.args]
    obj: Any
    if name == "counter":
        obj = CounterArray(cp, _array_size(inst, args))
    elif name == "register":
        width = bg.ti.width(inst.type.type_args[0]) if inst.type.type_args else 32
        obj = RegisterArray(cp, _array_size(inst, args), width)
    elif name == "meter":
        obj = MeterArray(cp, _array_size(inst, args), bytes_=_enum_name(inst.args[1]) == "bytes")
    elif name == "direct_counter":
        bg.direct_counters.add(cp)
        obj = cp
    elif name == "direct_meter":
        bg.direct_meters[cp] = _enum_name(inst.args[0]) == "bytes"
        obj = cp
    elif name in ("action_profile", "action_selector"):
        if name == "action_selector":
            algo = _enum_name(inst.args[0])
            obj = ActionProfile(cp, int(args[1]), selector=True, algorithm=algo)
        else:
            obj = ActionProfile(cp, int(args[0]))
        bg.profiles[cp] = obj
    elif name == "Checksum16":
        obj = cp
    else:
        raise _fail(inst, f"extern '{name}'")
    if name in ("counter", "register", "meter"):
        bg.externs[cp] = obj
    bg.extern_decls[inst.uid] = inst
    g = bg.mb.add_global(obj, "E_" + inst.name)
    bg.extern_globals[cp] = g
    env.bind(inst.uid, g)
    env.bind("@extern:" + inst.uid, name)


def _array_size(inst: ir.ExternInstance, args: list[Any]) -> int:
    """The size of a counter, register or meter array, which is allocated whole."""
    size = args[0] if args else None
    if type(size) is not int or not 0 <= size <= MAX_ARRAY_SIZE:
        raise _fail(inst, f"{inst.type.name} of size {size!r} (at most {MAX_ARRAY_SIZE})")
    return size


def _const_arg(e: Any) -> Any:
    if isinstance(e, ir.Constant):
        return e.value
    if isinstance(e, ir.BoolLit):
        return e.value
    if isinstance(e, ir.EnumMember):
        return e.member
    return None


def _enum_name(e: Any) -> str:
    if isinstance(e, ir.EnumMember):
        return e.member
    raise _fail(e, "a non-constant enum argument")


# ------------------------------------------------------------------ leaves
def leaves(bg: BlockGenerator, e: Any, code: str | None = None, hdr: str | None = None,
           out: list | None = None, temps: dict | None = None) -> list[tuple[str, int | None, str | None]]:
    """(python code, width (None: varbit), owning header temp or None) for each field."""
    out = [] if out is None else out
    temps = {} if temps is None else temps
    if code is None and isinstance(e, ir.Member) and \
            isinstance(bg.ti.resolve(e.expr.type), ir.HeaderType):
        base = bg.ex(e.expr)
        h = temps.get(base)
        if h is None:
            h = temps[base] = bg.tmp()
            bg.fn.w(f"{h} = {base}")
        ft = bg.ti.resolve(e.type)
        if isinstance(ft, ir.StructType):  # a struct-typed header field: its bit fields
            for _, path, lt in bg.mb.leaf_paths(ft):
                out.append((f"{h}.{py_name(e.name)}.{path}", bg.ti.width(lt), h))
            return out
        out.append((f"{h}.{py_name(e.name)}", bg.ti.width(e.type), h))
        return out
    t = bg.ti.resolve(e.type if not isinstance(e, (ir.HeaderType, ir.StructType, ir.BitsType))
                      and hasattr(e, "type") else e)
    if code is None:
        if isinstance(e, ir.ListExpr):
            for item in e.items:
                leaves(bg, item, out=out, temps=temps)
            return out
        if isinstance(e, ir.StructExpr) and not isinstance(t, ir.HeaderType):
            for _, v in e.fields:
                leaves(bg, v, out=out, temps=temps)
            return out
        code = bg.ex(e)
    if isinstance(t, ir.HeaderType):
        h = bg.tmp()
        bg.fn.w(f"{h} = {code}")
        for _, path, lt in bg.mb.leaf_paths(t):
            ft = bg.ti.resolve(lt)
            w = None if isinstance(ft, ir.VarbitType) else bg.ti.width(ft)
            out.append((f"{h}.{path}", w, h))
        return out
    if isinstance(t, (ir.StructType, ir.HeaderUnionType)):
        for f in t.fields:
            leaves(bg, f.type, f"{code}.{py_name(f.name)}", hdr, out)
        return out
    if isinstance(t, ir.StackType):
        for i in range(t.size):
            leaves(bg, t.elem, f"{code}.h[{i}]", hdr, out)
        return out
    if isinstance(t, ir.TupleType):
        for i, et in enumerate(t.elems):
            leaves(bg, et, f"{code}[{i}]", hdr, out)
        return out
    out.append((code, bg.ti.width(t), hdr))
    return out


def _pairs(lv: list[tuple[str, int | None, str | None]]) -> str:
    """A tuple expression of (value, width) pairs, fields of invalid headers left out."""
    parts: list[str] = []
    i = 0
    while i < len(lv):
        code, w, h = lv[i]
        if h is None:
            parts.append(f"({code}, {w}), ")
            i += 1
            continue
        grp = []
        while i < len(lv) and lv[i][2] == h:
            c, wd, _ = lv[i]
            wexpr = wd if wd is not None else f"{c.rsplit('.', 1)[0]}._w_{c.rsplit('.', 1)[1]}"
            grp.append(f"({c}, {wexpr})")
            i += 1
        parts.append(f"*(({', '.join(grp)},) if {h}._v else ()), ")
    return "(" + "".join(parts) + ")"


def packed_bytes(lv: list[tuple[str, int | None, str | None]]) -> str:
    """A Python expression for the BMv2 hash input of the leaves, as bytes.

    Fields are OR-ed into one int per run of fields of the same header; runs
    of invalid headers contribute nothing (BMv2 skips them).
    """
    if any(w is None for _, w, _ in lv):
        return f"pack_fields({_pairs(lv)})"
    groups: list[tuple[str | None, list[tuple[str, int]]]] = []
    fixed = [(code, w, h) for code, w, h in lv if w is not None]  # all of lv: widths known
    for code, w, h in fixed:
        if groups and groups[-1][0] == h:
            groups[-1][1].append((code, w))
        else:
            groups.append((h, [(code, w)]))

    def as_int(fields: list[tuple[str, int]]) -> tuple[str, int]:
        """(code of one int holding `fields` packed, high bits first; total width)."""
        total = sum(w for _, w in fields)
        parts, shift = [], total
        for code, w in fields:
            shift -= w
            v = f"({code} & {hex((1 << w) - 1)})"
            parts.append(f"({v} << {shift})" if shift else v)
        return " | ".join(parts), total

    if all(h is None for h, _ in groups):
        expr, total = as_int([f for _, fs in groups for f in fs])
        pad = (-total) % 8
        if pad:
            expr = f"(({expr}) << {pad})"
        return f"({expr}).to_bytes({(total + pad) // 8}, 'big')"
    items = []
    for h, fs in groups:
        expr, total = as_int(fs)
        if h is None:
            items.append(f"({expr}, {total})")
        else:
            items.append(f"(({expr}, {total}) if {h}._v else (0, 0))")
    return f"pack_groups(({', '.join(items)},))"


def _csum16_fast(lv: list[tuple[str, int | None, str | None]]) -> str | None:
    if any(w is None for _, w, _ in lv):
        return None
    terms: list[str] = []
    pos = 0
    fixed = [(code, w) for code, w, _ in lv if w is not None]  # all of lv: widths known
    for code, w in fixed:
        start, end = pos, pos + w
        for k in range(start // 16, (end - 1) // 16 + 1):
            ws, we = 16 * k, 16 * k + 16
            s, e = max(start, ws), min(end, we)
            term = code
            rshift = end - e
            if rshift:
                term = f"({term} >> {rshift})"
            if s > start:
                term = f"({term} & {hex((1 << (e - s)) - 1)})"
            if we - e:
                term = f"({term} << {we - e})"
            terms.append(term)
        pos = end
    return " + ".join(terms) or "0"


def _checksum_code(bg: BlockGenerator, algo: str, data: Any, payload: bool) -> str:
    """Emit lines computing the checksum/hash of `data`; returns the temp holding it."""
    fn = bg.fn
    lv = leaves(bg, data)
    res = bg.tmp()
    alg = bg.mb.globals.setdefault("__alg__", {})
    if algo not in hashes.ALGORITHMS:
        raise _fail(data, f"hash algorithm '{algo}'")
    g = alg.get(algo)
    if g is None:
        g = alg[algo] = bg.mb.add_global(hashes.ALGORITHMS[algo], "H_" + algo)
    generic = f"{g}({packed_bytes(lv)}{' + _pk.payload' if payload else ''})"
    fast = _csum16_fast(lv) if algo == "csum16" and not payload else None
    if fast is None:
        fn.w(f"{res} = {generic}")
        return res
    hdrs = sorted({h for _, _, h in lv if h is not None})
    if hdrs:
        fn.w(f"if {' and '.join(h + '._v' for h in hdrs)}:")
        fn.ind += 1
    fn.w(f"{res} = {fast}")
    fn.w(f"{res} = ({res} & 0xffff) + ({res} >> 16)")
    fn.w(f"{res} = ~(({res} & 0xffff) + ({res} >> 16)) & 0xffff")
    if hdrs:
        fn.ind -= 1
        fn.w("else:")
        fn.w(f"    {res} = {generic}")
    return res


def _data_field_list(bg: BlockGenerator, data: Any) -> int:
    """A field list for the deprecated `resubmit(data)` / `recirculate(data)` / `clone3(.., data)`.

    p4c-bm2-ss turns `data` into a BMv2 field list: the user-metadata fields
    it names are copied into the new packet (read at the end of the block).
    Returns a synthetic field-list index (above the bit<8> @field_list ones).
    """
    paths: list[tuple[str, ...]] = []
    meta_t = bg.meta_type_name()

    def walk(e: Any) -> None:
        """Add the user-metadata field paths expression `e` names to `paths`."""
        if isinstance(e, ir.ListExpr):
            for x in e.items:
                walk(x)
            return
        if isinstance(e, ir.StructExpr):
            for _, v in e.fields:
                walk(v)
            return
        names: list[str] = []
        x = e
        while isinstance(x, ir.Member):
            names.append(py_name(x.name))
            x = x.expr
        if isinstance(x, ir.Var) and getattr(bg.ti.resolve(x.type), "name", None) == meta_t:
            t = bg.ti.resolve(e.type)
            paths.extend(_expand(bg, t, tuple(reversed(names))))

    walk(data)
    idx = 256 + len(bg.extra_field_lists)
    bg.extra_field_lists[idx] = paths
    return idx


def _expand(bg: BlockGenerator, t: Any, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    """A metadata path as its scalar leaves (a nested struct copies every field)."""
    if isinstance(t, ir.StructType):
        out: list[tuple[str, ...]] = []
        for f in t.fields:
            out.extend(_expand(bg, bg.ti.resolve(f.type), path + (py_name(f.name),)))
        return out
    return [path] if path else []


def _enum_member(e: Any) -> str:
    if isinstance(e, ir.EnumMember):
        return e.member
    raise _fail(e, "a non-constant enum argument")


def _out_current(bg: BlockGenerator, lhs: Any) -> str:
    return "0" if isinstance(lhs, ir.DontCare) else bg.ex(lhs)


# ------------------------------------------------------------------ statements
def call_stmt(bg: BlockGenerator, call: ir.MethodCall) -> None:
    """Emit an extern, packet or header-builtin call as a statement."""
    k = call.kind
    if k == ir.CallKind.PACKET:
        parsergen.packet_call(bg, call)
    elif k == ir.CallKind.BUILTIN:
        _builtin_stmt(bg, call)
    elif k == ir.CallKind.EXTERN_METHOD:
        _method_stmt(bg, call)
    else:
        _function_stmt(bg, call)


def _builtin_stmt(bg: BlockGenerator, call: ir.MethodCall) -> None:
    fn = bg.fn
    m = call.method
    target = call.target
    if fn.kind != "parser":
        bg.validity_changes = True
    if m in ("setValid", "setInvalid"):
        valid = m == "setValid"
        if valid and isinstance(target, ir.Member):
            parent_t = bg.ti.resolve(target.expr.type)
            if isinstance(parent_t, ir.HeaderUnionType):
                parent = bg.ex(target.expr)
                for f in parent_t.fields:
                    if f.name != target.name:
                        fn.w(f"{parent}.{py_name(f.name)}._v = False")
        h = bg.ex(target)
        nb = _header_bytes(bg, target)
        if nb and fn.kind != "parser":
            # BMv2 add_header/remove_header move the packet-length register
            # (egress packet_length, byte counters) by the header's size
            fn.w(f"if {'not ' if valid else ''}{h}._v: _pk.length {'+' if valid else '-'}= {nb}")
        fn.w(f"{h}._v = {valid}")
    elif m in ("push_front", "pop_front"):
        fn.w(f"{bg.ex(target)}.{m}({bg.ex(call.args[0].value)})")
    elif m in ("isValid", "minSizeInBits", "minSizeInBytes"):
        pass  # no side effect
    else:
        raise _fail(call, f"method {m}")


def _header_bytes(bg: BlockGenerator, target: Any) -> int:
    t = bg.ti.resolve(target.type)
    if not isinstance(t, ir.HeaderType):
        return 0
    return bg.ti.width(t) // 8  # varbit fields left out


def _method_stmt(bg: BlockGenerator, call: ir.MethodCall) -> None:
    fn = bg.fn
    kind, g = bg.extern_kind(call.target)
    m = call.method
    if kind == "counter" and m == "count":
        # in line (no call per count): the arrays' lists are bound as globals
        obj = bg.mb.globals[g]
        gp = bg.mb.add_global(obj.packets, "CP")
        gb = bg.mb.add_global(obj.bytes, "CB")
        i = bg.tmp()
        fn.w(f"{i} = {bg.ex(_arg(call, 0, 'index'))}")
        fn.w(f"if 0 <= {i} < {obj.size}: {gp}[{i}] += 1; {gb}[{i}] += _pk.length")
    elif kind == "direct_counter" and m == "count":
        pass  # BMv2 counts every hit of the owning table
    elif kind == "meter" and m == "execute_meter":
        lhs = _arg(call, 1, "result")
        bg.store(lhs, f"{g}.execute({bg.ex(_arg(call, 0, 'index'))}, _pk, {_out_current(bg, lhs)})")
    elif kind == "direct_meter" and m == "read":
        lhs = _arg(call, 0, "result")
        bg.store(lhs, f"(_pk.meter_colors or {{}}).get({g}, 0)")
    elif kind == "register" and m == "read":
        lhs = _arg(call, 0, "result")
        bg.store(lhs, f"{g}.read({bg.ex(_arg(call, 1, 'index'))}, {_out_current(bg, lhs)})")
    elif kind == "register" and m == "write":
        fn.w(f"{g}.write({bg.ex(_arg(call, 0, 'index'))}, {bg.ex(_arg(call, 1, 'value'))})")
    else:
        fn.w(call_expr(bg, call))


def _function_stmt(bg: BlockGenerator, call: ir.MethodCall) -> None:
    fn = bg.fn
    m = call.method
    if m == "mark_to_drop":
        sm = bg.ex(_arg(call, 0, "standard_metadata")) if call.args else "_pk.sm"
        fn.w(f"{sm}.egress_spec = DROP_PORT")
        fn.w(f"{sm}.mcast_grp = 0")
    elif m == "hash":
        lhs = _arg(call, 0, "result")
        algo = _enum_member(_arg(call, 1, "algo"))
        h = _checksum_code(bg, algo, _arg(call, 3, "data"), False)
        base = bg.ex(_arg(call, 2, "base"))
        mx = _arg(call, 4, "max")
        w = bg.ti.width(lhs.type) if not isinstance(lhs, ir.DontCare) else 64
        if isinstance(mx, ir.Constant):
            val = f"({base} + {h} % {int_lit(mx.value)})" if mx.value else f"{base}"
        else:
            m_ = bg.tmp()
            fn.w(f"{m_} = {bg.ex(mx)}")
            val = f"(({base} + {h} % {m_}) if {m_} else {base})"
        bg.store(lhs, f"({val} & {hex((1 << w) - 1)})")
    elif m == "random":
        lhs = _arg(call, 0, "result")
        bg.store(lhs, f"rand_range({bg.ex(_arg(call, 1, 'lo'))}, {bg.ex(_arg(call, 2, 'hi'))})")
    elif m in ("verify_checksum", "verify_checksum_with_payload",
               "update_checksum", "update_checksum_with_payload"):
        cond = bg.ex(_arg(call, 0, "condition"))
        algo = _enum_member(_arg(call, 3, "algo"))
        target = _arg(call, 2, "checksum")
        fn.w(f"if {cond}:")
        fn.ind += 1
        c = _checksum_code(bg, algo, _arg(call, 1, "data"), m.endswith("_with_payload"))
        if m.startswith("verify"):
            fn.w(f"if {c} != {bg.ex(target)}: _pk.cksum_err = 1")
        else:
            w = bg.ti.width(target.type)
            bg.store(target, f"{c} & {hex((1 << w) - 1)}")
        fn.ind -= 1
    elif m == "digest":
        data = _arg(call, 1, "data")
        dt = bg.ti.resolve(data.type)
        name = (getattr(dt, "name", "") or (call.type_args and getattr(call.type_args[0], "name", ""))
                or bg.mb.unnamed_digests().get(str(call.coord), "digest"))
        lv = leaves(bg, data)
        # the values at the call: p4c copies a digest's data to temporaries there, and BMv2
        # sends what those hold at the end of ingress (the last digest() of a packet wins)
        fn.w(f"_pk.digests = ({name!r}, ({''.join(c + ', ' for c, _, _ in lv)}))")
    elif m == "clone":
        fn.w(f"_pk.clone_session = {bg.ex(_arg(call, 1, 'session'))}")
        fn.w("_pk.clone_fl = None")
    elif m == "clone3":
        fn.w(f"_pk.clone_session = {bg.ex(_arg(call, 1, 'session'))}")
        fl = _data_field_list(bg, call.args[2].value) if len(call.args) > 2 else None
        fn.w(f"_pk.clone_fl = {fl}")
    elif m == "clone_preserving_field_list":
        fn.w(f"_pk.clone_session = {bg.ex(_arg(call, 1, 'session'))}")
        fn.w(f"_pk.clone_fl = {bg.ex(_arg(call, 2, 'index'))}")
    elif m == "resubmit":
        fl = _data_field_list(bg, call.args[0].value) if call.args else -1
        fn.w(f"_pk.resubmit_fl = {fl}")
    elif m == "resubmit_preserving_field_list":
        fn.w(f"_pk.resubmit_fl = {bg.ex(_arg(call, 0, 'index'))}")
    elif m == "recirculate":
        fl = _data_field_list(bg, call.args[0].value) if call.args else -1
        fn.w(f"_pk.recirc_fl = {fl}")
    elif m == "recirculate_preserving_field_list":
        fn.w(f"_pk.recirc_fl = {bg.ex(_arg(call, 0, 'index'))}")
    elif m == "truncate":
        fn.w(f"_pk.truncate = {bg.ex(_arg(call, 0, 'length'))}")
    elif m in ("assert", "assume"):
        where = str(call.coord)
        fn.w(f"if not {bg.ex(_arg(call, 0, 'check'))}: raise PipelineError({(m + ' failed at ' + where)!r})")
    elif m == "log_msg":
        msg = bg.ex(_arg(call, 0, "msg"))
        if len(call.args) > 1:
            lv = leaves(bg, _arg(call, 1, "data"))
            fn.w(f"if LOG_ON[0]: log_msg({msg}, ({''.join(c + ', ' for c, _, _ in lv)}))")
        else:
            fn.w(f"if LOG_ON[0]: log_msg({msg}, ())")
    elif m == "verify":
        if fn.kind != "parser":
            raise _fail(call, "verify outside a parser")
        cond = bg.ex(_arg(call, 0, "check"))
        err = bg.ex(_arg(call, 1, "toSignal"))
        fn.w(f"if not {cond}: _pk.pos = pos; {fn.ret(err)}")
    else:
        fn.w(call_expr(bg, call))


# ------------------------------------------------------------------ expressions
def call_expr(bg: BlockGenerator, call: ir.MethodCall) -> str:
    """An extern, packet or header-builtin call as a Python expression."""
    k = call.kind
    m = call.method
    if k == ir.CallKind.BUILTIN:
        target = call.target
        tt = bg.ti.resolve(target.type) if target is not None else None
        if m == "isValid":
            if isinstance(tt, ir.HeaderUnionType):
                base = bg.ex(target)
                return "(" + " or ".join(f"{base}.{py_name(f.name)}._v" for f in tt.fields) + ")"
            return f"{bg.ex(target)}._v"
        if m in ("minSizeInBits", "minSizeInBytes"):
            w = bg.ti.width(tt)
            return str(w if m == "minSizeInBits" else (w + 7) // 8)
        raise _fail(call, f"method {m} in an expression")
    if k == ir.CallKind.PACKET:
        if m == "lookahead":
            return parsergen.lookahead_expr(bg, call)
        if m == "length":
            return "len(_pk.data)"
        raise _fail(call, f"packet method {m} in an expression")
    if k == ir.CallKind.EXTERN_METHOD:
        kind, g = bg.extern_kind(call.target)
        if kind == "Checksum16" and m == "get":
            return _checksum_code(bg, "csum16", _arg(call, 0, "data"), False)
        raise _fail(call, f"{kind}.{m}")
    raise _fail(call, f"extern {m}")


__all__ = ["instantiate", "call_stmt", "call_expr", "leaves", "packed_bytes", "MAX_ARRAY_SIZE"]
