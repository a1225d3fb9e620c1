"""IR -> Python for parsers (state machine, extract, select) and deparsers (emit).

A deparser returns the frame as bytes (emitted headers, then the payload).
A parser instance becomes one function ``prs_N(_pk, <params>)``; the
cursor is the local `pos` (bytes) into `_pk.data`, stored back into `_pk.pos`
when the parser stops. It returns the P4 error code it ended with (0 when
accepted). When the parse graph is acyclic (no header-stack loop) and small
enough once unfolded, each transition is followed by the target state's code
in place (straight-line: no state variable, no dispatch, no step count, as a
run can take at most as many steps as there are states); otherwise the
states are branches of a loop on a state number, and a run gives up with
`ParserTimeout` after `MAX_PARSER_STEPS` transitions. Extract slices the header's
bytes into one int (`int.from_bytes`) and shifts the fields out; emit packs
them back the same way. Header layouts must be whole bytes, as in BMv2.

Names defined here: `parser`, `deparser`, `packet_call`, `lookahead_expr`,
`sub_parser_call`, and the limits `MAX_PARSER_STEPS`, `MAX_UNFOLDED_STATES`,
`MAX_SELECT_DEPTH`.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from .codegen import Env, _fail, int_lit, py_name
from .externs import ValueSet
from .fieldwrites import ALL
from .genbase import BlockGenerator, Fn, has_return, is_packet_param

MAX_PARSER_STEPS = 10000
# Straight-line parsers: at most this many state bodies once unfolded (states
# reached along several paths are repeated on each) and this many nested
# selects on one path (Python's indentation limit is 100).
MAX_UNFOLDED_STATES = 256
MAX_SELECT_DEPTH = 40


def _err(bg: BlockGenerator, name: str) -> int:
    return bg.mb.error_codes[name]


def _fail_line(bg: BlockGenerator, code: int | str) -> str:
    return f"_pk.pos = pos; {bg.fn.ret(str(code))}"


def parser(bg: BlockGenerator, inst: ir.ParserInstance) -> str:
    """Generate a parser instance as one function; returns its name."""
    decl = inst.decl
    fname = bg.mb.fresh("prs_" + inst.name)
    env = Env(bg.global_env)
    sig, outs = [], []
    for p in decl.params:
        if is_packet_param(p):
            continue
        pn = bg.mb.fresh("c_" + p.name)
        sig.append(pn)
        env.bind(p.uid, pn, p.type)
        if p.direction in ("out", "inout") and not bg.ti.is_composite(p.type):
            outs.append(pn)
    fn = Fn("parser", env, None, outs, ret_value=True)
    bg.fn_stack.append(fn)
    try:
        fn.w("_d = _pk.data")
        fn.w("_n = len(_d)")
        fn.w("pos = _pk.pos")
        for p in decl.params:
            if p.direction == "out" and bg.ti.is_composite(p.type) and not is_packet_param(p):
                pass  # fresh objects are passed in by the architecture
        for loc in decl.locals:
            if isinstance(loc, ir.VarDecl):
                bg.stmt(loc)
            elif isinstance(loc, ir.ValueSet):
                vs = ValueSet(loc.cp_name, loc.size)
                bg.value_sets[loc.cp_name] = vs
                g = bg.mb.add_global(vs, "VS_" + loc.name)
                env.bind(loc.uid, g)
                env.bind("@vs:" + loc.uid, g)
                env.bind("@vs:" + loc.name, g)
            elif isinstance(loc, ir.ExternInstance):
                bg.instantiate(loc, env)
            elif isinstance(loc, ir.ParserInstance):
                sub = parser(bg, loc)
                key = loc.uid + "@" + fname
                bg.instances[key] = (sub, loc.decl)
                env.bind("@inst:" + loc.uid, key)
                env.bind("@inst:" + loc.name, key)
        index = {s.name: i for i, s in enumerate(decl.states)}
        if "start" not in index:
            raise _fail(decl, "a parser without a start state")
        fn.w("try:")
        fn.ind += 1
        if _unfoldable(decl.states):
            fn.parser_states = {st.name: st for st in decl.states}
            _state(bg, fn.parser_states["start"], index)
        else:
            fn.w(f"_st = {index['start']}")
            fn.w("_g = 0")
            fn.w("while True:")
            fn.ind += 1
            fn.w("_g += 1")
            fn.w(f"if _g > {MAX_PARSER_STEPS}: {_fail_line(bg, _err(bg, 'ParserTimeout'))}")
            for i, st in enumerate(decl.states):
                fn.w(("if" if i == 0 else "elif") + f" _st == {i}:  # {st.name!r}")
                fn.ind += 1
                for s in st.stmts:
                    bg.stmt(s)
                _transition(bg, st.transition, index)
                fn.ind -= 1
            fn.ind -= 1
        fn.ind -= 1
        fn.w("except ParserError as _e:")
        fn.w(f"    {_fail_line(bg, '_e.code')}")
    finally:
        bg.fn_stack.pop()
    bg.finish(f"def {fname}({', '.join(['_pk'] + sig)}):", fn)
    return fname


def _targets(tr: ir.Transition) -> list[str]:
    """The states a transition can go to, once per case naming them (accept/reject left out)."""
    names = [tr.state] if tr.select is None else [c.state for c in tr.cases]
    return [n for n in names if n not in ("accept", "reject")]


def _unfoldable(states: list[ir.ParserState]) -> bool:
    """Is the parse graph acyclic and small enough to be written out straight-line?"""
    by_name = {st.name: st for st in states}
    size: dict[str, int] = {}
    depth: dict[str, int] = {}
    visiting: set[str] = set()

    def walk(name: str) -> bool:
        """Whether the graph from state `name` is acyclic; records its size and depth."""
        if name in size:
            return True
        st = by_name.get(name)
        if st is None or name in visiting:
            return False  # unknown state (reported by the loop form) or a cycle
        visiting.add(name)
        total, deep = 1, 0
        nested = 1 if st.transition.select is not None else 0
        for t in _targets(st.transition):
            if not walk(t):
                return False
            total += size[t]
            deep = max(deep, depth[t] + nested)
        visiting.discard(name)
        size[name] = min(total, MAX_UNFOLDED_STATES + 1)
        depth[name] = deep
        return True

    return walk("start") and size["start"] <= MAX_UNFOLDED_STATES and depth["start"] <= MAX_SELECT_DEPTH


def _state(bg: BlockGenerator, st: ir.ParserState, index: dict[str, int]) -> None:
    """A state's statements and transition, at the current place (straight-line form)."""
    bg.fn.w(f"# state {st.name!r}")
    for s in st.stmts:
        bg.stmt(s)
    _transition(bg, st.transition, index)


