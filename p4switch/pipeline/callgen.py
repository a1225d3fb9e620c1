"""IR -> Python for calls: arguments, copy-in/copy-out, and the call itself.

`call_stmt` emits an action, function, sub-parser or sub-control call as a
statement (or a stateless sub-control's body in its place), `call_expr` one
as an expression, `invoke` the Python call with its arguments. Arguments go
in parameter order (`args_for`): scalar out/inout ones come back in the
callee's result tuple (`write_back`), composite ones by reference unless
P4-16 copy-in/copy-out could be observed (then copied, and copied back by
`emit_copy_outs`). Table applies and extern calls go on to `tablegen` and
`externgen`; the block generator `bg` (`genbase.BlockGenerator`) is the
state they share.

Names defined here: `args_for`, `emit_copy_outs`, `write_back`, `call_stmt`,
`invoke`, `call_expr`.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from . import externgen, parsergen
from .codegen import Env, _fail
from .genbase import BlockGenerator, Fn, has_return, is_packet_param, may_exit


def args_for(bg: BlockGenerator, call: ir.MethodCall, params: list[ir.Param],
              callee: Any = None) -> tuple[list[str], list[tuple[Any, int]]]:
    """Python argument codes in parameter order, and (lhs, index-in-result) write-backs.

    Composite arguments go by reference (no copy per call) unless P4-16
    copy-in/copy-out (§6.8) could be observed: an `out` composite starts
    from a fresh (invalid) value; an argument that overlaps another
    out/inout argument, or storage the callee (an action) reaches
    directly, is copied in. Their copy-outs are left in `bg.copy_outs`
    for the caller to emit after the call.
    """
    by_name = {a.name: a for a in call.args}
    codes: list[str] = []
    outs: list[tuple[Any, int]] = []
    bg.copy_outs = []
    k = 0
    picked: list[tuple[ir.Param, Any]] = []
    for i, p in enumerate(params):
        a = by_name.get(p.name)
        if a is None and i < len(call.args) and call.args[i].name in ("", None):
            a = call.args[i]
        picked.append((p, a))
    paths = [(p, _path(a.value)) for p, a in picked
             if a is not None and bg.ti.is_composite(p.type)]
    uses = _uses(bg.mb.uses, callee) if callee is not None else set()
    for p, a in picked:
        if a is None:
            if p.default is not None:
                codes.append(bg.ex(p.default))
                continue
            raise _fail(call, f"call without argument '{p.name}'")
        composite = bg.ti.is_composite(p.type)
        if p.direction in ("out", "inout") and not composite:
            if isinstance(a.value, ir.DontCare) or p.direction == "out":
                codes.append(bg.ti.zero(p.type))
            else:
                codes.append(bg.ex(a.value))
            outs.append((a.value, k))
            k += 1
        elif composite and not isinstance(a.value, ir.DontCare) and \
                _needs_copy(p, a.value, paths, uses):
            t = bg.tmp()
            if p.direction == "out":
                bg.fn.w(f"{t} = {bg.mb.new_expr(p.type)}")
            else:
                bg.fn.w(f"{t} = deep_copy({bg.ex(a.value)})")
            if p.direction in ("out", "inout"):
                bg.copy_outs.append((bg.ex(a.value), t))
            codes.append(t)
        else:
            codes.append(bg.ex(a.value) if not isinstance(a.value, ir.DontCare) else
                         (bg.mb.new_expr(p.type) if composite else bg.ti.zero(p.type)))
    return codes, outs

def _needs_copy(p: ir.Param, value: Any, paths: list, uses: set[str]) -> bool:
    if p.direction == "out":
        return True
    me = _path(value)
    if me is None:
        return False
    if me[0] in uses:
        return True
    for q, other in paths:
        if q is p or other is None:
            continue
        if (p.direction in ("out", "inout") or q.direction in ("out", "inout")) and _overlap(me, other):
            return True
    return False

def emit_copy_outs(bg: BlockGenerator, copies: list[tuple[str, str]]) -> None:
    """Copy composite out/inout arguments back after a call."""
    for dst, t in copies:
        bg.fn.w(f"copy_into({dst}, {t})")

def write_back(bg: BlockGenerator, result: str, outs: list[tuple[Any, int]], offset: int = 0) -> None:
    """Store a call's scalar outs from its result tuple."""
    for lhs, i in outs:
        bg.store(lhs, f"{result}[{i + offset}]")