def _goto(bg: BlockGenerator, name: str, index: dict[str, int]) -> None:
    fn = bg.fn
    if name == "accept":
        fn.w(_fail_line(bg, 0))
    elif name == "reject":
        fn.w(_fail_line(bg, 0))
    else:
        if name not in index:
            raise _fail(None, f"transition to unknown state '{name}'")
        if fn.parser_states is not None:
            _state(bg, fn.parser_states[name], index)
            return
        fn.w(f"_st = {index[name]}")
        fn.w("continue")


def _keyset_cond(bg: BlockGenerator, ks: ir.Keyset, key: str, width: int) -> str | None:
    """Python condition for one keyset against the key variable; None = always."""
    if ks.kind == "default":
        return None
    v = ks.value
    if isinstance(v, ir.Var):
        vs = bg.fn.env.lookup("@vs:" + v.uid) or bg.fn.env.lookup("@vs:" + v.name)
        if vs is not None:
            return f"{vs}.match({key})"
    if ks.kind == "value_set":
        raise _fail(ks, "a value_set that is not declared in this parser")
    if ks.kind == "exact":
        return f"{key} == {bg.ex(v)}"
    if ks.kind == "mask":
        m = bg.ex(ks.mask)
        return f"({key} & {m}) == ({bg.ex(v)} & {m})"
    if ks.kind == "range":
        return f"{bg.ex(v)} <= {key} <= {bg.ex(ks.hi)}"
    raise _fail(ks, f"keyset kind {ks.kind}")


def _transition(bg: BlockGenerator, tr: ir.Transition, index: dict[str, int]) -> None:
    fn = bg.fn
    if tr.select is None:
        _goto(bg, tr.state, index)
        return
    keys = []
    widths = []
    for e in tr.select:
        t = bg.tmp()
        fn.w(f"{t} = {bg.ex(e)}")
        keys.append(t)
        try:
            widths.append(bg.ti.width(e.type))
        except Exception:
            widths.append(0)
    first = True
    for case in tr.cases:
        conds: list[str] = []
        if len(case.keysets) == 1 and len(keys) > 1:
            ks = case.keysets[0]
            packed = keys[0]
            for k, w in zip(keys[1:], widths[1:], strict=False):
                packed = f"(({packed}) << {w} | {k})"
            c = _keyset_cond(bg, ks, packed, sum(widths))
            if c is not None:
                conds.append(c)
        else:
            for ks, k, w in zip(case.keysets, keys, widths, strict=False):
                c = _keyset_cond(bg, ks, k, w)
                if c is not None:
                    conds.append(c)
        if not conds:
            if first:
                _goto(bg, case.state, index)
                return
            fn.w("else:")
            fn.ind += 1
            _goto(bg, case.state, index)
            fn.ind -= 1
            return
        fn.w(("if " if first else "elif ") + " and ".join(f"({c})" for c in conds) + ":")
        first = False
        fn.ind += 1
        _goto(bg, case.state, index)
        fn.ind -= 1
    line = _fail_line(bg, _err(bg, "NoMatch"))
    if first:
        fn.w(line)
    else:
        fn.w("else:")
        fn.w("    " + line)


def sub_parser_call(bg: BlockGenerator, call: ir.MethodCall) -> None:
    """Emit the call of a sub-parser from a parser: the cursor handed over and back, its error passed on."""
    fn = bg.fn
    code, outs, _ = bg.invoke(call)
    copies = bg.copy_outs
    t = bg.tmp()
    fn.w("_pk.pos = pos")
    fn.w(f"{t} = {code}")
    fn.w("pos = _pk.pos")
    bg.emit_copy_outs(copies)
    if outs:
        bg.write_back(t, outs, 1)
        fn.w(f"if {t}[0]: {_fail_line(bg, t + '[0]')}")
    else:
        fn.w(f"if {t}: {_fail_line(bg, t)}")


# ---------------------------------------------------------------- extract
def _field_value(bg: BlockGenerator, ft: Any, code: str, w: int) -> str:
    rt = bg.ti.resolve(ft)
    if isinstance(rt, ir.BoolType):
        return f"bool({code})"
    if isinstance(rt, ir.BitsType) and rt.signed:
        return f"sx({code}, {w})"
    return code


def _extract(bg: BlockGenerator, call: ir.MethodCall) -> None:
    fn = bg.fn
    target = call.args[0].value
    ht = bg.ti.resolve(target.type)
    if not isinstance(ht, ir.HeaderType):
        raise _fail(call, "extract into a non-header")
    fields = bg.mb.leaf_paths(ht)
    stack = None
    stack_size = 0
    if isinstance(target, ir.Member) and target.name == "next":
        st = bg.ti.resolve(target.expr.type)
        if isinstance(st, ir.StackType):
            stack = bg.ex(target.expr)
            stack_size = st.size
    h = bg.tmp()
    if stack is not None:
        s = bg.tmp()
        fn.w(f"{s} = {stack}")
        fn.w(f"if {s}.n >= {stack_size}: "
             f"{_fail_line(bg, _err(bg, 'StackOutOfBounds'))}")
        fn.w(f"{h} = {s}.h[{s}.n]")
    else:
        fn.w(f"{h} = {bg.ex(target)}")
    var_idx = [i for i, (_, _, ft) in enumerate(fields) if isinstance(bg.ti.resolve(ft), ir.VarbitType)]
    if len(call.args) > 1 or var_idx:
        _extract_varbit(bg, call, h, ht, fields, var_idx)
    else:
        widths = [bg.ti.width(ft) for _, _, ft in fields]
        total = sum(widths)
        if total % 8:
            raise _fail(ht, f"header {ht.name} of {total} bits (not whole bytes)")
        nb = total // 8
        fn.w(f"_e = pos + {nb}")
        fn.w(f"if _e > _n: {_fail_line(bg, _err(bg, 'PacketTooShort'))}")
        x = bg.tmp()
        fn.w(f"{x} = int.from_bytes(_d[pos:_e], 'big')")
        shift = total
        for (_, py, ft), w in zip(fields, widths, strict=False):
            shift -= w
            if shift == 0 and w == total:
                v = x
            elif shift == 0:
                v = f"{x} & {hex((1 << w) - 1)}"
            elif shift + w == total:
                v = f"{x} >> {shift}"
            else:
                v = f"({x} >> {shift}) & {hex((1 << w) - 1)}"
            fn.w(f"{h}.{py} = {_field_value(bg, ft, v, w)}")
        if ht.name in bg.mb.raw_headers:  # never written: the deparser emits these bytes
            fn.w(f"{h}._raw = _d[pos:_e]")
        fn.w(f"{h}._v = True")
        fn.w("pos = _e")
    bg.union_siblings_invalid(target)  # after a failed extract nothing changed: it returned
    if stack is not None:
        fn.w(f"{s}.n += 1")