def call_stmt(bg: BlockGenerator, call: ir.MethodCall, result: bool = False) -> str | None:
    """Emit a call as a statement; with `result`, also return the code of its value.

    Scalar out/inout arguments come back in the callee's result tuple;
    when the callee may `exit`, they come back on the `ExitControl`
    (`outs`) and are written back before it goes on up: `exit` ends the
    blocks but not their copy-out (P4-16 §6.8: the callee's writes to an
    inout argument are seen by the caller).
    """
    fn = bg.fn
    k = call.kind
    if k == ir.CallKind.PARSER_APPLY and fn.kind == "parser":
        parsergen.sub_parser_call(bg, call)
        return None
    if k == ir.CallKind.CONTROL_APPLY and _inline_control(bg, call):
        return None
    if k in (ir.CallKind.ACTION, ir.CallKind.FUNCTION, ir.CallKind.CONTROL_APPLY,
             ir.CallKind.PARSER_APPLY):
        code, outs, offset = invoke(bg, call)
        exits = bool(outs) and _callee_exits(bg, call)
        copies = bg.copy_outs
        value = None
        if copies:
            fn.w("try:")
            fn.ind += 1
        if outs or result:
            t = bg.tmp()
            if exits:
                fn.w("try:")
                fn.w(f"    {t} = {code}")
                fn.w("except ExitControl as _x:")
                fn.ind += 1
                write_back(bg, "_x.outs", outs, offset)
                fn.w("raise")
                fn.ind -= 1
            else:
                fn.w(f"{t} = {code}")
            write_back(bg, t, outs, offset)
            value = f"{t}[0]" if outs and offset else t
        else:
            fn.w(code)
        if copies:
            fn.ind -= 1
            fn.w("finally:")
            fn.ind += 1
            emit_copy_outs(bg, copies)
            fn.ind -= 1
        return value
    if k == ir.CallKind.TABLE_APPLY:
        if bg.apply_inline(call) is None:
            fn.w(call_expr(bg, call, fn.env))
        return None
    if k in (ir.CallKind.EXTERN_FUNCTION, ir.CallKind.EXTERN_METHOD, ir.CallKind.PACKET,
             ir.CallKind.BUILTIN):
        externgen.call_stmt(bg, call)
        return None
    raise _fail(call, f"call kind {k}")

def _callee_exits(bg: BlockGenerator, call: ir.MethodCall) -> bool:
    """May the action or control `call` runs end in `exit`?"""
    if call.kind == ir.CallKind.ACTION:
        ctl = bg.fn.ctl
        decl: Any = (ctl.action_decls.get(call.callee) if ctl is not None else None) or \
            bg.top_actions.get(call.callee)
        return decl is not None and may_exit(decl.body)
    if call.kind == ir.CallKind.CONTROL_APPLY:
        return may_exit(_instance(bg, call)[1].apply)
    return False

def _instance(bg: BlockGenerator, call: ir.MethodCall) -> tuple[str, Any]:
    """(function, declaration) of the parser/control instance a sub-apply calls."""
    fn = bg.fn
    target = call.target
    uid = target.uid if isinstance(target, ir.Var) else call.callee
    entry = fn.env.lookup("@inst:" + uid) or (isinstance(target, ir.Var) and fn.env.lookup("@inst:" + target.name))
    if not entry:
        raise _fail(call, "apply of an unknown instance")
    return bg.instances[entry]

def _inline_control(bg: BlockGenerator, call: ir.MethodCall) -> bool:
    """Emit a stateless sub-control's body in place of a call to it (saves calls per packet)."""
    fn = bg.fn
    if fn.kind != "control" or fn.ctl is None:
        return False
    target = call.target
    uid = target.uid if isinstance(target, ir.Var) else call.callee
    entry = fn.env.lookup("@inst:" + uid) or (isinstance(target, ir.Var) and fn.env.lookup("@inst:" + target.name))
    if not entry:
        return False
    fname, decl = bg.instances[entry]
    got = bg.inlinable.get(fname)
    if got is None:
        return False
    ctx, sig = got
    mark = len(fn.lines)
    codes, outs = args_for(bg, call, [p for p in decl.params if not is_packet_param(p)])
    if outs or len(codes) != len(sig) or bg.copy_outs:
        del fn.lines[mark:]  # copies needed: call it instead
        return False
    for pn, code in zip(sig, codes, strict=True):
        if pn != code:
            fn.w(f"{pn} = {code}")
    loop = has_return(decl.apply)
    sub = Fn("control", ctx.env, ctx)
    sub.lines = fn.lines
    sub.ind = fn.ind
    sub.inline = True
    if loop:
        fn.w(f"while True:  # {decl.name!r}")
        sub.ind += 1
    bg.fn_stack.append(sub)
    try:
        bg.block(decl.apply)
        if loop:
            sub.w("break")
    finally:
        bg.fn_stack.pop()
    return True