def _extract_varbit(bg: BlockGenerator, call: ir.MethodCall, h: str, ht: Any, fields: list, var_idx: list[int]) -> None:
    fn = bg.fn
    if len(var_idx) != 1 or len(call.args) < 2:
        raise _fail(call, "extract of a header without exactly one varbit field and its size")
    vi = var_idx[0]
    vt = bg.ti.resolve(fields[vi][2])
    fixed = [0 if i == vi else bg.ti.width(ft) for i, (_, _, ft) in enumerate(fields)]
    wv = bg.tmp()
    fn.w(f"{wv} = {bg.ex(call.args[1].value)}")
    # BMv2 extract_VL order: size not whole bytes, then too short, then over the max
    fn.w(f"if {wv} % 8: {_fail_line(bg, _err(bg, 'ParserInvalidArgument'))}")
    fn.w(f"_e = pos + (({sum(fixed)} + {wv}) >> 3)")
    fn.w(f"if _e > _n: {_fail_line(bg, _err(bg, 'PacketTooShort'))}")
    fn.w(f"if {wv} > {int_lit(vt.max_width)}: {_fail_line(bg, _err(bg, 'HeaderTooShort'))}")
    x = bg.tmp()
    fn.w(f"{x} = int.from_bytes(_d[pos:_e], 'big')")
    after = 0
    for i in range(len(fields) - 1, -1, -1):
        _, py, ft = fields[i]
        if i == vi:
            fn.w(f"{h}.{py} = ({x} >> {after}) & ((1 << {wv}) - 1)")
            fn.w(f"{h}._w_{py} = {wv}")
            continue
        w = fixed[i]
        shift = f"{after} + {wv}" if i < vi else str(after)
        fn.w(f"{h}.{py} = {_field_value(bg, ft, f'({x} >> ({shift})) & {hex((1 << w) - 1)}', w)}")
        after += w
    fn.w(f"{h}._v = True")
    fn.w("pos = _e")


def lookahead_expr(bg: BlockGenerator, call: ir.MethodCall) -> str:
    """The Python expression of a `packet.lookahead<T>()` (bits, bool, header or struct)."""
    t = call.type_args[0] if call.type_args else call.type
    rt = bg.ti.resolve(t)
    if not isinstance(rt, (ir.BitsType, ir.BoolType)):
        if isinstance(rt, (ir.HeaderType, ir.StructType)):
            w = bg.ti.width(rt)
            nb = (w + 7) // 8
            return f"{bg.mb.unpacker(rt)}(lookahead(_d, pos, {nb}, {nb * 8 - w}, -1))"
        raise _fail(call, f"lookahead of {rt}")
    w = bg.ti.width(rt)
    nb = (w + 7) // 8
    code = f"lookahead(_d, pos, {nb}, {nb * 8 - w}, {hex((1 << w) - 1)})"
    return f"bool({code})" if isinstance(rt, ir.BoolType) else code


def packet_call(bg: BlockGenerator, call: ir.MethodCall) -> None:
    """extract/advance/emit as statements."""
    fn = bg.fn
    m = call.method
    if m == "extract":
        if fn.kind != "parser":
            raise _fail(call, "extract outside a parser")
        _extract(bg, call)
    elif m == "advance":
        n = bg.tmp()
        fn.w(f"{n} = {bg.ex(call.args[0].value)}")
        # BMv2: the amount must be whole bytes (else ParserInvalidArgument)
        fn.w(f"if {n} & 7: {_fail_line(bg, _err(bg, 'ParserInvalidArgument'))}")
        fn.w(f"_e = pos + ({n} >> 3)")
        fn.w(f"if _e > _n: {_fail_line(bg, _err(bg, 'PacketTooShort'))}")
        fn.w("_pk.skipped += _e - pos")
        fn.w("pos = _e")
    elif m == "emit":
        if fn.kind != "deparser":
            raise _fail(call, "emit outside a deparser")
        _emit(bg, call.args[0].value)
    elif m == "lookahead":
        fn.w(lookahead_expr(bg, call))
    elif m == "length":
        pass
    else:
        raise _fail(call, f"packet method {m}")


# ---------------------------------------------------------------- deparser
def _emit(bg: BlockGenerator, e: Any, code: str | None = None) -> None:
    fn = bg.fn
    rt = bg.ti.resolve(e.type if hasattr(e, "type") else e)
    code = code if code is not None else bg.ex(e)
    if isinstance(rt, ir.StackType):
        s = bg.tmp()
        fn.w(f"for {s} in {code}.h:")
        fn.ind += 1
        _emit(bg, rt.elem, s)  # headers, or header unions
        fn.ind -= 1
    elif isinstance(rt, ir.HeaderType):
        h = bg.tmp()
        fn.w(f"{h} = {code}")
        _emit_header(bg, rt, h)
    elif isinstance(rt, (ir.StructType, ir.HeaderUnionType)):
        for f in rt.fields:
            _emit(bg, f.type, f"{code}.{py_name(f.name)}")
    else:
        raise _fail(e, "emit of a non-header value")


def _emit_header(bg: BlockGenerator, t: Any, h: str) -> None:
    fn = bg.fn
    rt = bg.ti.resolve(t)
    fields = bg.mb.leaf_paths(rt)
    if any(isinstance(bg.ti.resolve(ft), ir.VarbitType) for _, _, ft in fields):
        spec = tuple((py, None if isinstance(bg.ti.resolve(ft), ir.VarbitType) else bg.ti.width(ft))
                     for _, py, ft in fields)
        g = bg.mb.add_global(spec, "VBS")
        fn.w(f"if {h}._v: _o.append(pack_varbit({h}, {g}))")
        return
    widths = [bg.ti.width(ft) for _, _, ft in fields]
    total = sum(widths)
    if total % 8:
        raise _fail(rt, f"header {rt.name} of {total} bits (not whole bytes)")
    written = bg.mb.header_writes.get(rt.name, set())
    parts = []
    shift = total
    for (name, py, ft), w in zip(fields, widths, strict=False):
        shift -= w
        if name in written or ALL in written or bg.ti.is_signed(ft):
            v = f"({h}.{py} & {hex((1 << w) - 1)})"
        else:  # only ever extracted (or zero): already in range
            v = f"{h}.{py}"
        parts.append(f"({v} << {shift})" if shift else v)
    packed = f"({' | '.join(parts)}).to_bytes({total // 8}, 'big')"
    if rt.name in bg.mb.raw_headers:
        # unchanged since extract: its bytes as received (a header made valid has none)
        fn.w(f"if {h}._v: _r = {h}._raw; _o.append(_r if _r is not None else {packed})")
    else:
        fn.w(f"if {h}._v: _o.append({packed})")


def deparser(bg: BlockGenerator, inst: ir.ControlInstance) -> str:
    """Generate a deparser instance as one function returning the frame; returns its name."""
    decl = inst.decl
    fname = bg.mb.fresh("dep_" + inst.name)
    env = Env(bg.global_env)
    sig = []
    for p in decl.params:
        if is_packet_param(p):
            continue
        pn = bg.mb.fresh("c_" + p.name)
        sig.append(pn)
        env.bind(p.uid, pn, p.type)
    fn = Fn("deparser", env, None)
    bg.fn_stack.append(fn)
    try:
        # the frame is returned as bytes: valid headers' bytes then the payload, one join
        fn.w("_o = []")
        for loc in decl.locals:
            if isinstance(loc, ir.VarDecl):
                bg.stmt(loc)
            elif isinstance(loc, ir.ExternInstance):
                bg.instantiate(loc, env)
        loop = has_return(decl.apply)
        if loop:  # `return` ends the emits, not the function
            fn.w("while True:")
            fn.ind += 1
            fn.inline = True
        bg.block(decl.apply)
        if loop:
            fn.w("break")
            fn.ind -= 1
        fn.w("_o.append(_pk.payload)")
        fn.w("return b''.join(_o)")
    finally:
        bg.fn_stack.pop()
    bg.finish(f"def {fname}({', '.join(['_pk'] + sig)}):", fn)
    return fname


__all__ = ["parser", "deparser", "packet_call", "lookahead_expr", "sub_parser_call",
           "MAX_PARSER_STEPS", "MAX_UNFOLDED_STATES", "MAX_SELECT_DEPTH"]