def invoke(bg: BlockGenerator, call: ir.MethodCall) -> tuple[str, list[tuple[Any, int]], int]:
    """(python call code, write-backs, index offset of the outs in the result)."""
    k = call.kind
    fn = bg.fn
    if k == ir.CallKind.ACTION:
        ctl = fn.ctl
        if ctl is None:
            raise _fail(call, "an action call outside a control")
        decl = ctl.action_decls.get(call.callee) or bg.top_actions.get(call.callee)
        if decl is None:
            raise _fail(call, f"call of unknown action '{call.callee}'")
        name = bg.action_fn(ctl, decl)
        codes, outs = args_for(bg, call, decl.params, callee=decl)
        return f"{name}({', '.join([ctl.pass_args] + codes)})", outs, 0
    if k == ir.CallKind.FUNCTION:
        fdecl = bg.functions.get(call.callee)
        if fdecl is None:
            raise _fail(call, f"call of unknown function '{call.callee}'")
        name = bg.function_fn(fdecl)
        codes, outs = args_for(bg, call, fdecl.params)
        ret = not isinstance(bg.ti.resolve(fdecl.return_type), ir.VoidType)
        return f"{name}({', '.join(['_pk'] + codes)})", outs, 1 if (ret and outs) else 0
    if k in (ir.CallKind.CONTROL_APPLY, ir.CallKind.PARSER_APPLY):
        target = call.target
        uid = target.uid if isinstance(target, ir.Var) else call.callee
        entry = fn.env.lookup("@inst:" + uid) or (isinstance(target, ir.Var) and fn.env.lookup("@inst:" + target.name))
        if not entry:
            raise _fail(call, "apply of an unknown instance")
        fname, decl = bg.instances[entry]
        codes, outs = args_for(bg, call, [p for p in decl.params if not is_packet_param(p)])
        if k == ir.CallKind.PARSER_APPLY:
            return f"{fname}({', '.join(['_pk'] + codes)})", outs, 1
        return f"{fname}({', '.join(['_pk'] + codes)})", outs, 0
    raise _fail(call, f"call kind {k}")

def call_expr(bg: BlockGenerator, call: ir.MethodCall, env: Env) -> str:
    """A call as a Python expression (tables, actions, functions, externs)."""
    k = call.kind
    if k == ir.CallKind.TABLE_APPLY:
        ctl = bg.fn.ctl
        target = call.target
        names = [call.callee] + ([target.uid, target.name] if isinstance(target, ir.Var) else [])
        for n in names:
            if n and ctl is not None and n in ctl.tables:
                return f"{ctl.tables[n]}({ctl.pass_args})"
        raise _fail(call, "apply of an unknown table")
    if k in (ir.CallKind.ACTION, ir.CallKind.FUNCTION):
        code, outs, _ = invoke(bg, call)
        if outs or bg.copy_outs:
            raise _fail(call, "a call with out arguments inside an expression")
        return code
    return externgen.call_expr(bg, call)

def _path(e: Any) -> tuple | None:
    """An lvalue as (root uid, member/index...) ('*' for a run-time index); None if not one."""
    out: list[Any] = []
    while True:
        if isinstance(e, ir.Member):
            out.append(e.name)
            e = e.expr
        elif isinstance(e, ir.Index):
            out.append(e.index.value if isinstance(e.index, ir.Constant) else "*")
            e = e.expr
        elif isinstance(e, ir.Var):
            return (e.uid, *reversed(out))
        else:
            return None


def _overlap(a: tuple, b: tuple) -> bool:
    """Do two lvalue paths share storage (one is a prefix of the other)?"""
    for x, y in zip(a, b, strict=False):
        if x != y and x != "*" and y != "*":
            return False
    return True


def _uses(cache: dict[int, tuple[Any, set[str]]], decl: Any) -> set[str]:
    """uids of every variable an action/function body names (not its own parameters).

    `cache` is the program build's (`ModuleBuilder.uses`), keyed by id and holding the
    declaration itself, so that no other object can take its id while the entry
    lives: a cache keyed by id alone once handed a later declaration allocated at a
    freed one's address the variables of the one before it.
    """
    key = id(decl)
    hit = cache.get(key)
    if hit is not None:
        return hit[1]
    found: set[str] = set()
    seen: set[int] = set()

    def walk(node: Any) -> None:
        """Add the uid of every variable under `node` to `found`."""
        if isinstance(node, (list, tuple)):
            for x in node:
                walk(x)
            return
        if not hasattr(node, "__dataclass_fields__") or id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, ir.Var):
            found.add(node.uid)
        for name in node.__dataclass_fields__:
            if name in ("type", "coord", "annotations"):
                continue
            walk(getattr(node, name, None))

    walk(getattr(decl, "body", None))
    own = {p.uid for p in getattr(decl, "params", ())}
    got = found - own
    cache[key] = (decl, got)
    return got


__all__ = ["args_for", "emit_copy_outs", "write_back", "call_stmt", "invoke", "call_expr"]
